package store

import (
	"context"
	"time"
)

// Leader election for the background work: with an Elector, only the leading store
// reaps and collects; every store keeps its index.

// campaign runs e's elections until ctx ends, and switches the reaper and the
// collector on while this store leads.
func (t *tracker) campaign(ctx context.Context, e Elector) {
	for ctx.Err() == nil {
		lost, err := e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.s.log.Warn("store: leader election failed; trying again", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		t.s.log.Info("store: leading the background work")
		t.mu.Lock()
		t.leading = true
		// What the previous leader left undone: look at every object again.
		for key, info := range t.objs {
			if len(info.owners) > 0 || info.deletion != nil {
				t.queue[key] = struct{}{}
			}
		}
		t.signalLocked()
		t.mu.Unlock()
		t.notify()
		select {
		case <-lost:
		case <-ctx.Done():
		}
		t.mu.Lock()
		t.leading = false
		t.signalLocked()
		t.mu.Unlock()
		t.s.log.Info("store: no longer leading the background work")
	}
}

// Leading reports whether this store runs the reaper and the garbage collector: always
// without an [Options.Elector], else while the elector names it the leader.
func (s *Store) Leading() bool {
	s.track.mu.Lock()
	defer s.track.mu.Unlock()
	return s.track.leading
}
