package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/management-service/mgmt/store/backend"
)

// ErrTooLarge is returned by a transaction etcd refuses for its size: a request
// larger than the server's --max-request-bytes (1.5 MiB by default) or the client's
// message limit, or more operations than the server's --max-txn-ops (128 by
// default). Nothing was written. The error also matches [backend.ErrTxnTooLarge]
// (which the store answers with 413) and [backend.ErrInvalidArgument]: the request
// cannot succeed as it is.
var ErrTooLarge = errors.New("etcd: request too large")

// Backend is a [backend.Backend] and [backend.Compactor] on an etcd cluster, under
// one key prefix. Build it with [New]; the zero value is not usable. It is safe for
// concurrent use.
type Backend struct {
	opts   Options
	cli    *clientv3.Client
	own    bool   // cli was dialed by New, and Close closes it
	prefix string // put in front of every key; the key equal to it holds the base
	// base is the etcd revision that is this backend's revision 0: backend revision r
	// is etcd revision base+r. It is the same for every backend on the prefix.
	base int64

	closeMu  sync.Mutex // serializes Close with the start of watchers
	closed   atomic.Bool
	done     chan struct{}   // closed by Close; ends the watchers
	ctx      context.Context // ends on Close, and with it the watchers' etcd calls
	cancel   context.CancelFunc
	watchers sync.WaitGroup

	// seenMu guards the newest revision this backend has seen in etcd's answers,
	// which tells watchers that asked for progress that the revision moved on.
	seenMu  sync.Mutex
	seenRev int64
	seenCh  chan struct{} // closed and replaced when seenRev grows
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Compactor = (*Backend)(nil)
)

// New connects to etcd and returns a backend on the keys under opts.Prefix. The
// first backend on a prefix records the prefix's revision base (see the package
// documentation); later ones, in this process or another, read it. ctx bounds the
// setup, as does [Options].DialTimeout.
func New(ctx context.Context, opts Options) (*Backend, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &Backend{opts: o, cli: o.Client, prefix: o.Prefix, done: make(chan struct{}), seenCh: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	if b.cli == nil {
		b.cli, err = clientv3.New(clientv3.Config{
			Endpoints:   o.Endpoints,
			DialTimeout: o.DialTimeout,
			Logger:      zap.NewNop(),
		})
		if err != nil {
			return nil, fmt.Errorf("etcd: dial %v: %w", o.Endpoints, err)
		}
		b.own = true
	}
	sctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	b.base, err = setUpBase(sctx, b.cli, b.prefix)
	if err != nil {
		b.cancel()
		if b.own {
			_ = b.cli.Close()
		}
		return nil, fmt.Errorf("etcd: set up prefix %q: %w", b.prefix, err)
	}
	return b, nil
}

// setUpBase returns the revision base of prefix, recording it first if no backend
// did: the etcd revision of that first write when nothing is stored under the
// prefix yet (so revisions start at 1 for the caller), 0 when keys are already there
// (their revisions are etcd's as they are).
func setUpBase(ctx context.Context, cli *clientv3.Client, prefix string) (int64, error) {
	absent := clientv3.Compare(clientv3.CreateRevision(prefix), "=", 0)
	empty := clientv3.Compare(clientv3.CreateRevision(prefix+"\x00"), "=", 0).WithRange(clientv3.GetPrefixRangeEnd(prefix))
	resp, err := cli.Txn(ctx).If(absent, empty).Then(clientv3.OpPut(prefix, "")).Else(clientv3.OpGet(prefix)).Commit()
	if err != nil {
		return 0, err
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) == 1 {
		return parseBase(kvs[0])
	}
	// Keys without a base: they were written before any backend recorded one.
	resp, err = cli.Txn(ctx).If(absent).Then(clientv3.OpPut(prefix, "0")).Else(clientv3.OpGet(prefix)).Commit()
	if err != nil {
		return 0, err
	}
	if resp.Succeeded {
		return 0, nil
	}
	return parseBase(resp.Responses[0].GetResponseRange().GetKvs()[0])
}

// parseBase reads the base from the key that records it: empty means the key's own
// create revision, else a decimal revision.
func parseBase(kv *mvccpb.KeyValue) (int64, error) {
	if len(kv.Value) == 0 {
		return kv.CreateRevision, nil
	}
	n, err := strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("key %q holds %q, not a revision base: is the prefix used by something else?", kv.Key, kv.Value)
	}
	return n, nil
}

// Client returns the etcd client the backend uses, for example to build an
// [Elector] on the same connection. Closing the backend closes it when the backend
// dialed it itself ([Options].Endpoints).
func (b *Backend) Client() *clientv3.Client { return b.cli }

// Prefix returns the prefix of the backend's keys in etcd.
func (b *Backend) Prefix() string { return b.prefix }

// Revision returns the current revision: etcd's, less the prefix's base. Writes by
// others to the same etcd cluster (other prefixes, elections) move it too.
func (b *Backend) Revision(ctx context.Context) (int64, error) {
	if err := b.check(ctx); err != nil {
		return 0, err
	}
	resp, err := b.cli.Get(ctx, b.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, b.fail("revision", err)
	}
	rev := resp.Header.Revision - b.base
	b.seen(rev)
	return rev, nil
}

// Close ends every watcher with [backend.ErrClosed], waits for them, and closes the
// etcd client if the backend dialed it. Calls after Close return
// [backend.ErrClosed], a second Close too.
func (b *Backend) Close() error {
	b.closeMu.Lock()
	if b.closed.Load() {
		b.closeMu.Unlock()
		return backend.ErrClosed
	}
	b.closed.Store(true)
	close(b.done)
	b.cancel()
	b.closeMu.Unlock()
	b.watchers.Wait()
	if b.own {
		if err := b.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("etcd: close client: %w", err)
		}
	}
	return nil
}

// check returns the error of a call that cannot start: ctx done, or the backend
// closed.
func (b *Backend) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.closed.Load() {
		return backend.ErrClosed
	}
	return nil
}

// fail maps an error of the etcd client to the errors of the backend contract.
func (b *Backend) fail(op string, err error) error {
	switch {
	case b.closed.Load():
		return backend.ErrClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: etcd %s: %v", backend.ErrCompacted, op, err)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w: etcd %s: %v", backend.ErrFutureRevision, op, err)
	case errors.Is(err, rpctypes.ErrRequestTooLarge), errors.Is(err, rpctypes.ErrTooManyOps),
		status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("%w (%w, %w): %s: %v", ErrTooLarge, backend.ErrTxnTooLarge, backend.ErrInvalidArgument, op, err)
	}
	return fmt.Errorf("etcd: %s: %w", op, err)
}

// key returns the etcd key of a backend key.
func (b *Backend) key(k string) string { return b.prefix + k }

// span returns the etcd key range [start, end) of the backend keys under prefix.
// It leaves out the key equal to b.prefix, which holds the base.
func (b *Backend) span(prefix string) (start, end string) {
	start = b.prefix + prefix
	if prefix == "" {
		start = b.prefix + "\x00" // the smallest key after b.prefix itself
	}
	return start, clientv3.GetPrefixRangeEnd(b.prefix + prefix)
}

// kv converts an etcd key-value to the contract's, key without the prefix and
// revisions less the base.
func (b *Backend) kv(kv *mvccpb.KeyValue) backend.KV {
	return backend.KV{
		Key:            string(kv.Key[len(b.prefix):]),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision - b.base,
		ModRevision:    kv.ModRevision - b.base,
	}
}

// seen records that etcd's revision has reached rev (a backend revision), as an
// answer of etcd showed, and wakes the watchers that report progress.
func (b *Backend) seen(rev int64) {
	b.seenMu.Lock()
	if rev > b.seenRev {
		b.seenRev = rev
		close(b.seenCh)
		b.seenCh = make(chan struct{})
	}
	b.seenMu.Unlock()
}

// lastSeen returns the newest revision seen in etcd's answers and a channel closed
// when a newer one is seen.
func (b *Backend) lastSeen() (int64, <-chan struct{}) {
	b.seenMu.Lock()
	defer b.seenMu.Unlock()
	return b.seenRev, b.seenCh
}
