package badger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
)

// purgeChunk is how many revisions of history one badger transaction of a
// compaction deletes.
const purgeChunk = 256

// maxGCRuns bounds how many value-log files one background collection rewrites.
const maxGCRuns = 4

// Compact discards the history below rev: reads at a revision below it and watches
// starting below it fail with [backend.ErrCompacted], and watchers still behind it end
// with that error. The compaction point is raised and recorded at once; then the
// events and the replaced versions no revision from rev on needs are deleted, a few
// hundred revisions per badger transaction. When ctx ends during the deletion,
// Compact returns and the rest is deleted by the next compaction (the background one
// included); the disk space comes back as badger compacts its tables. Compacting at
// or below the current compaction point does nothing; rev above the current
// revision is [backend.ErrFutureRevision], a negative one
// [backend.ErrInvalidArgument].
func (b *Backend) Compact(ctx context.Context, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := b.enter(ctx); err != nil {
		return err
	}
	defer b.ops.RUnlock()
	b.compactMu.Lock()
	defer b.compactMu.Unlock()

	b.mu.Lock()
	if rev > b.rev {
		cur := b.rev
		b.mu.Unlock()
		return fmt.Errorf("%w: compact at %d, current %d", backend.ErrFutureRevision, rev, cur)
	}
	if rev <= b.compacted {
		b.mu.Unlock()
		return nil
	}
	// Raised before anything is deleted: readers look at it after they take their
	// snapshot (see checkRevision).
	b.compacted = rev
	b.wakeLocked() // watchers blocked on a full channel check whether they are lost
	b.mu.Unlock()

	if err := b.db.Update(func(txn *dgbadger.Txn) error { return txn.Set(keyCompact, encodeInt(rev)) }); err != nil {
		return errInternal(err)
	}
	return b.purge(ctx)
}

// CompactRevision returns the oldest revision still readable: the compaction point,
// at least 1 once something was written, 0 for a backend never written.
func (b *Backend) CompactRevision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if b.closed.Load() {
		return 0, backend.ErrClosed
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.oldestLocked(), nil
}

// purge deletes the history below the compaction point, from b.purged on, one chunk
// of revisions per badger transaction, until it is done, ctx ends or the backend
// closes. b.compactMu must be held.
func (b *Backend) purge(ctx context.Context) error {
	for {
		target := b.compactedLoad()
		if b.purged >= target || b.closed.Load() || ctx.Err() != nil {
			return nil
		}
		to := min(target, b.purged+purgeChunk)
		if err := b.purgeRevisions(b.purged, to, target); err != nil {
			return fmt.Errorf("badger: compaction of revisions %d..%d: %w", b.purged, to-1, err)
		}
		b.purged = to
	}
}

// purgeRevisions deletes the events of revisions from..to-1 and, for every key they
// name, the versions no revision from compacted on can read: every version older than
// the newest one before compacted, and that one too if it is a deletion. Versions
// from compacted-1 on stay: a watch from compacted needs the previous value of its
// first events. The deletions of one key are in one badger transaction, and the
// events go in the last one, so a crash in the middle leaves a state that reads the
// same and that the next compaction finishes.
func (b *Backend) purgeRevisions(from, to, compacted int64) error {
	rtx := b.db.NewTransaction(false)
	defer rtx.Discard()
	keys := map[string]struct{}{}
	var eventKeys [][]byte
	it := rtx.NewIterator(dgbadger.IteratorOptions{Prefix: prefixEvents})
	for it.Seek(eventKey(from)); it.Valid(); it.Next() {
		item := it.Item()
		rev, err := parseEventKey(item.Key())
		if err != nil {
			it.Close()
			return err
		}
		if rev >= to {
			break
		}
		eventKeys = append(eventKeys, item.KeyCopy(nil))
		err = item.Value(func(val []byte) error {
			recs, err := decodeEvents(val)
			for _, r := range recs {
				keys[r.key] = struct{}{}
			}
			return err
		})
		if err != nil {
			it.Close()
			return err
		}
	}
	it.Close()

	keep := compacted - 1 // the newest version at or before it is kept
	wb := &deleteBatch{db: b.db, txn: b.db.NewTransaction(true),
		maxCount: b.db.MaxBatchCount() / 2, maxBytes: b.db.MaxBatchSize() / 2}
	defer func() { wb.txn.Discard() }()
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, key := range sorted {
		dels, err := obsoleteVersions(rtx, key, keep)
		if err != nil {
			return err
		}
		// Oldest first: should the deletions of one key be split over two badger
		// transactions and a crash fall between them, what is left still reads the
		// same (a deletion goes after every version it hides).
		for i := len(dels) - 1; i >= 0; i-- {
			if err := wb.delete(dels[i]); err != nil {
				return err
			}
		}
	}
	for _, k := range eventKeys {
		if err := wb.delete(k); err != nil {
			return err
		}
	}
	return wb.txn.Commit()
}

// obsoleteVersions returns the history keys of key that no revision after keep
// reads, newest first: every version older than the newest one at or before keep,
// and that one too when it is a deletion. The current version is never among them:
// it is the newest version, and a put.
func obsoleteVersions(txn *dgbadger.Txn, key string, keep int64) ([][]byte, error) {
	var dels [][]byte
	it := txn.NewIterator(dgbadger.IteratorOptions{Prefix: historyKeyPrefix(key)})
	defer it.Close()
	kept := false
	for it.Seek(historyKey(key, keep)); it.Valid(); it.Next() { // newest first, from keep down
		item := it.Item()
		if kept {
			dels = append(dels, item.KeyCopy(nil))
			continue
		}
		kept = true
		v, err := historyItem(item, false)
		if err != nil {
			return nil, err
		}
		if v == nil { // a deletion: nothing older is needed, nor the deletion itself
			dels = append(dels, item.KeyCopy(nil))
		}
	}
	return dels, nil
}

// deleteBatch deletes keys in badger transactions of bounded size, committing one
// and starting the next when it is full.
type deleteBatch struct {
	db                 *dgbadger.DB
	txn                *dgbadger.Txn
	count, bytes       int64
	maxCount, maxBytes int64
}

func (w *deleteBatch) delete(k []byte) error {
	if w.count+1 > w.maxCount || w.bytes+int64(len(k))+32 > w.maxBytes {
		if err := w.txn.Commit(); err != nil {
			return err
		}
		w.txn = w.db.NewTransaction(true)
		w.count, w.bytes = 0, 0
	}
	w.count++
	w.bytes += int64(len(k)) + 32
	return w.txn.Delete(k)
}

// backgroundLoop runs the background compaction, the value-log garbage collection
// and the recording of the durable revision, until Close.
func (b *Backend) backgroundLoop() {
	defer b.background.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	var compactTick, gcTick, markTick <-chan time.Time
	autoCompact := b.opts.CompactionInterval > 0 && b.opts.HistoryRevisions > 0
	if autoCompact {
		t := time.NewTicker(b.opts.CompactionInterval)
		defer t.Stop()
		compactTick = t.C
	}
	if b.opts.ValueLogGCInterval > 0 && !b.opts.InMemory {
		t := time.NewTicker(b.opts.ValueLogGCInterval)
		defer t.Stop()
		gcTick = t.C
	}
	if !b.opts.NoSync && !b.opts.InMemory {
		t := time.NewTicker(markInterval)
		defer t.Stop()
		markTick = t.C
	}
	for {
		select {
		case <-b.done:
			return
		case <-compactTick:
			b.autoCompact(ctx)
		case <-b.compactKick:
			if autoCompact {
				b.autoCompact(ctx)
			}
		case <-gcTick:
			if err := b.RunValueLogGC(ctx, b.opts.ValueLogGCDiscardRatio); err != nil && !errors.Is(err, backend.ErrClosed) {
				b.log.Warn("badger backend: value-log garbage collection failed", "dir", b.dir, "err", err)
			}
		case <-markTick:
			b.mu.RLock()
			rev := b.rev
			b.mu.RUnlock()
			if rev > b.mark && b.failed.Load() == nil {
				if err := writeMark(b.dir, rev); err != nil {
					b.log.Warn("badger backend: recording the durable revision failed", "dir", b.dir, "err", err)
				} else {
					b.mark = rev
				}
			}
		}
	}
}

// autoCompact compacts to keep opts.HistoryRevisions revisions, and finishes the
// deletions an earlier compaction left.
func (b *Backend) autoCompact(ctx context.Context) {
	b.mu.RLock()
	target := b.rev - b.opts.HistoryRevisions + 1
	b.mu.RUnlock()
	var err error
	if target > b.compactedLoad() {
		err = b.Compact(ctx, target)
	} else if err = b.enter(ctx); err == nil {
		b.compactMu.Lock()
		err = b.purge(ctx)
		b.compactMu.Unlock()
		b.ops.RUnlock()
	}
	if err != nil && !errors.Is(err, backend.ErrClosed) && !errors.Is(err, context.Canceled) {
		b.log.Warn("badger backend: background compaction failed", "dir", b.dir, "err", err)
	}
}

// RunValueLogGC runs badger's value-log garbage collection now: it rewrites the
// value-log files of which at least discardRatio (0 to 1; 0 means
// [Options].ValueLogGCDiscardRatio) is garbage, one at a time, until none is left,
// at most a few per call, or ctx ends. Values smaller than 1 MiB live in badger's
// tables rather than its value log, so there is seldom much to collect. An
// in-memory backend has no value log: RunValueLogGC does nothing.
func (b *Backend) RunValueLogGC(ctx context.Context, discardRatio float64) error {
	if discardRatio <= 0 || discardRatio >= 1 {
		discardRatio = b.opts.ValueLogGCDiscardRatio
	}
	if err := b.enter(ctx); err != nil {
		return err
	}
	defer b.ops.RUnlock()
	if b.opts.InMemory {
		return nil
	}
	for range maxGCRuns {
		if ctx.Err() != nil || b.closed.Load() {
			return nil
		}
		err := b.db.RunValueLogGC(discardRatio)
		if errors.Is(err, dgbadger.ErrNoRewrite) || errors.Is(err, dgbadger.ErrRejected) {
			return nil
		}
		if err != nil {
			return errInternal(err)
		}
	}
	return nil
}
