package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The fake client's rows of the scale table: controller-runtime's fake client with
// its default tracker loads the same objects (the typed mirror of scaleObject) with
// 16 writers, without a watcher: its watchers have a fixed buffer of 100 events and
// panic the process ("channel full") when a reader falls further behind, which a
// reader of every event did at 100k objects here. It has no pages (a list with
// Limit returns every item), so its only list of everything is the one-response
// column.
// It keeps every object decoded on the heap; a load that takes more than
// -scale-fake-heap of heap stops there and its row says so, rather than take the
// machine's memory.

var scaleFakeHeap = flag.Int64("scale-fake-heap", 12<<30, "fake-client contender: give up once its heap passes this many bytes")

// scaleFake is the fake client's contender.
const scaleFake = "fake-client"

func scaleFakeClient(ctx context.Context, res *scaleResult, heap0, rss0 float64) error {
	n := res.N
	c := newFakeClient(false)

	// The heap guard: the load stops once the heap passes -scale-fake-heap.
	var over atomic.Int64
	guardDone := make(chan struct{})
	stopGuard := make(chan struct{})
	go func() {
		defer close(guardDone)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-stopGuard:
				return
			case <-time.After(200 * time.Millisecond):
			}
			metrics.Read(sample)
			if h := int64(sample[0].Value.Uint64()); h > *scaleFakeHeap {
				over.Store(h)
				return
			}
		}
	}()
	var loaded atomic.Int64
	rate, err := parallelLoad(n, func(i int) error {
		if h := over.Load(); h != 0 {
			return fmt.Errorf("gave up after %d objects: heap %.1f GiB is over -scale-fake-heap (%.1f GiB)",
				loaded.Load(), float64(h)/(1<<30), float64(*scaleFakeHeap)/(1<<30))
		}
		o := k8sInstance("obj-", i)
		o.Namespace = scaleNS(i)
		if err := c.Create(ctx, o); err != nil {
			return err
		}
		loaded.Add(1)
		return nil
	})
	close(stopGuard)
	<-guardDone
	if err != nil {
		return err
	}
	res.LoadPerSec = rate
	if err := recordLoaded(res, heap0, rss0); err != nil {
		return err
	}

	r := rand.New(rand.NewSource(1))
	res.GetNs, err = timePer(2000, func(int) error {
		i := r.Intn(n)
		return c.Get(ctx, client.ObjectKey{Namespace: scaleNS(i), Name: objName("obj-", i)}, &VirtualClusterInstance{})
	})
	if err != nil {
		return err
	}
	res.WholeListNsPer, err = timePer(1, func(int) error {
		l := &VirtualClusterInstanceList{}
		if err := c.List(ctx, l); err != nil {
			return err
		}
		if len(l.Items) != n {
			return fmt.Errorf("listed %d of %d", len(l.Items), n)
		}
		return nil
	})
	res.WholeListNsPer /= float64(n)
	if err != nil {
		return err
	}
	res.SelectNs, err = timePer(3, func(int) error {
		l := &VirtualClusterInstanceList{}
		if err := c.List(ctx, l, client.MatchingLabels{selectorKey: selectorValue}); err != nil {
			return err
		}
		if len(l.Items) != (n+99)/100 {
			return fmt.Errorf("selected %d of %d", len(l.Items), n)
		}
		return nil
	})
	return err
}
