package memdb

import (
	"context"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Txn applies t atomically: when every Compare holds, every Op is applied at one new
// revision, one more than the current; otherwise nothing is, and the result names the
// first Compare that failed. A transaction whose ops change nothing (no ops, or only
// deletes of absent keys) creates no revision. Values are kept as given, not copied
// (backend.Op): the caller must not change them afterwards. Writers never wait for
// watchers.
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

	failed, err := backendkit.FailedCompare(t.Compares, func(key string) (int64, error) {
		if prev, ok := b.tree.Get([]byte(key)); ok {
			return prev.(*row).modRev, nil
		}
		return 0, nil
	}, func(prefix string) (int64, error) {
		it := b.tree.Root().Iterator()
		it.SeekPrefix([]byte(prefix))
		var top int64
		for _, o, ok := it.Next(); ok; _, o, ok = it.Next() {
			top = max(top, o.(*row).modRev)
		}
		return top, nil
	})
	if err != nil {
		return backend.TxnResult{}, err
	}
	if failed >= 0 {
		return backend.TxnResult{Revision: cur, FailedCompare: failed}, nil
	}

	// Look every key up before the first write, in the tree as of cur.
	prevs := make([]*row, len(t.Ops))
	changes := 0
	for i, op := range t.Ops {
		if prev, ok := b.tree.Get([]byte(op.Key)); ok {
			prevs[i] = prev.(*row)
		}
		if !op.Delete || prevs[i] != nil {
			changes++
		}
	}
	if changes == 0 {
		return backend.TxnResult{Succeeded: true, Revision: cur, FailedCompare: -1}, nil
	}

	rev := cur + 1
	tx := b.tree.Txn()
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
			tx.Delete([]byte(op.Key))
			events = append(events, backend.Event{
				Type: backend.EventDelete, Revision: rev,
				KV: backend.KV{Key: op.Key, ModRevision: rev}, PrevKV: prevKV,
			})
			continue
		}
		// The value is ours now (backend.Op): it is kept as given.
		value := op.Value
		if value == nil {
			value = []byte{}
		}
		r := &row{key: op.Key, value: value, createRev: rev, modRev: rev}
		charged += int64(len(r.value))
		if prev != nil {
			r.createRev = prev.createRev
		}
		tx.Insert([]byte(op.Key), r)
		events = append(events, backend.Event{Type: backend.EventPut, Revision: rev, KV: r.kv(), PrevKV: prevKV})
	}
	b.tree = tx.CommitOnly() // nothing waits on the tree's mutation channels
	b.publish(revision{rev: rev, snap: b.tree, events: events, bytes: charged})
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
