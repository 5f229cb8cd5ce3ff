package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/backend"
)

// Compact discards the history below rev: reads at a revision below it and watches
// starting below it fail with [backend.ErrCompacted], and watchers still behind it
// end with that error. It compacts etcd at the revision before rev, which stays in
// etcd to give the events at rev their PrevKV.
//
// etcd's compaction is cluster-wide: it discards the history of every key, so of
// every backend that shares the cluster, whatever its prefix. Compacting at or below
// the current compaction point does nothing; rev above the current revision is
// [backend.ErrFutureRevision], a negative one [backend.ErrInvalidArgument].
func (b *Backend) Compact(ctx context.Context, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	cur, err := b.Revision(ctx)
	if err != nil {
		return err
	}
	if rev > cur {
		return fmt.Errorf("%w: compact at %d, current %d", backend.ErrFutureRevision, rev, cur)
	}
	if rev <= 1 {
		return nil // nothing of this backend is below revision 1
	}
	if _, err := b.cli.Compact(ctx, rev-1+b.base); err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil // etcd is compacted there already, or further
		}
		return b.fail("compact", err)
	}
	return nil
}

// CompactRevision returns the oldest revision still readable: one above etcd's
// compaction revision, at least 1 once something was written, 0 for a backend never
// written. etcd does not report its compaction revision, so CompactRevision finds it
// by bisection with a few small reads.
func (b *Backend) CompactRevision(ctx context.Context) (int64, error) {
	if err := b.check(ctx); err != nil {
		return 0, err
	}
	resp, err := b.cli.Get(ctx, b.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, b.fail("compact revision", err)
	}
	cur := resp.Header.Revision
	if cur == b.base {
		return 0, nil
	}
	readable := func(rev int64) (bool, error) {
		_, err := b.cli.Get(ctx, b.prefix, clientv3.WithRev(rev), clientv3.WithCountOnly())
		if errors.Is(err, rpctypes.ErrCompacted) {
			return false, nil
		}
		if err != nil {
			return false, b.fail("compact revision", err)
		}
		return true, nil
	}
	// etcd's compaction revision is the oldest revision etcd still reads; only
	// where it lies from b.base on matters.
	lo := max(b.base, 1)
	ok, err := readable(lo)
	if err != nil {
		return 0, err
	}
	if ok {
		return 1, nil
	}
	hi := cur // etcd always reads its current revision
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := readable(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi + 1 - b.base, nil
}
