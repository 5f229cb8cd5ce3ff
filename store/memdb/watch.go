package memdb

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Watch starts a watcher of the keys under opts.Prefix from opts.StartRevision (0:
// the changes after the current revision). StartRevision may lie in the future: the
// watcher then waits for it. A StartRevision older than what is kept fails at once
// with [backend.ErrCompacted].
//
// Each watcher is a goroutine with a cursor in the backend's history: it copies the
// events at or after its cursor that match its prefix to its channel, and sleeps
// when it has caught up until the next commit. Writers never wait for it. A watcher
// whose reader falls so far behind that the history no longer holds its next
// revision ends with [backend.ErrCompacted], at once, even while its channel is full.
func (b *Backend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	if err := backendkit.CheckWatch(ctx, opts); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, backend.ErrClosed
	}
	return b.hub.Start(ctx, opts, b.rev, b.oldestLocked())
}

// watchSource is the [backendkit.Source] of a [Backend]: its ring of revisions.
type watchSource Backend

// Collect copies the events of revisions from next on that match prefix, up to a
// batch, holding the backend's read lock meanwhile: at most [backendkit.BatchEvents]
// events and [backendkit.BatchRevisions] revisions each time.
func (s *watchSource) Collect(prefix string, next int64) (backendkit.Batch, error) {
	b := (*Backend)(s)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return backendkit.Batch{}, backend.ErrClosed
	}
	cur := b.rev
	if next > cur {
		return backendkit.Batch{Upto: next - 1, Current: cur, Notify: b.notify}, nil
	}
	if oldest := b.oldestLocked(); next < oldest {
		return backendkit.Batch{}, fmt.Errorf("%w: watcher fell behind, revision %d is no longer kept (oldest %d)", backend.ErrCompacted, next, oldest)
	}
	events, upto := backendkit.Scan(prefix, next, cur, func(r int64) []backend.Event {
		return b.ring[r%int64(len(b.ring))].events
	})
	return backendkit.Batch{Events: events, Upto: upto, Current: cur, Notify: b.notify}, nil
}

// Lost reports, with an error, whether revision need is gone from the history, and
// returns the channel that will be closed on the next change.
func (s *watchSource) Lost(need int64) (<-chan struct{}, error) {
	b := (*Backend)(s)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, nil // the watcher sees done instead
	}
	if need <= b.rev && need < b.oldestLocked() {
		return b.notify, fmt.Errorf("%w: watcher fell behind, revision %d is no longer kept", backend.ErrCompacted, need)
	}
	return b.notify, nil
}
