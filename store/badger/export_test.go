package badger

import (
	"bytes"

	dgbadger "github.com/dgraph-io/badger/v4"
)

// LiveWatchers returns the number of watcher goroutines still running.
func LiveWatchers(b *Backend) int { return b.hub.Live() }

// WriteMark records the current revision in the durable-revision file now.
func WriteMark(b *Backend) error {
	b.mu.RLock()
	rev := b.rev
	b.mu.RUnlock()
	return writeMark(b.dir, rev)
}

// Batches returns how many badger commits the committer made and how many
// transactions they carried.
func Batches(b *Backend) (batches, txns int64) { return b.batches.Load(), b.txns.Load() }

// InlineCommits returns how many transactions their lone writer committed itself,
// without the committer goroutine.
func InlineCommits(b *Backend) int64 { return b.inline.Load() }

// KeyCounts counts the keys of the current versions, of the history and of the
// event log.
func KeyCounts(b *Backend) (current, history, events int, err error) {
	err = b.db.View(func(txn *dgbadger.Txn) error {
		it := txn.NewIterator(dgbadger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			switch {
			case bytes.HasPrefix(k, prefixCurrent):
				current++
			case bytes.HasPrefix(k, prefixHistory):
				history++
			case bytes.HasPrefix(k, prefixEvents):
				events++
			}
		}
		return nil
	})
	return
}

// SetCommittedHook sets a function the committer runs after each commit is visible
// in badger and before its revision is published; nil removes it.
func SetCommittedHook(b *Backend, f func()) {
	if f == nil {
		b.committedHook.Store(nil)
		return
	}
	b.committedHook.Store(&f)
}
