package store

import (
	"context"
	"errors"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
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
	s      *Store
	ctx    context.Context
	dryRun bool
	// The entries: keys[i]'s is vals[i]; index holds them all too once there are
	// more than smallTx (see entry).
	keys  []string
	vals  []*txEntry
	index map[string]*txEntry
	order []string
	done  []func(rev int64) error
	// removed lists the objects the transaction removes, for the garbage collector.
	removed []removedObject
	// guards are the ranges the transaction listed (Tx.List).
	guards []rangeGuard
	// assumed says a key was taken to be absent without reading it (see createRun):
	// when the commit fails, the transaction runs again, reading it.
	assumed bool
	// committed says the backend applied the transaction's writes, at revision rev
	// (rv as a resourceVersion).
	committed bool
	rev       int64
	rv        string

	// Room for a transaction of one key, most of them, so that it needs no
	// allocations of its own for its bookkeeping.
	keyBuf       [1]string
	valBuf       [1]*txEntry
	entryBuf     [1]txEntry
	entryBufUsed bool
	orderBuf     [1]string
	doneBuf      [1]func(rev int64) error
	cmpBuf       [1]backend.Compare
	opBuf        [1]backend.Op
}

// smallTx is how many entries a transaction looks up by scanning its keys; beyond, it
// indexes them in a map.
const smallTx = 8

// newTx returns a transaction with no entries.
func newTx(s *Store, ctx context.Context, dryRun bool) *Tx {
	tx := &Tx{s: s, ctx: ctx, dryRun: dryRun}
	tx.keys, tx.vals = tx.keyBuf[:0], tx.valBuf[:0]
	tx.order, tx.done = tx.orderBuf[:0], tx.doneBuf[:0]
	return tx
}

// entry returns the entry of key, if the transaction has one.
func (tx *Tx) entry(key string) (*txEntry, bool) {
	if tx.index != nil {
		e, ok := tx.index[key]
		return e, ok
	}
	for i, k := range tx.keys {
		if k == key {
			return tx.vals[i], true
		}
	}
	return nil, false
}

// newEntry adds an entry for key, which has none, and returns it.
func (tx *Tx) newEntry(key string, e txEntry) *txEntry {
	var p *txEntry
	if !tx.entryBufUsed {
		tx.entryBufUsed = true
		p = &tx.entryBuf[0]
		*p = e
	} else {
		p = &e
	}
	tx.keys, tx.vals = append(tx.keys, key), append(tx.vals, p)
	if tx.index != nil {
		tx.index[key] = p
	} else if len(tx.keys) > smallTx {
		tx.index = make(map[string]*txEntry, 2*len(tx.keys))
		for i, k := range tx.keys {
			tx.index[k] = tx.vals[i]
		}
	}
	return p
}

// forget drops the entry of key, which must be neither written nor read by anything
// but the caller.
func (tx *Tx) forget(key string) {
	for i, k := range tx.keys {
		if k == key {
			tx.keys = append(tx.keys[:i], tx.keys[i+1:]...)
			tx.vals = append(tx.vals[:i], tx.vals[i+1:]...)
			break
		}
	}
	if tx.index != nil {
		delete(tx.index, key)
	}
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
		tx := newTx(s, ctx, dryRun)
		err := fn(tx)
		if err == nil {
			var rev int64
			rev, err = tx.commit()
			if err == nil {
				return rev, nil
			}
			if tx.assumed && !tx.committed {
				// What the commit refused may be the assumption: the next run
				// reads, and is not a retry of a conflict.
				attempt--
				continue
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
	if e, ok := tx.entry(key); ok {
		return e, nil
	}
	kv, err := tx.s.b.Get(tx.ctx, key, 0)
	e := txEntry{read: true}
	switch {
	case err == nil:
		e.value, e.readRev, e.rev = kv.Value, kv.ModRevision, kv.ModRevision
	case errors.Is(err, backend.ErrKeyNotFound):
	default:
		return nil, backendError(err)
	}
	return tx.newEntry(key, e), nil
}

// put records a write of key.
func (tx *Tx) put(key string, value []byte) {
	e, ok := tx.entry(key)
	if !ok {
		e = tx.newEntry(key, txEntry{})
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
	stored := objcodec.DeepCopy(obj)
	stored.GetObjectMeta().ResourceVersion = "" // the revision is the backend's
	e, _ := tx.entry(key)
	e.kind, e.obj = k, stored
}

// del records a delete of key.
func (tx *Tx) del(key string) { tx.put(key, nil) }

// onCommit registers fn to run with the commit revision once the transaction commits
// (with 0 on a dry run).
func (tx *Tx) onCommit(fn func(rev int64) error) { tx.done = append(tx.done, fn) }

func (tx *Tx) commit() (int64, error) {
	t := backend.Txn{Compares: tx.readCompares(tx.cmpBuf[:0]), Ops: tx.opBuf[:0]}
	for _, key := range tx.order {
		e, _ := tx.entry(key)
		if e.value == nil {
			if !e.read || e.readRev != 0 {
				t.Ops = append(t.Ops, backend.Op{Key: key, Delete: true})
			}
			continue
		}
		t.Ops = append(t.Ops, backend.Op{Key: key, Value: e.value})
	}
	if !tx.dryRun && len(t.Ops) > 0 {
		t.Ops = tx.appendRecordOps(t.Ops) // tracker_persist.go
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
			if e, _ := tx.entry(key); e.obj != nil {
				tx.s.track.offer(key, e.value, summarize(e.kind, key, e.obj.GetObjectMeta()))
			}
		}
		var start time.Time
		if tx.s.opts.Observer != nil {
			start = time.Now()
		}
		res, err := tx.s.b.Txn(tx.ctx, t)
		tx.s.observeCommit(start, res, err)
		if err != nil || !res.Succeeded {
			// Nothing was written: take the offers back.
			for _, key := range tx.order {
				if e, _ := tx.entry(key); e.obj != nil {
					tx.s.track.take(key, e.value)
				}
			}
			if err != nil {
				return 0, backendError(err)
			}
			return 0, errRetry
		}
		rev = res.Revision
		tx.committed = true
		tx.rev, tx.rv = rev, formatRV(rev)
		for _, key := range tx.order {
			if e, _ := tx.entry(key); e.obj != nil {
				if c := tx.s.resultCheck(); c != nil {
					c.checkResult(e.kind, key, e.value, e.obj)
				}
				tx.s.cache.PutRV(key, rev, tx.rv, len(e.value), e.obj)
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

// readCompares appends to dst the compares that make the commit depend on what the
// transaction read: each key at the revision it was read, each listed range (Tx.List)
// unchanged since it was listed.
func (tx *Tx) readCompares(dst []backend.Compare) []backend.Compare {
	for i, e := range tx.vals {
		if e.read {
			dst = append(dst, backend.Compare{Key: tx.keys[i], ModRevision: e.readRev})
		}
	}
	for _, g := range tx.guards {
		dst = append(dst, backend.Compare{Key: g.prefix, ModRevision: g.rev, Prefix: true})
	}
	return dst
}

// readsHold reports whether every key the transaction read still has the revision
// it was read at (trivially so for a single read).
func (tx *Tx) readsHold() (bool, error) {
	t := backend.Txn{Compares: tx.readCompares(nil)}
	if len(t.Compares) < 2 && len(tx.guards) == 0 {
		return true, nil
	}
	res, err := tx.s.b.Txn(tx.ctx, t)
	if err != nil {
		return false, backendError(err)
	}
	return res.Succeeded, nil
}

// formatRV is formatRV(rev), without building the commit's revision again.
func (tx *Tx) formatRV(rev int64) string {
	if tx.committed && rev == tx.rev {
		return tx.rv
	}
	return formatRV(rev)
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
	key := objectKey(k, namespace, name)
	e, err := tx.get(key)
	if err != nil {
		return err
	}
	if e.value == nil {
		return resource.NewNotFound(k, name)
	}
	return tx.s.decodeTo(k, key, e.rev, e.value, e.rev, out)
}
