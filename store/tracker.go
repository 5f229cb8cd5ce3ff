package store

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"time"

	"github.com/management-service/mgmt/store/backend"
)

// The tracker: the store's in-memory index of the stored objects' metadata, and the
// loop that keeps it following the backend. The index's entries and how a change
// updates them are in tracker_index.go; the summaries a write offers the loop in
// tracker_offers.go; List's label index in tracker_labels.go; the reaper in
// tracker_reap.go; the collector's sweep and Settle in tracker_sweep.go; leader
// election in tracker_leader.go. The collector's questions about dependents
// (dependentKeys, waitsOn) are in gc.go.

// tracker keeps an index of the metadata the store's background work needs (owner
// references, finalizers, deletion deadlines), derived from the stored state: a scan
// at start, then the backend's watch. Because it is derived from what is stored, the
// reaper and the garbage collector pick up their work again after a restart of a
// durable backend.
type tracker struct {
	s *Store

	mu         sync.Mutex
	objs       map[string]*objInfo            // key → metadata summary
	uidKey     map[string]string              // uid → key
	dependents map[string]map[string]struct{} // owner uid → dependent keys
	reap       map[string]time.Time           // key → deadline of a finalizer-free terminating object
	labels     map[string]map[string]struct{} // "label\x00value" → keys of the objects carrying it
	queue      map[string]struct{}            // keys the collector must look at
	rev        int64                          // last revision applied to the index
	busy       bool                           // the loop is working on the queue or reaping
	leading    bool                           // this store runs the reaper and the collector
	changed    chan struct{}                  // closed and dropped when rev or busy change (nil: nobody waits)
	kick       chan struct{}
	w          backend.Watcher

	// Summaries of this store's own writes, offered just before they commit so that
	// the loop need not decode the value again when the watch delivers it (the
	// watch is often quicker than the writer's return). A summary is a function of
	// the key and the stored bytes, so the loop takes one only for exactly the bytes
	// it was made from: a value written by another store on the same backend, or
	// one whose summary was dropped, is decoded.
	pmu     sync.Mutex
	seed    maphash.Seed
	pending map[pendingKey]pendingInfo // offered and not taken yet
}

func newTracker(ctx context.Context, s *Store) (*tracker, error) {
	t := &tracker{s: s, kick: make(chan struct{}, 1), leading: s.opts.Elector == nil,
		seed: maphash.MakeSeed(), pending: map[pendingKey]pendingInfo{}}
	if err := t.resync(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// resync rebuilds the index from a scan and restarts the watch after it.
func (t *tracker) resync(ctx context.Context) error {
	if t.w != nil {
		t.w.Stop()
		t.w = nil
	}
	objs := map[string]*objInfo{}
	var rev int64
	start := ""
	for {
		res, err := t.s.b.Range(ctx, backend.RangeOptions{Prefix: "/", Start: start, Limit: 1000, Revision: rev})
		if err != nil {
			return backendError(err)
		}
		rev = res.Revision
		for _, kv := range res.KVs {
			if info := t.s.infoOf(kv.Key, kv.Value); info != nil {
				objs[kv.Key] = info
			}
		}
		if !res.More || len(res.KVs) == 0 {
			break
		}
		start = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	w, err := t.s.b.Watch(ctx, backend.WatchOptions{Prefix: "/", StartRevision: rev + 1, ProgressNotify: true})
	if err != nil {
		return backendError(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w = w
	t.objs, t.uidKey = map[string]*objInfo{}, map[string]string{}
	t.dependents, t.reap, t.queue = map[string]map[string]struct{}{}, map[string]time.Time{}, map[string]struct{}{}
	t.labels = map[string]map[string]struct{}{}
	for key, info := range objs {
		t.setLocked(key, info)
	}
	t.rev = rev
	t.signalLocked()
	return nil
}

func (t *tracker) signalLocked() {
	// Only a waiter needs a channel (changedLocked makes one): most changes have
	// none to wake.
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// changedLocked returns a channel that is closed at the next change of rev or busy.
func (t *tracker) changedLocked() <-chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// notify wakes the loop.
func (t *tracker) notify() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// run applies watch events to the index, reaps expired grace periods and collects
// garbage until ctx ends.
func (t *tracker) run(ctx context.Context) {
	var timer <-chan time.Time
	var timerAt time.Time
	for {
		t.work(ctx)
		// Arm a timer for the earliest deadline still in the future.
		t.mu.Lock()
		var next time.Time
		for _, d := range t.reap {
			if next.IsZero() || d.Before(next) {
				next = d
			}
		}
		t.mu.Unlock()
		if !next.IsZero() && (timer == nil || next.Before(timerAt)) {
			timerAt = next
			timer = t.s.clock.After(next.Sub(t.s.clock.Now()))
		}
		select {
		case <-ctx.Done():
			t.w.Stop()
			return
		case <-t.kick:
		case <-timer:
			timer = nil
		case be, ok := <-t.w.Events():
			if !ok {
				err := t.w.Err()
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, backend.ErrClosed) {
					t.s.log.Info("store: backend closed; background work stops")
					<-ctx.Done()
					return
				}
				t.s.log.Warn("store: tracker watch ended; rescanning", "err", err)
				if err := t.resync(ctx); err != nil {
					t.s.log.Error("store: tracker rescan failed", "err", err)
					select {
					case <-ctx.Done():
						return
					case <-t.s.clock.After(time.Second):
					}
				}
				continue
			}
			t.apply(be)
		}
	}
}

// apply applies one event and every event already waiting.
func (t *tracker) apply(be backend.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		switch be.Type {
		case backend.EventPut:
			info := t.take(be.KV.Key, be.KV.Value)
			if info == nil {
				info = t.s.infoOf(be.KV.Key, be.KV.Value)
			}
			t.setLocked(be.KV.Key, info)
		case backend.EventDelete:
			t.setLocked(be.KV.Key, nil)
			t.s.cache.Drop(be.KV.Key)
		}
		if be.Revision > t.rev {
			t.rev = be.Revision
		}
		select {
		case next, ok := <-t.w.Events():
			if !ok {
				t.signalLocked()
				return
			}
			be = next
			continue
		default:
		}
		break
	}
	t.signalLocked()
}

// catchUp applies watch events until the index has seen revision rev, so that a
// decision of the collector never rests on an index older than the state it reads.
// It runs on the loop's goroutine, the only reader of the watch.
func (t *tracker) catchUp(ctx context.Context, rev int64) {
	for {
		t.mu.Lock()
		done := t.rev >= rev
		t.mu.Unlock()
		if done {
			return
		}
		select {
		case be, ok := <-t.w.Events():
			if !ok {
				return
			}
			t.apply(be)
		case <-ctx.Done():
			return
		}
	}
}
