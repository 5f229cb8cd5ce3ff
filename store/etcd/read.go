package etcd

import (
	"context"
	"fmt"
	"strings"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/backend"
)

// Get returns key as of revision rev (0: current), read from etcd with a
// linearizable read. It returns [backend.ErrKeyNotFound] when the key does not exist
// then, [backend.ErrCompacted] when rev is at or below etcd's compaction revision
// (see the package documentation) and [backend.ErrFutureRevision] when rev is newer
// than the current revision.
func (b *Backend) Get(ctx context.Context, key string, rev int64) (backend.KV, error) {
	if key == "" {
		return backend.KV{}, fmt.Errorf("%w: empty key", backend.ErrInvalidArgument)
	}
	if rev < 0 {
		return backend.KV{}, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := b.check(ctx); err != nil {
		return backend.KV{}, err
	}
	rr, at, err := b.read(ctx, rev, b.key(key))
	if err != nil {
		return backend.KV{}, b.fail("get", err)
	}
	if len(rr.Kvs) == 0 {
		return backend.KV{}, fmt.Errorf("%w: %q at revision %d", backend.ErrKeyNotFound, key, at)
	}
	return b.kv(rr.Kvs[0]), nil
}

// Range returns the keys selected by opts in byte order of key, from one etcd read
// at one revision. Errors are those of [Backend.Get], and
// [backend.ErrInvalidArgument] for a negative Limit or Revision or a Start outside
// the Prefix.
func (b *Backend) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	if opts.Limit < 0 {
		return backend.RangeResult{}, fmt.Errorf("%w: negative limit %d", backend.ErrInvalidArgument, opts.Limit)
	}
	if opts.Revision < 0 {
		return backend.RangeResult{}, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, opts.Revision)
	}
	if opts.Start != "" && !strings.HasPrefix(opts.Start, opts.Prefix) {
		return backend.RangeResult{}, fmt.Errorf("%w: start %q is outside prefix %q", backend.ErrInvalidArgument, opts.Start, opts.Prefix)
	}
	if err := b.check(ctx); err != nil {
		return backend.RangeResult{}, err
	}
	start, end := b.span(opts.Prefix)
	if opts.Start != "" {
		start = b.key(opts.Start)
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end)}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(int64(opts.Limit)))
	}
	rr, at, err := b.read(ctx, opts.Revision, start, ops...)
	if err != nil {
		return backend.RangeResult{}, b.fail("range", err)
	}
	res := backend.RangeResult{Revision: at, More: rr.More}
	if len(rr.Kvs) > 0 {
		res.KVs = make([]backend.KV, len(rr.Kvs))
		for i, kv := range rr.Kvs {
			res.KVs[i] = b.kv(kv)
		}
	}
	return res, nil
}

// read reads key with the range options opts at backend revision rev (0: current)
// and returns etcd's answer and the revision it was served at.
//
// A read at a past revision is an etcd transaction of two ranges: op at the revision,
// and a count of one key at the revision before it, which etcd refuses with
// ErrCompacted when that revision is compacted. The backend keeps that revision
// readable because a watch event at a revision carries the key's value of the
// revision before (PrevKV); so its compaction point is one above etcd's, and a read
// at etcd's compaction revision is compacted too.
func (b *Backend) read(ctx context.Context, rev int64, key string, opts ...clientv3.OpOption) (*pb.RangeResponse, int64, error) {
	if rev == 0 {
		resp, err := b.cli.Get(ctx, key, opts...)
		if err != nil {
			return nil, 0, err
		}
		at := resp.Header.Revision - b.base
		b.seen(at)
		return (*pb.RangeResponse)(resp), at, nil
	}
	at := rev + b.base
	then := []clientv3.Op{clientv3.OpGet(key, append(opts[:len(opts):len(opts)], clientv3.WithRev(at))...)}
	if at > 1 {
		then = append(then, clientv3.OpGet(b.prefix, clientv3.WithRev(at-1), clientv3.WithCountOnly()))
	}
	resp, err := b.cli.Txn(ctx).Then(then...).Commit()
	if err != nil {
		return nil, 0, err
	}
	return resp.Responses[0].GetResponseRange(), rev, nil
}
