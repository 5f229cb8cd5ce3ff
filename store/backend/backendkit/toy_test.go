package backendkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
	"github.com/management-service/mgmt/store/storetest"
)

// toy is a deliberately small backend: the least a backend written outside this
// repository needs to pass storetest.RunBackend with backendkit. It keeps every
// version of every key and the events of every revision in memory, forever (so it
// has nothing to compact), under one mutex, and makes no effort to be fast.
//
// backendkit supplies its watchers (a Hub fed by the toy as its Source, with Scan)
// and its transaction checks (ValidateTxn, FailedCompare); the toy keeps the data.
type toy struct {
	mu      sync.Mutex
	keys    map[string][]version // each key's versions, oldest first
	history [][]backend.Event    // history[r]: the events of revision r; history[0] is empty
	notify  chan struct{}        // closed and replaced at each commit
	closed  bool
	done    chan struct{} // closed by Close: ends the watchers
	hub     *backendkit.Hub
}

// version is a key as one revision left it: a value, or a deletion.
type version struct {
	kv      backend.KV
	deleted bool
}

var (
	_ backend.Backend   = (*toy)(nil)
	_ backendkit.Source = (*toy)(nil)
)

// newToy returns an empty toy backend at revision 0.
func newToy() *toy {
	b := &toy{
		keys:    map[string][]version{},
		history: make([][]backend.Event, 1),
		notify:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	b.hub = backendkit.NewHub(b, b.done, 0)
	return b
}

// TestToyBackend proves the toy with the conformance suite, as every backend does.
func TestToyBackend(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) backend.Backend { return newToy() })
}

// revLocked returns the current revision. b.mu must be held.
func (b *toy) revLocked() int64 { return int64(len(b.history) - 1) }

// at returns key as of revision rev, and whether it existed then. b.mu must be held.
func (b *toy) at(key string, rev int64) (backend.KV, bool) {
	vs := b.keys[key]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].kv.ModRevision <= rev {
			return vs[i].kv, !vs[i].deleted
		}
	}
	return backend.KV{}, false
}

// readAt checks the revision of a read and returns the one to read at. b.mu must be
// held.
func (b *toy) readAt(ctx context.Context, rev int64) (int64, error) {
	if rev < 0 {
		return 0, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if b.closed {
		return 0, backend.ErrClosed
	}
	if rev > b.revLocked() {
		return 0, fmt.Errorf("%w: revision %d, current %d", backend.ErrFutureRevision, rev, b.revLocked())
	}
	if rev == 0 {
		rev = b.revLocked()
	}
	return rev, nil
}

func (b *toy) Get(ctx context.Context, key string, rev int64) (backend.KV, error) {
	if key == "" {
		return backend.KV{}, fmt.Errorf("%w: empty key", backend.ErrInvalidArgument)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rev, err := b.readAt(ctx, rev)
	if err != nil {
		return backend.KV{}, err
	}
	kv, ok := b.at(key, rev)
	if !ok {
		return backend.KV{}, fmt.Errorf("%w: %q at revision %d", backend.ErrKeyNotFound, key, rev)
	}
	return kv, nil
}

func (b *toy) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	if opts.Limit < 0 {
		return backend.RangeResult{}, fmt.Errorf("%w: negative limit %d", backend.ErrInvalidArgument, opts.Limit)
	}
	if !strings.HasPrefix(opts.Start, opts.Prefix) && opts.Start != "" {
		return backend.RangeResult{}, fmt.Errorf("%w: start %q is outside prefix %q", backend.ErrInvalidArgument, opts.Start, opts.Prefix)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rev, err := b.readAt(ctx, opts.Revision)
	if err != nil {
		return backend.RangeResult{}, err
	}
	var keys []string
	for k := range b.keys {
		if strings.HasPrefix(k, opts.Prefix) && k >= opts.Start {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	res := backend.RangeResult{Revision: rev}
	for _, k := range keys {
		kv, ok := b.at(k, rev)
		if !ok {
			continue
		}
		if opts.Limit > 0 && len(res.KVs) == opts.Limit {
			res.More = true
			break
		}
		res.KVs = append(res.KVs, kv)
	}
	return res, nil
}

func (b *toy) Txn(ctx context.Context, t backend.Txn) (backend.TxnResult, error) {
	if err := backendkit.ValidateTxn(t, 0); err != nil {
		return backend.TxnResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.TxnResult{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.TxnResult{}, backend.ErrClosed
	}
	cur := b.revLocked()
	failed, _ := backendkit.FailedCompare(t.Compares, func(key string) (int64, error) { // never an error: the data is in memory
		kv, ok := b.at(key, cur)
		if !ok {
			return 0, nil
		}
		return kv.ModRevision, nil
	}, func(prefix string) (int64, error) {
		var top int64
		for k := range b.keys {
			if kv, ok := b.at(k, cur); ok && strings.HasPrefix(k, prefix) {
				top = max(top, kv.ModRevision)
			}
		}
		return top, nil
	})
	if failed >= 0 {
		return backend.TxnResult{Revision: cur, FailedCompare: failed}, nil
	}

	rev := cur + 1
	var events []backend.Event
	for _, op := range t.Ops {
		prev, existed := b.at(op.Key, cur)
		var prevKV *backend.KV
		if existed {
			prevKV = &prev
		}
		switch {
		case op.Delete && !existed: // changes nothing
			continue
		case op.Delete:
			kv := backend.KV{Key: op.Key, ModRevision: rev}
			b.keys[op.Key] = append(b.keys[op.Key], version{kv: kv, deleted: true})
			events = append(events, backend.Event{Type: backend.EventDelete, Revision: rev, KV: kv, PrevKV: prevKV})
		default:
			kv := backend.KV{Key: op.Key, Value: append([]byte{}, op.Value...), CreateRevision: rev, ModRevision: rev}
			if existed {
				kv.CreateRevision = prev.CreateRevision
			}
			b.keys[op.Key] = append(b.keys[op.Key], version{kv: kv})
			events = append(events, backend.Event{Type: backend.EventPut, Revision: rev, KV: kv, PrevKV: prevKV})
		}
	}
	if len(events) == 0 { // nothing changed: no new revision
		return backend.TxnResult{Succeeded: true, Revision: cur, FailedCompare: -1}, nil
	}
	b.history = append(b.history, events)
	close(b.notify) // wake the watchers
	b.notify = make(chan struct{})
	return backend.TxnResult{Succeeded: true, Revision: rev, FailedCompare: -1}, nil
}

func (b *toy) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	if err := backendkit.CheckWatch(ctx, opts); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, backend.ErrClosed
	}
	return b.hub.Start(ctx, opts, b.revLocked(), 1) // every revision is kept
}

func (b *toy) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, backend.ErrClosed
	}
	return b.revLocked(), nil
}

func (b *toy) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return backend.ErrClosed
	}
	b.closed = true
	close(b.done)
	b.mu.Unlock()
	b.hub.Wait()
	return nil
}

// Collect is the toy's side of backendkit.Source: Scan picks the events of a batch
// from the kept history.
func (b *toy) Collect(prefix string, next int64) (backendkit.Batch, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backendkit.Batch{}, backend.ErrClosed
	}
	cur := b.revLocked()
	events, upto := backendkit.Scan(prefix, next, cur, func(r int64) []backend.Event { return b.history[r] })
	return backendkit.Batch{Events: events, Upto: upto, Current: cur, Notify: b.notify}, nil
}

// Lost never reports a loss: the toy keeps every revision.
func (b *toy) Lost(need int64) (<-chan struct{}, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, nil // the watcher sees the hub's done channel
	}
	return b.notify, nil
}
