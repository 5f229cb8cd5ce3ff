package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// Watch fan-out: cfg.watchers watchers of the namespace, then one update at a time;
// the latency of a write is from just before the update call until the last
// watcher has received its event (so it includes the write itself). Each round
// makes cfg.watchWrites writes and gives a p50 and a p99; the rounds of the
// contenders alternate, and the medians over the rounds are reported.

// watchRig is one contender: start begins k watchers, each calling hit once per
// modification it receives, and write makes the i-th update.
type watchRig struct {
	col   string
	start func(k int, hit func()) (stop func(), err error)
	write func(i int) error
	close func()
}

type watchResult struct{ p50, p99 float64 }

const rowWatch = "watch"

func oursWatchRig(ctx context.Context) (*watchRig, error) {
	be := memdb.New(memdb.Options{})
	s, err := store.New(be, store.Options{})
	if err != nil {
		return nil, err
	}
	obj := oursInstance(prefixUpdate, 0)
	if err := s.Create(ctx, obj, store.CreateOptions{}); err != nil {
		return nil, err
	}
	names := displayNames()
	return &watchRig{col: colOursMem,
		start: func(k int, hit func()) (func(), error) {
			var ws []*store.Watcher
			stop := func() {
				for _, w := range ws {
					w.Stop()
				}
			}
			for i := 0; i < k; i++ {
				w, err := s.Watch(ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{
					Namespace: benchNamespace, ResourceVersion: obj.ResourceVersion})
				if err != nil {
					stop()
					return nil, err
				}
				ws = append(ws, w)
				go func() {
					for ev := range w.ResultChan() {
						if ev.Type == store.Modified {
							hit()
						}
					}
				}()
			}
			return stop, nil
		},
		write: func(i int) error {
			obj.Spec.DisplayName = names[i%len(names)]
			return s.Update(ctx, obj, store.UpdateOptions{})
		},
		close: func() { _ = s.Close(); _ = be.Close() },
	}, nil
}

func fakeWatchRig(ctx context.Context, col string, plain bool) (*watchRig, error) {
	c := newFakeClient(plain)
	obj := k8sInstance(prefixUpdate, 0)
	if err := c.Create(ctx, obj); err != nil {
		return nil, err
	}
	names := displayNames()
	return &watchRig{col: col,
		start: func(k int, hit func()) (func(), error) {
			var ws []watch.Interface
			stop := func() {
				for _, w := range ws {
					w.Stop()
				}
			}
			for i := 0; i < k; i++ {
				w, err := c.Watch(ctx, &VirtualClusterInstanceList{}, client.InNamespace(benchNamespace))
				if err != nil {
					stop()
					return nil, err
				}
				ws = append(ws, w)
				go func() {
					for ev := range w.ResultChan() {
						if ev.Type == watch.Modified {
							hit()
						}
					}
				}()
			}
			return stop, nil
		},
		write: func(i int) error {
			obj.Spec.DisplayName = names[i%len(names)]
			return c.Update(ctx, obj)
		},
		close: func() {},
	}, nil
}

// watchRound starts the watchers, makes writes updates and returns the p50 and p99
// of their delivery latencies in ns.
func watchRound(r *watchRig, watchers, writes int, next *int) (watchResult, error) {
	var wg sync.WaitGroup
	stop, err := r.start(watchers, wg.Done)
	if err != nil {
		return watchResult{}, err
	}
	defer stop()
	lat := make([]float64, 0, writes)
	for i := 0; i < writes; i++ {
		wg.Add(watchers)
		t0 := time.Now()
		if err := r.write(*next); err != nil {
			return watchResult{}, err
		}
		*next++
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			return watchResult{}, errors.New("watch: an event did not reach every watcher within 30s")
		}
		lat = append(lat, float64(time.Since(t0).Nanoseconds()))
	}
	return watchResult{p50: percentile(lat, 50), p99: percentile(lat, 99)}, nil
}
