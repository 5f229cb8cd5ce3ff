package memdb

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/store/backend"
)

// Compact discards the history below rev: reads at a revision below it and watches
// starting below it fail with [backend.ErrCompacted], and watchers still behind it end
// with that error. The memory of the discarded revisions is released. Compacting at or
// below the current compaction point does nothing; rev above the current revision is
// [backend.ErrFutureRevision], a negative one [backend.ErrInvalidArgument].
func (b *Backend) Compact(ctx context.Context, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.ErrClosed
	}
	if rev > b.rev {
		return fmt.Errorf("%w: compact at %d, current %d", backend.ErrFutureRevision, rev, b.rev)
	}
	if rev <= b.compacted {
		return nil
	}
	for r := b.oldestLocked(); r < rev; r++ {
		b.dropLocked(r)
	}
	b.compacted = rev
	b.wakeLocked() // watchers blocked on a full channel check whether they are lost
	return nil
}

// CompactRevision returns the oldest revision still readable: the largest of the
// compaction point and the oldest revision the history bound keeps (0 for a backend
// never written).
func (b *Backend) CompactRevision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0, backend.ErrClosed
	}
	return b.oldestLocked(), nil
}
