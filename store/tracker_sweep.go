package store

import (
	"context"
	"fmt"
)

// The tracker's work pass (reap what is due, then sweep the collector's queue) and
// Settle, which waits until the index and that work have caught up.

// work reaps what is due and runs the collector over the queue. A key whose reap
// or collection failed is kept for the next pass, and the failure for
// [Store.Healthy] until a pass succeeds; the error returned says the loop should
// try again after a pause.
func (t *tracker) work(ctx context.Context) error {
	t.mu.Lock()
	t.busy = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.busy = false
		t.signalLocked()
		t.mu.Unlock()
	}()
	now := t.s.clock.Now()
	t.mu.Lock()
	if !t.leading || t.w == nil {
		// The leader does this work; a store that becomes leader looks at every
		// object again. Without a watch the index may be stale: the work waits
		// until the loop follows the backend again.
		if !t.leading {
			clear(t.queue)
		}
		t.mu.Unlock()
		return nil
	}
	var due []string
	for key, d := range t.reap {
		if !now.Before(d) {
			due = append(due, key)
		}
	}
	t.mu.Unlock()
	var failed error
	for _, key := range due {
		if err := t.s.reapKey(ctx, key); err != nil && ctx.Err() == nil {
			t.s.log.Error("store: reaper", "key", key, "err", err)
			failed = fmt.Errorf("reaper: %s: %w", key, err)
		}
	}
	var retry []string
	defer func() {
		t.mu.Lock()
		for _, key := range retry {
			t.queue[key] = struct{}{}
		}
		if failed == nil && ctx.Err() == nil {
			t.workFault = nil
		} else if failed != nil {
			t.workFault = failed
		}
		t.signalLocked()
		t.mu.Unlock()
	}()
	for i := 0; i < 10000; i++ {
		t.mu.Lock()
		var key string
		for k := range t.queue {
			key = k
			break
		}
		if key != "" {
			delete(t.queue, key)
		}
		t.mu.Unlock()
		if key == "" || ctx.Err() != nil {
			break
		}
		if err := t.s.collect(ctx, key); err != nil && ctx.Err() == nil {
			t.s.log.Error("store: garbage collector", "key", key, "err", err)
			failed = fmt.Errorf("garbage collector: %s: %w", key, err)
			retry = append(retry, key)
		}
	}
	return failed
}

// Settle waits until the store's background work has caught up: every write up to
// now is in its index, grace periods that have run out by the store's clock are
// reaped, garbage collection has nothing left to do, and the label index is built.
// While the index does not follow the backend (see [Store.Healthy]), it waits for it
// to follow again. Tests call it after a delete
// or a step of a fake clock to observe the outcome deterministically. On a store that
// is not [Store.Leading], it waits for the index only: the leader does the rest.
func (s *Store) Settle(ctx context.Context) error {
	for i := 0; ; i++ {
		rev, err := s.b.Revision(ctx)
		if err != nil {
			return backendError(err)
		}
		// Wait until the index has seen rev.
		for {
			t := s.track
			t.mu.Lock()
			caught := t.rev >= rev
			ch := t.changedLocked()
			t.mu.Unlock()
			if caught {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return backendError(ctx.Err())
			}
		}
		// Let the loop run its work once more, then check that nothing changed.
		s.track.notify()
		for {
			t := s.track
			t.mu.Lock()
			// Without a watch (it is being started again or the index rebuilt) the
			// work is not done: the rebuild may queue more.
			idle := t.w != nil && !t.rebuilding && t.lscan == nil && !t.busy && len(t.queue) == 0 && (!t.leading || !t.dueLocked(s.clock.Now()))
			ch := t.changedLocked()
			t.mu.Unlock()
			if idle {
				break
			}
			s.track.notify()
			select {
			case <-ch:
			case <-ctx.Done():
				return backendError(ctx.Err())
			}
		}
		after, err := s.b.Revision(ctx)
		if err != nil {
			return backendError(err)
		}
		if after == rev {
			return nil
		}
	}
}
