package storetest

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func concurrencyCases() []storeCase {
	return []storeCase{
		{name: "REL-OCC-COUNTER 32 goroutines x 200 increments through resourceVersion preconditions lose nothing", run: testOCCCounter},
		{name: "REL-MODEL-SIM random operations agree with a reference map", run: testModelSim},
		{name: "REL-WATCH-PROPS watches under concurrent writers are ordered, unique, gap-free and resumable", run: testWatchProps},
	}
}

func testOCCCounter(t *testing.T, h *Harness) {
	workers, increments := 32, 200
	if raceEnabled {
		increments = 10 // the full load runs without the race detector (see .ci/run)
	}
	h.MustCreate(Project("counter"))
	var conflicts atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < increments; i++ {
				for {
					p := Project("")
					if err := h.S.Get(h.Ctx, "", "counter", p, store.GetOptions{}); err != nil {
						assert.NoError(t, err) // not require: this is not the test's goroutine
						return
					}
					n, _ := strconv.Atoi(p.Spec.Description)
					p.Spec.Description = strconv.Itoa(n + 1)
					err := h.S.Update(h.Ctx, p, store.UpdateOptions{})
					if err == nil {
						break
					}
					if !errors.Is(err, resource.ErrConflict) {
						assert.NoError(t, err)
						return
					}
					conflicts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	p := Project("")
	require.NoError(t, h.S.Get(h.Ctx, "", "counter", p, store.GetOptions{}))
	assert.Equal(t, strconv.Itoa(workers*increments), p.Spec.Description, "lost updates")
	assert.EqualValues(t, 1+workers*increments, p.Generation)
	t.Logf("RESULT name=REL-OCC-COUNTER workers=%d increments=%d race=%t expected=%d got=%s conflicts=%d retries_per_success=%.2f wall=%s",
		workers, increments, raceEnabled, workers*increments, p.Spec.Description, conflicts.Load(),
		float64(conflicts.Load())/float64(workers*increments), time.Since(start).Round(time.Millisecond))
}

// modelEntry is what the reference map knows of one object.
type modelEntry struct {
	rv    string
	value string
}

func testModelSim(t *testing.T, h *Harness) {
	const workers, ops, keys = 4, 750, 12
	var divergences atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w) + 1))
			model := map[string]*modelEntry{}
			diverge := func(format string, args ...any) {
				divergences.Add(1)
				assert.Failf(t, "store and model diverge", "worker %d: "+format, append([]any{w}, args...)...)
			}
			for i := 0; i < ops; i++ {
				name := fmt.Sprintf("w%d-k%02d", w, rng.Intn(keys))
				m := model[name]
				switch op := rng.Intn(5); op {
				case 0: // create
					p := Project(name)
					p.Spec.Description = strconv.Itoa(i)
					err := h.S.Create(h.Ctx, p, store.CreateOptions{})
					switch {
					case m == nil && err == nil:
						model[name] = &modelEntry{rv: p.ResourceVersion, value: p.Spec.Description}
					case m != nil && errors.Is(err, resource.ErrAlreadyExists):
					default:
						diverge("create %s: model has %v, store said %v", name, m != nil, err)
					}
				case 1: // update with the model's resourceVersion
					p := Project(name)
					p.Spec.Description = strconv.Itoa(i)
					if m != nil {
						p.ResourceVersion = m.rv
					} else {
						p.ResourceVersion = "1"
					}
					err := h.S.Update(h.Ctx, p, store.UpdateOptions{})
					switch {
					case m != nil && err == nil:
						m.rv, m.value = p.ResourceVersion, p.Spec.Description
					case m == nil && errors.Is(err, resource.ErrNotFound):
					default:
						diverge("update %s: model has %v, store said %v", name, m != nil, err)
					}
				case 2: // update with a stale resourceVersion must conflict
					if m == nil {
						continue
					}
					p := Project(name)
					p.Spec.Description = "stale"
					n, _ := strconv.ParseInt(m.rv, 10, 64)
					p.ResourceVersion = strconv.FormatInt(n-1, 10)
					if err := h.S.Update(h.Ctx, p, store.UpdateOptions{}); !errors.Is(err, resource.ErrConflict) {
						diverge("stale update %s: store said %v", name, err)
					}
				case 3: // delete
					_, err := h.S.Delete(h.Ctx, Project(name), store.DeleteOptions{})
					switch {
					case m != nil && err == nil:
						delete(model, name)
					case m == nil && errors.Is(err, resource.ErrNotFound):
					default:
						diverge("delete %s: model has %v, store said %v", name, m != nil, err)
					}
				case 4: // get
					p := Project("")
					err := h.S.Get(h.Ctx, "", name, p, store.GetOptions{})
					switch {
					case m != nil && err == nil:
						if p.ResourceVersion != m.rv || p.Spec.Description != m.value {
							diverge("get %s: model %+v, store rv=%s value=%s", name, *m, p.ResourceVersion, p.Spec.Description)
						}
					case m == nil && errors.Is(err, resource.ErrNotFound):
					default:
						diverge("get %s: model has %v, store said %v", name, m != nil, err)
					}
				}
			}
			// The worker's objects in a list agree with its model.
			list := &resource.ProjectList{}
			if err := h.S.List(h.Ctx, list, store.ListOptions{}); err != nil {
				assert.NoError(t, err)
				return
			}
			seen := map[string]bool{}
			for _, p := range list.Items {
				if len(p.Name) < 3 || p.Name[:3] != fmt.Sprintf("w%d-", w) {
					continue
				}
				seen[p.Name] = true
				if m := model[p.Name]; m == nil {
					diverge("list has %s, model does not", p.Name)
				}
			}
			for name := range model {
				if !seen[name] {
					diverge("model has %s, list does not", name)
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("RESULT name=REL-MODEL-SIM workers=%d ops=%d divergences=%d", workers, workers*ops, divergences.Load())
	assert.Zero(t, divergences.Load())
}

// ack is an acknowledged write: what a watcher of everything must see.
type ack struct {
	rv   int64
	name string
	typ  store.EventType
}

func testWatchProps(t *testing.T, h *Harness) {
	const writers, writesEach = 8, 60
	startRV := formatRevision(h.Revision())
	evenName := func(a ack) bool { return (a.name[len(a.name)-1]-'0')%2 == 0 }
	specs := []struct {
		name string
		opts store.WatchOptions
		keep func(a ack) bool
	}{
		{name: "all", opts: store.WatchOptions{ResourceVersion: startRV}, keep: func(ack) bool { return true }},
		{name: "namespace", opts: store.WatchOptions{ResourceVersion: startRV, Namespace: "p-w1"},
			keep: func(a ack) bool { return a.name[:5] == "p-w1/" }},
		// Every write of v0, v2, … carries even=true (a delete reports the last state).
		{name: "label", opts: store.WatchOptions{ResourceVersion: startRV, LabelSelector: "even=true"}, keep: evenName},
		{name: "bookmarks", opts: store.WatchOptions{ResourceVersion: startRV, AllowBookmarks: true},
			keep: func(ack) bool { return true }},
	}
	watchers := make([]*store.Watcher, len(specs))
	for i, s := range specs {
		w, err := h.S.Watch(h.Ctx, Instance("", ""), s.opts)
		require.NoError(t, err)
		defer w.Stop()
		watchers[i] = w
	}
	var mu sync.Mutex
	var acks []ack
	var wg sync.WaitGroup
	for wr := 0; wr < writers; wr++ {
		wg.Add(1)
		go func(wr int) {
			defer wg.Done()
			ns := fmt.Sprintf("p-w%d", wr)
			for i := 0; i < writesEach; i++ {
				// Rounds of ten: even rounds create v0…v9, odd rounds delete them.
				name := fmt.Sprintf("v%d", i%10)
				v := Instance(ns, name)
				v.Labels = map[string]string{"even": strconv.FormatBool(i%2 == 0)}
				typ := store.Added
				var err error
				if (i/10)%2 == 1 {
					typ = store.Deleted
					_, err = h.S.Delete(h.Ctx, v, store.DeleteOptions{})
				} else {
					err = h.S.Create(h.Ctx, v, store.CreateOptions{})
				}
				if err != nil {
					assert.NoError(t, err)
					return
				}
				n, _ := strconv.ParseInt(v.ResourceVersion, 10, 64)
				mu.Lock()
				acks = append(acks, ack{rv: n, name: ns + "/" + name, typ: typ})
				mu.Unlock()
			}
		}(wr)
	}
	wg.Wait()
	sort.Slice(acks, func(i, j int) bool { return acks[i].rv < acks[j].rv })
	require.Len(t, acks, writers*writesEach)
	for i := 1; i < len(acks); i++ {
		require.Greater(t, acks[i].rv, acks[i-1].rv, "two single-object writes share a revision")
	}

	for i, s := range specs {
		var want []ack
		for _, a := range acks {
			if s.keep(a) {
				want = append(want, a)
			}
		}
		var got []ack
		var lastRV, lastBookmark int64
		for len(got) < len(want) {
			ev := nextEvent(t, watchers[i])
			require.NotEqual(t, store.Error, ev.Type, "%s: %v", s.name, ev.Err)
			n := rv(t, ev.Object)
			if ev.Type == store.Bookmark {
				require.GreaterOrEqual(t, n, lastBookmark, "%s: bookmark went back", s.name)
				require.GreaterOrEqual(t, n, lastRV, "%s: bookmark before a delivered event", s.name)
				lastBookmark = n
				continue
			}
			require.Greater(t, n, lastRV, "%s: out of order or duplicate", s.name)
			lastRV = n
			m := ev.Object.GetObjectMeta()
			got = append(got, ack{rv: n, name: m.Namespace + "/" + m.Name, typ: ev.Type})
		}
		assert.Equal(t, want, got, "%s: the watch does not match the commit log", s.name)
	}
	// Resumable: a watch started at any seen revision replays the same suffix.
	for _, from := range []int{0, len(acks) / 3, len(acks) - 5} {
		w, err := h.S.Watch(h.Ctx, Instance("", ""), store.WatchOptions{ResourceVersion: formatRevision(acks[from].rv)})
		require.NoError(t, err)
		for _, want := range acks[from+1:] {
			ev := nextEvent(t, w)
			m := ev.Object.GetObjectMeta()
			require.Equal(t, want, ack{rv: rv(t, ev.Object), name: m.Namespace + "/" + m.Name, typ: ev.Type})
		}
		w.Stop()
	}
	t.Logf("RESULT name=REL-WATCH-PROPS writers=%d writes=%d watchers=%d violations=0", writers, len(acks), len(specs))
}
