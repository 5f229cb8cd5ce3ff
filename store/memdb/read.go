package memdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/management-service/mgmt/store/backend"
)

// ctxCheckEvery is how many keys a Range reads between two looks at its context.
const ctxCheckEvery = 256

// Get returns key as of revision rev (0: current). It returns
// [backend.ErrKeyNotFound] when the key does not exist then,
// [backend.ErrCompacted] when rev is older than what is kept and
// [backend.ErrFutureRevision] when rev is newer than the current revision.
func (b *Backend) Get(ctx context.Context, key string, rev int64) (backend.KV, error) {
	if key == "" {
		return backend.KV{}, fmt.Errorf("%w: empty key", backend.ErrInvalidArgument)
	}
	snap, at, err := b.snapshot(ctx, rev)
	if err != nil {
		return backend.KV{}, err
	}
	obj, ok := snap.Get([]byte(key))
	if !ok {
		return backend.KV{}, fmt.Errorf("%w: %q at revision %d", backend.ErrKeyNotFound, key, at)
	}
	return obj.(*row).kv(), nil
}

// Range returns the keys selected by opts in byte order of key, all read from the
// snapshot of one revision. Errors are those of [Backend.Get], and
// [backend.ErrInvalidArgument] for a negative Limit or Revision or a Start outside
// the Prefix.
func (b *Backend) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	if opts.Limit < 0 {
		return backend.RangeResult{}, fmt.Errorf("%w: negative limit %d", backend.ErrInvalidArgument, opts.Limit)
	}
	if opts.Start != "" && !strings.HasPrefix(opts.Start, opts.Prefix) {
		return backend.RangeResult{}, fmt.Errorf("%w: start %q is outside prefix %q", backend.ErrInvalidArgument, opts.Start, opts.Prefix)
	}
	snap, at, err := b.snapshot(ctx, opts.Revision)
	if err != nil {
		return backend.RangeResult{}, err
	}
	from := opts.Start
	if from == "" {
		from = opts.Prefix
	}
	it := snap.Root().Iterator()
	it.SeekLowerBound([]byte(from))
	res := backend.RangeResult{Revision: at}
	for _, obj, ok := it.Next(); ok; _, obj, ok = it.Next() {
		r := obj.(*row)
		if !strings.HasPrefix(r.key, opts.Prefix) {
			break
		}
		if opts.Limit > 0 && len(res.KVs) == opts.Limit {
			res.More = true
			break
		}
		res.KVs = append(res.KVs, r.kv())
		if len(res.KVs)%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return backend.RangeResult{}, err
			}
		}
	}
	return res, nil
}
