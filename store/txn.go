package store

import (
	"context"
	"errors"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// TxnOptions are the options of [Store.Txn].
type TxnOptions struct {
	// DryRun runs every write of the transaction and stores nothing.
	DryRun bool
}

// Tx is a transaction: its reads see one consistent state, its writes become visible
// together at one new revision, or not at all. The function given to [Store.Txn] may
// run more than once (when a concurrent write changed what it read), so it must not
// have effects outside the Tx. Objects passed to a Tx's writes are filled in with the
// result only when the transaction commits. A Tx must not be used after its function
// returns.
type Tx struct {
	s       *Store
	ctx     context.Context
	dryRun  bool
	entries map[string]*txEntry
	order   []string
	done    []func(rev int64) error
	// removed lists the objects the transaction removes, for the garbage collector.
	removed []removedObject
}

type txEntry struct {
	read    bool   // the key was read from the backend
	readRev int64  // its ModRevision then (0: absent)
	value   []byte // value inside the transaction (nil: absent)
	rev     int64  // revision of value as read (0 when written by the tx)
	written bool
	// kind and obj, for a value the transaction wrote from an object (not on a dry
	// run): obj is what decoding value gives, never changed once set. At commit its
	// summary goes to the tracker and obj itself to the cache.
	kind *resource.KindInfo
	obj  resource.Object
}

type removedObject struct {
	kind *resource.KindInfo
	uid  string
}

// errRetry ends an attempt whose reads turned out stale.
var errRetry = errors.New("store: transaction read stale data")

// Txn runs fn in a transaction and commits its writes atomically at one revision.
// When a concurrent write changes a key fn read, fn runs again (up to
// Options.MaxUpdateRetries times, then 409 Conflict). An error from fn aborts the
// transaction and is returned as is.
func (s *Store) Txn(ctx context.Context, opts TxnOptions, fn func(tx *Tx) error) error {
	_, err := s.runTxn(ctx, opts.DryRun, fn)
	return err
}

// runTxn runs fn until it commits, and returns the commit revision.
func (s *Store) runTxn(ctx context.Context, dryRun bool, fn func(tx *Tx) error) (int64, error) {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, backendError(err)
		}
		tx := &Tx{s: s, ctx: ctx, dryRun: dryRun, entries: map[string]*txEntry{}}
		err := fn(tx)
		if err == nil {
			var rev int64
			rev, err = tx.commit()
			if err == nil {
				return rev, nil
			}
		} else if !errors.Is(err, errRetry) {
			// An answer drawn from reads of several keys must come from one state:
			// when they no longer agree, run again rather than answer from a mix.
			hold, herr := tx.readsHold()
			if herr != nil {
				return 0, herr
			}
			if hold {
				return 0, err
			}
			err = errRetry
		}
		if !errors.Is(err, errRetry) {
			return 0, err
		}
		if attempt+1 >= s.opts.MaxUpdateRetries {
			return 0, resource.NewConflict(nil, "", "too many concurrent writes, giving up after retries; try again")
		}
	}
}

// get returns the value of key inside the transaction (nil when absent).
func (tx *Tx) get(key string) (*txEntry, error) {
	if e, ok := tx.entries[key]; ok {
		return e, nil
	}
	kv, err := tx.s.b.Get(tx.ctx, key, 0)
	e := &txEntry{read: true}
	switch {
	case err == nil:
		e.value, e.readRev, e.rev = kv.Value, kv.ModRevision, kv.ModRevision
	case errors.Is(err, backend.ErrKeyNotFound):
	default:
		return nil, backendError(err)
	}
	tx.entries[key] = e
	return e, nil
}

// put records a write of key.
func (tx *Tx) put(key string, value []byte) {
	e := tx.entries[key]
	if e == nil {
		e = &txEntry{}
		tx.entries[key] = e
	}
	if !e.written {
		tx.order = append(tx.order, key)
	}
	e.written, e.value, e.rev = true, value, 0
	e.kind, e.obj = nil, nil
}

// putObject records a write of key with value, the encoding of obj; obj may change
// afterwards (it becomes the caller's result).
func (tx *Tx) putObject(k *resource.KindInfo, key string, value []byte, obj resource.Object) {
	tx.put(key, value)
	if tx.dryRun {
		return
	}
	stored := deepCopy(obj)
	stored.GetObjectMeta().ResourceVersion = "" // the revision is the backend's
	e := tx.entries[key]
	e.kind, e.obj = k, stored
}

// del records a delete of key.
func (tx *Tx) del(key string) { tx.put(key, nil) }

// onCommit registers fn to run with the commit revision once the transaction commits
// (with 0 on a dry run).
func (tx *Tx) onCommit(fn func(rev int64) error) { tx.done = append(tx.done, fn) }

func (tx *Tx) commit() (int64, error) {
	var t backend.Txn
	for key, e := range tx.entries {
		if e.read {
			t.Compares = append(t.Compares, backend.Compare{Key: key, ModRevision: e.readRev})
		}
	}
	for _, key := range tx.order {
		e := tx.entries[key]
		if e.value == nil {
			if !e.read || e.readRev != 0 {
				t.Ops = append(t.Ops, backend.Op{Key: key, Delete: true})
			}
			continue
		}
		t.Ops = append(t.Ops, backend.Op{Key: key, Value: e.value})
	}
	var rev int64
	if tx.dryRun || len(t.Ops) == 0 {
		// Nothing is written, but reads of several keys must still agree.
		hold, err := tx.readsHold()
		if err != nil {
			return 0, err
		}
		if !hold {
			return 0, errRetry
		}
	} else {
		// The tracker gets the summaries of what is written before the watch can
		// deliver it.
		for _, key := range tx.order {
			if e := tx.entries[key]; e.obj != nil {
				tx.s.track.offer(key, e.value, summarize(e.kind, key, e.obj.GetObjectMeta()))
			}
		}
		res, err := tx.s.b.Txn(tx.ctx, t)
		if err != nil || !res.Succeeded {
			// Nothing was written: take the offers back.
			for _, key := range tx.order {
				if e := tx.entries[key]; e.obj != nil {
					tx.s.track.take(key, e.value)
				}
			}
			if err != nil {
				return 0, backendError(err)
			}
			return 0, errRetry
		}
		rev = res.Revision
		for _, key := range tx.order {
			if e := tx.entries[key]; e.obj != nil {
				if resultCheck != nil {
					resultCheck(tx.s, e.kind, key, e.value, e.obj)
				}
				tx.s.cache.put(key, rev, e.obj)
			}
		}
	}
	for _, fn := range tx.done {
		if err := fn(rev); err != nil {
			return rev, err
		}
	}
	if !tx.dryRun && len(tx.removed) > 0 {
		tx.s.track.notify()
	}
	return rev, nil
}

// readsHold reports whether every key the transaction read still has the revision
// it was read at (trivially so for a single read).
func (tx *Tx) readsHold() (bool, error) {
	var t backend.Txn
	for key, e := range tx.entries {
		if e.read {
			t.Compares = append(t.Compares, backend.Compare{Key: key, ModRevision: e.readRev})
		}
	}
	if len(t.Compares) < 2 {
		return true, nil
	}
	res, err := tx.s.b.Txn(tx.ctx, t)
	if err != nil {
		return false, backendError(err)
	}
	return res.Succeeded, nil
}

// DryRun reports whether the transaction stores nothing.
func (tx *Tx) DryRun() bool { return tx.dryRun }

// Context returns the transaction's context.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Get reads the object namespace/name of out's kind, as the transaction sees it (its
// own writes included), into out.
func (tx *Tx) Get(namespace, name string, out resource.Object) error {
	k, err := tx.s.kindOf(out)
	if err != nil {
		return err
	}
	namespace = normalizeNamespace(k, namespace)
	if err := checkKeyNames(k, namespace, name); err != nil {
		return err
	}
	e, err := tx.get(objectKey(k, namespace, name))
	if err != nil {
		return err
	}
	if e.value == nil {
		return resource.NewNotFound(k, name)
	}
	key := objectKey(k, namespace, name)
	return tx.s.decodeTo(k, key, e.rev, e.value, e.rev, out)
}
