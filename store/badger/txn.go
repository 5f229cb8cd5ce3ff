package badger

import (
	"context"
	"errors"
	"fmt"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Limits of one batch of the committer: it takes every queued transaction up to
// these, so that one commit (and one fsync) serves them all.
const (
	maxBatchTxns  = 1024
	maxBatchBytes = 4 << 20 // soft: the transaction that crosses it is the last one
)

// txnReq is a transaction queued for the committer.
type txnReq struct {
	ctx  context.Context
	txn  backend.Txn // its values are the backend's own copies
	res  backend.TxnResult
	err  error
	done chan struct{}
}

// Txn applies t atomically: when every Compare holds, every Op is applied at one new
// revision, one more than the current; otherwise nothing is, and the result names the
// first Compare that failed. A transaction whose ops change nothing (no ops, or only
// deletes of absent keys) creates no revision. Values are copied, so the caller may
// reuse its buffers once Txn returns.
//
// Transactions are queued for one committer goroutine, which takes every queued
// transaction at once, checks their compares in queue order against the state the
// earlier ones leave, gives each successful one the next revision and commits them
// all in one badger transaction: one sync to disk serves the whole batch. A lone
// writer (nothing queued or committing, and no other writer at the last commit)
// commits its own transaction the same way, without the trip through the
// committer. Txn
// returns once its batch is committed (and synced, unless [Options].NoSync). A
// context done before the committer gets to the transaction makes it fail with the
// context's error, without effect; once the committer has taken it, Txn waits for
// the commit. Writers never wait for watchers.
func (b *Backend) Txn(ctx context.Context, t backend.Txn) (backend.TxnResult, error) {
	if err := backendkit.ValidateTxn(t, maxKeyBytes); err != nil {
		return backend.TxnResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.TxnResult{}, err
	}
	if b.closed.Load() {
		return backend.TxnResult{}, backend.ErrClosed
	}
	if errp := b.failed.Load(); errp != nil {
		return backend.TxnResult{}, *errp
	}
	// Copy the values into one buffer: the commit, the event ring and watchers share it.
	size := 0
	for _, op := range t.Ops {
		size += len(op.Value)
	}
	if limit := b.db.MaxBatchSize() / 3; int64(size) > limit {
		return backend.TxnResult{}, fmt.Errorf("%w: %w: %w: the transaction writes %d bytes of values, more than %d (raise Options.MemTableSize)",
			backend.ErrInvalidArgument, backend.ErrTxnTooLarge, dgbadger.ErrTxnTooBig, size, limit)
	}
	buf := make([]byte, 0, size)
	ops := make([]backend.Op, len(t.Ops))
	for i, op := range t.Ops {
		ops[i] = backend.Op{Key: op.Key, Delete: op.Delete}
		if !op.Delete {
			start := len(buf)
			buf = append(buf, op.Value...)
			ops[i].Value = buf[start:len(buf):len(buf)]
		}
	}
	req := &txnReq{ctx: ctx, txn: backend.Txn{Compares: t.Compares, Ops: ops}, done: make(chan struct{})}
	b.qmu.Lock()
	if b.qclosed {
		b.qmu.Unlock()
		return backend.TxnResult{}, backend.ErrClosed
	}
	if !b.committing && len(b.queue) == 0 && b.want <= 1 {
		// A lone writer: it commits its own transaction, sparing the two goroutine
		// switches of a trip through the committer (each one a wake-up on a busy
		// machine).
		b.committing = true
		b.qmu.Unlock()
		b.inline.Add(1)
		b.commitBatches([]*txnReq{req})
		return req.res, req.err
	}
	b.queue = append(b.queue, req)
	b.qmu.Unlock()
	b.wake()
	<-req.done
	return req.res, req.err
}

// wake tells the committer that the queue has news.
func (b *Backend) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// maxGroupWait bounds how long the committer waits for more transactions before it
// commits a batch (see commitLoop).
const maxGroupWait = time.Millisecond

// commitLoop is the committer goroutine: it takes the queued transactions and
// commits them in batches, until Close, after which it commits what was queued
// before and exits. A writer that finds no other writer about (nothing queued,
// nothing committing, and at most one writer seen at the end of the last commit)
// commits its own transaction instead (see Txn); the committer waits for it.
//
// Left alone, concurrent writers split into two cohorts that alternate: while one
// batch commits the next queues up, and the writers of the first come back just
// after the committer took the second, so each commit (and each sync) serves half
// of them. So, when a commit ends, the committer counts the writers it has seen:
// those of the batch it just committed and those that queued meanwhile; when fewer
// are queued at the next batch, it waits for the others, at most half of the last
// commit's duration and maxGroupWait. With synced writes that is a fraction of a
// sync, which a commit costs mostly whatever its size; without sync a few
// microseconds. A lone writer never waits: it is all the writers seen.
func (b *Backend) commitLoop() {
	defer close(b.committerDone)
	for {
		b.qmu.Lock()
		for b.committing { // a lone writer is committing its own transaction
			b.idle.Wait()
		}
		reqs, closed := b.queue, b.qclosed
		b.queue = nil
		if len(reqs) > 0 {
			b.committing = true
		}
		want, lastCommit := b.want, b.lastCommit
		b.qmu.Unlock()
		if len(reqs) == 0 {
			if closed {
				return
			}
			<-b.kick
			continue
		}
		if wait := min(lastCommit/2, maxGroupWait); len(reqs) < want && wait > 0 && !closed {
			reqs = b.gather(reqs, want, wait)
		}
		b.commitBatches(reqs)
	}
}

// commitBatches commits reqs, in as many batches as their number and size need, and
// then records for the next batch how long that took and how many writers it saw:
// those of reqs and those that queued meanwhile. b.committing must be set; it is
// cleared.
func (b *Backend) commitBatches(reqs []*txnReq) {
	start := time.Now()
	n := len(reqs)
	for len(reqs) > 0 {
		k := b.commitBatch(reqs[:min(len(reqs), maxBatchTxns)])
		reqs = reqs[k:]
	}
	b.qmu.Lock()
	b.lastCommit = time.Since(start)
	b.want = n + len(b.queue)
	b.committing = false
	b.idle.Broadcast()
	b.qmu.Unlock()
}

// gather adds to reqs what is queued until it holds want transactions, wait has
// passed, or the backend is closing.
func (b *Backend) gather(reqs []*txnReq, want int, wait time.Duration) []*txnReq {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(reqs) < want {
		select {
		case <-b.kick:
		case <-timer.C:
			want = 0
		}
		b.qmu.Lock()
		reqs = append(reqs, b.queue...)
		b.queue = nil
		if b.qclosed {
			want = 0
		}
		b.qmu.Unlock()
	}
	return reqs
}

// revEvents is one committed revision and its events, as the ring keeps them.
type revEvents struct {
	rev    int64
	events []backend.Event
	size   int // bytes of keys and values, for the ring's bound
}

// commitBatch applies a prefix of reqs in one badger transaction, commits it,
// publishes the new revisions and answers the transactions. It returns how many of
// reqs it answered (at least one).
func (b *Backend) commitBatch(reqs []*txnReq) int {
	if errp := b.failed.Load(); errp != nil {
		for _, r := range reqs {
			r.err = *errp
			close(r.done)
		}
		return len(reqs)
	}
	wtx := b.db.NewTransaction(true)
	defer wtx.Discard()
	b.mu.RLock()
	rev := b.rev // only this goroutine changes it
	b.mu.RUnlock()
	start := rev
	var pubs []revEvents
	n, bytes := 0, 0
	for i, r := range reqs {
		if bytes >= maxBatchBytes {
			break
		}
		w, err := b.apply(wtx, r, &rev, &pubs)
		if err != nil {
			// Some of r's writes may be in wtx: start over without r.
			wtx.Discard()
			if i > 0 {
				return b.commitBatch(reqs[:i])
			}
			if errors.Is(err, dgbadger.ErrTxnTooBig) {
				r.err = fmt.Errorf("%w: %w: %w: the transaction is too large for one badger transaction (raise Options.MemTableSize)",
					backend.ErrInvalidArgument, backend.ErrTxnTooLarge, err)
			} else {
				r.err = errInternal(err)
			}
			close(r.done)
			return 1
		}
		bytes += w
		n++
	}
	batch := reqs[:n]
	if rev > start {
		err := wtx.Set(keyRevision, encodeInt(rev))
		if errors.Is(err, dgbadger.ErrTxnTooBig) && n > 1 {
			wtx.Discard() // the batch is full to the last byte: one transaction fewer
			return b.commitBatch(reqs[:n-1])
		}
		if errors.Is(err, dgbadger.ErrTxnTooBig) {
			batch[0].err = fmt.Errorf("%w: %w: %w: the transaction is too large for one badger transaction (raise Options.MemTableSize)",
				backend.ErrInvalidArgument, backend.ErrTxnTooLarge, err)
			close(batch[0].done)
			return 1
		}
		if err == nil {
			err = wtx.Commit()
		}
		if err != nil {
			err = fmt.Errorf("badger: commit of revisions %d..%d failed, the backend refuses writes until it is reopened: %w",
				start+1, rev, err)
			b.failed.CompareAndSwap(nil, &err)
			b.log.Error("badger backend: commit failed", "dir", b.dir, "err", err)
			for _, r := range batch {
				r.err = err
				close(r.done)
			}
			return n
		}
		if hook := b.committedHook.Load(); hook != nil {
			(*hook)()
		}
		b.batches.Add(1)
		b.txns.Add(int64(n))
		b.mu.Lock()
		b.rev = rev
		for _, p := range pubs {
			b.ring.push(p)
		}
		b.wakeLocked()
		behind := rev - b.compacted
		b.mu.Unlock()
		// After the publication: reads of the new revision wait for it.
		for _, p := range pubs {
			b.recent.record(p.events)
		}
		if h := b.opts.HistoryRevisions; h > 0 && b.opts.CompactionInterval > 0 && behind > 2*h {
			select {
			case b.compactKick <- struct{}{}:
			default:
			}
		}
	}
	for _, r := range batch {
		close(r.done)
	}
	return n
}

// apply evaluates r against the state wtx holds (the committed state plus the
// earlier transactions of the batch) and, when its compares hold and it changes
// something, writes it to wtx at revision *rev+1 and advances *rev. It records r's
// result in r, and returns the bytes written. An error means r's writes may be
// half in wtx.
func (b *Backend) apply(wtx *dgbadger.Txn, r *txnReq, rev *int64, pubs *[]revEvents) (int, error) {
	r.res, r.err = backend.TxnResult{}, nil // a batch that started over applies r again
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, nil
	}
	t := r.txn
	// The versions the compares read, for the ops on the same keys (a create
	// compares and writes one key): remembered for a few compares only, so that a
	// large transaction does not scan them for each of its ops.
	type read struct {
		key string
		v   *version
	}
	var reads []read
	const maxReads = 4
	failed, err := backendkit.FailedCompare(t.Compares, func(key string) (int64, error) {
		v, err := getCurrent(wtx, key)
		if err == nil && len(t.Compares) <= maxReads {
			reads = append(reads, read{key, v})
		}
		if v == nil || err != nil {
			return 0, err
		}
		return v.modRev, nil
	}, func(prefix string) (int64, error) { return maxModRevUnder(wtx, prefix) })
	if err != nil {
		return 0, err
	}
	if failed >= 0 {
		r.res = backend.TxnResult{Revision: *rev, FailedCompare: failed}
		return 0, nil
	}
	prevs := make([]*version, len(t.Ops))
	changes := 0
ops:
	for i, op := range t.Ops {
		for _, rd := range reads {
			if rd.key == op.Key {
				prevs[i] = rd.v
				if !op.Delete || rd.v != nil {
					changes++
				}
				continue ops
			}
		}
		v, err := getCurrent(wtx, op.Key)
		if err != nil {
			return 0, err
		}
		prevs[i] = v
		if !op.Delete || v != nil {
			changes++
		}
	}
	if changes == 0 {
		r.res = backend.TxnResult{Succeeded: true, Revision: *rev, FailedCompare: -1}
		return 0, nil
	}

	next := *rev + 1
	events := make([]backend.Event, 0, changes)
	records := make([]eventRecord, 0, changes)
	written := 0
	set := func(k, v []byte) error {
		written += len(k) + len(v)
		return wtx.Set(k, v)
	}
	for i, op := range t.Ops {
		prev := prevs[i]
		var prevKV *backend.KV
		rec := eventRecord{key: op.Key}
		if prev != nil {
			// The replaced version stays where it is, in h/: only its value is read,
			// for the event.
			value, ok := b.recent.get(op.Key, prev.modRev)
			if !ok {
				pv, err := versionExact(wtx, op.Key, prev.modRev)
				if err != nil {
					return 0, err
				}
				value = pv.value
			}
			prevKV = &backend.KV{Key: op.Key, Value: value, CreateRevision: prev.createRev, ModRevision: prev.modRev}
			rec.prevModRev, rec.prevCreateRev = prev.modRev, prev.createRev
		}
		if op.Delete {
			if prev == nil {
				continue
			}
			if err := set(historyKey(op.Key, next), encodeHistory(0, nil, true)); err != nil {
				return 0, err
			}
			written += len(op.Key)
			if err := wtx.Delete(currentKey(op.Key)); err != nil {
				return 0, err
			}
			rec.typ = backend.EventDelete
			events = append(events, backend.Event{
				Type: backend.EventDelete, Revision: next,
				KV: backend.KV{Key: op.Key, ModRevision: next}, PrevKV: prevKV,
			})
			records = append(records, rec)
			continue
		}
		create := next
		if prev != nil {
			create = prev.createRev
		}
		value := op.Value
		if value == nil {
			value = []byte{}
		}
		if err := set(historyKey(op.Key, next), encodeHistory(create, value, false)); err != nil {
			return 0, err
		}
		if err := set(currentKey(op.Key), encodeCurrent(create, next)); err != nil {
			return 0, err
		}
		rec.typ, rec.createRev = backend.EventPut, create
		events = append(events, backend.Event{
			Type: backend.EventPut, Revision: next,
			KV:     backend.KV{Key: op.Key, Value: value, CreateRevision: create, ModRevision: next},
			PrevKV: prevKV,
		})
		records = append(records, rec)
	}
	if err := set(eventKey(next), encodeEvents(records)); err != nil {
		return 0, err
	}
	*rev = next
	r.res = backend.TxnResult{Succeeded: true, Revision: next, FailedCompare: -1}
	*pubs = append(*pubs, revEvents{rev: next, events: events, size: written})
	return written, nil
}

// getCurrent returns where the current version of key is, as txn sees it (its
// revisions, without its value: see loadCurrent), nil when the key does not exist.
func getCurrent(txn *dgbadger.Txn, key string) (*version, error) {
	item, err := txn.Get(currentKey(key))
	if errors.Is(err, dgbadger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v version
	err = item.Value(func(val []byte) error {
		var err error
		v, err = decodeCurrent(val)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// maxModRevUnder returns the greatest ModRevision of the current keys under prefix,
// as txn sees them (its own pending writes included), 0 when there are none.
func maxModRevUnder(txn *dgbadger.Txn, prefix string) (int64, error) {
	opts := dgbadger.DefaultIteratorOptions
	opts.Prefix = currentKey(prefix)
	it := txn.NewIterator(opts)
	defer it.Close()
	var top int64
	for it.Rewind(); it.Valid(); it.Next() {
		var v version
		err := it.Item().Value(func(val []byte) error {
			var err error
			v, err = decodeCurrent(val)
			return err
		})
		if err != nil {
			return 0, err
		}
		top = max(top, v.modRev)
	}
	return top, nil
}

// loadCurrent returns the current version of key with its value (a copy), nil when
// the key does not exist.
func loadCurrent(txn *dgbadger.Txn, key string) (*version, error) {
	v, err := getCurrent(txn, key)
	if v == nil || err != nil {
		return nil, err
	}
	return versionExact(txn, key, v.modRev)
}

// maxKeyBytes is the longest key: badger takes keys of up to 65,000 bytes, and a
// history key holds the key escaped, with a prefix and a revision.
const maxKeyBytes = 30000
