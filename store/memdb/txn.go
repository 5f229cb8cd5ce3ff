package memdb

import (
	"context"
	"strings"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Txn applies t atomically: when every Compare holds, every Op is applied at one new
// revision, one more than the current; otherwise nothing is, and the result names the
// first Compare that failed. A transaction whose ops change nothing (no ops, or only
// deletes of absent keys) creates no revision. Values are copied, so the caller may
// reuse its buffers once Txn returns. Writers never wait for watchers.
func (b *Backend) Txn(ctx context.Context, t backend.Txn) (backend.TxnResult, error) {
	if err := backendkit.ValidateTxn(t, 0); err != nil {
		return backend.TxnResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return backend.TxnResult{}, err
	}
	b.wmu.Lock()
	defer b.wmu.Unlock()
	// Only writers change b.rev and b.closed, and they hold wmu: no need for mu here.
	if b.closed {
		return backend.TxnResult{}, backend.ErrClosed
	}
	if err := ctx.Err(); err != nil { // it may have been a long wait for wmu
		return backend.TxnResult{}, err
	}
	cur := b.rev

	tx := b.db.Txn(true)
	defer tx.Abort() // no-op after Commit
	failed, err := backendkit.FailedCompare(t.Compares, func(key string) (int64, error) {
		prev, err := tx.First(kvTable, "id", key)
		if prev == nil || err != nil {
			return 0, err
		}
		return prev.(*row).modRev, nil
	}, func(prefix string) (int64, error) {
		it, err := tx.LowerBound(kvTable, "id", prefix)
		if err != nil {
			return 0, err
		}
		var top int64
		for o := it.Next(); o != nil; o = it.Next() {
			r := o.(*row)
			if !strings.HasPrefix(r.key, prefix) {
				break
			}
			top = max(top, r.modRev)
		}
		return top, nil
	})
	if err != nil {
		return backend.TxnResult{}, errInternal(err)
	}
	if failed >= 0 {
		return backend.TxnResult{Revision: cur, FailedCompare: failed}, nil
	}

	// Look every key up before the first write: a go-memdb write transaction reads
	// its own modified indexes through a clone.
	prevs := make([]*row, len(t.Ops))
	changes := 0
	for i, op := range t.Ops {
		prev, err := tx.First(kvTable, "id", op.Key)
		if err != nil {
			return backend.TxnResult{}, errInternal(err)
		}
		if prev != nil {
			prevs[i] = prev.(*row)
		}
		if !op.Delete || prev != nil {
			changes++
		}
	}
	if changes == 0 {
		return backend.TxnResult{Succeeded: true, Revision: cur, FailedCompare: -1}, nil
	}

	rev := cur + 1
	events := make([]backend.Event, 0, changes)
	var charged int64
	for i, op := range t.Ops {
		prev := prevs[i]
		var prevKV *backend.KV
		if prev != nil {
			kv := prev.kv()
			prevKV = &kv
			charged += int64(len(prev.value))
		}
		if op.Delete {
			if prev == nil {
				continue
			}
			if err := tx.Delete(kvTable, prev); err != nil {
				return backend.TxnResult{}, errInternal(err)
			}
			events = append(events, backend.Event{
				Type: backend.EventDelete, Revision: rev,
				KV: backend.KV{Key: op.Key, ModRevision: rev}, PrevKV: prevKV,
			})
			continue
		}
		r := &row{key: op.Key, value: append([]byte{}, op.Value...), createRev: rev, modRev: rev}
		charged += int64(len(r.value))
		if prev != nil {
			r.createRev = prev.createRev
		}
		if err := tx.Insert(kvTable, r); err != nil {
			return backend.TxnResult{}, errInternal(err)
		}
		events = append(events, backend.Event{Type: backend.EventPut, Revision: rev, KV: r.kv(), PrevKV: prevKV})
	}
	tx.Commit()
	b.publish(revision{rev: rev, snap: b.db.Snapshot(), events: events, bytes: charged})
	return backend.TxnResult{Succeeded: true, Revision: rev, FailedCompare: -1}, nil
}

// publish makes a committed revision the current one, discards the oldest revisions
// the byte budget no longer affords, and wakes the watchers.
func (b *Backend) publish(r revision) {
	b.mu.Lock()
	slot := &b.ring[r.rev%int64(len(b.ring))]
	b.histBytes += r.bytes - slot.bytes // the revision it replaces leaves the count bound
	*slot = r
	b.rev = r.rev
	if budget := b.opts.HistoryBytes; budget > 0 {
		for o := b.oldestLocked(); b.histBytes > budget && o < r.rev; o++ {
			b.dropLocked(o)
			b.floor = o + 1
		}
	}
	b.wakeLocked()
	b.mu.Unlock()
}

// dropLocked discards kept revision rev. b.mu must be held for writing.
func (b *Backend) dropLocked(rev int64) {
	slot := &b.ring[rev%int64(len(b.ring))]
	if slot.rev == rev {
		b.histBytes -= slot.bytes
		*slot = revision{}
	}
}

// wakeLocked wakes every watcher waiting for news. b.mu must be held for writing.
func (b *Backend) wakeLocked() {
	close(b.notify)
	b.notify = make(chan struct{})
}
