package badger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Errors of [Open], checked with [errors.Is].
var (
	// ErrLocked is returned by Open when another Backend, in this process or
	// another, has the directory open.
	ErrLocked = errors.New("badger: directory is in use by another open backend")
	// ErrDataLoss is returned by Open when the directory holds an older revision
	// than one it had durably committed before: a file was truncated, damaged or
	// removed. The data is not opened: restore it from a backup or, to open what is
	// left as it is, remove the file mgmt-durable-revision from the directory.
	ErrDataLoss = errors.New("badger: the directory lost durably committed revisions")
	// ErrCorrupt is returned when a file or a record of the directory does not
	// decode: by Open for a table or a MANIFEST, by a read for a record.
	ErrCorrupt = errors.New("badger: corrupt data")
	// ErrLayout is returned by Open when the directory holds data in a layout this
	// version of the package does not read: one written by an earlier version (layout
	// 1 kept each current value beside its history) or by a later one. Nothing is
	// changed: open it with the version that wrote it, and move the objects over
	// through the store (list them from the old backend, create them in a new one).
	ErrLayout = errors.New("badger: the directory holds data in another layout")
)

var (
	_ backend.Backend    = (*Backend)(nil)
	_ backend.Compactor  = (*Backend)(nil)
	_ backend.HeadGetter = (*Backend)(nil)
)

// Backend is a [backend.Backend] and [backend.Compactor] stored in a badger
// database. Build it with [Open]; the zero value is not usable. It is safe for
// concurrent use.
type Backend struct {
	opts Options
	dir  string
	db   *dgbadger.DB
	log  *slog.Logger
	// committedHook, set only by tests, runs in the committer after a commit is
	// visible in badger and before its revision is published.
	committedHook atomic.Pointer[func()]

	// The queue of write transactions, taken by the committer goroutine.
	qmu     sync.Mutex
	queue   []*txnReq
	qclosed bool
	kick    chan struct{} // capacity 1: the queue has news
	// committing is set while a batch commits, by the committer goroutine or by a
	// lone writer committing its own transaction (see Txn); idle, on qmu, is
	// broadcast when it is cleared.
	committing bool
	idle       *sync.Cond
	// Guarded by committing: how long the last batch took to commit, and the
	// writers seen at its end (see commitLoop).
	lastCommit time.Duration
	want       int

	// mu guards what readers and watchers look at. The committer holds it only to
	// publish a commit.
	mu        sync.RWMutex
	rev       int64 // the last committed revision
	compacted int64 // the compaction point: revisions below it are not readable
	ring      ring  // the events of the latest revisions, for watchers
	notify    chan struct{}

	// closed is set by Close; ops is held shared by every call that uses db, and
	// exclusively by Close before it closes db.
	closed atomic.Bool
	ops    sync.RWMutex
	done   chan struct{} // closed by Close: ends watchers and background loops

	committerDone chan struct{}
	recent        recentValues    // the committer's: values it wrote last, for the next events' PrevKV
	background    sync.WaitGroup  // background loops
	hub           *backendkit.Hub // runs the watchers; Close waits on it

	// failed is the first error of a commit: the state on disk is then unknown, and
	// every later write fails with it until the backend is reopened.
	failed atomic.Pointer[error]

	// compactMu serializes compactions; purged is the oldest revision whose events
	// are still on disk (purging runs from it up to the compaction point).
	compactMu sync.Mutex
	purged    int64
	// compactKick asks the background loop for an early compaction.
	compactKick chan struct{}

	// mark is the last revision written to the durable-revision file.
	mark int64

	// batches and txns count the badger commits of the committer and the
	// transactions they carried, for tests and benchmarks.
	batches, txns atomic.Int64
	// inline counts the transactions their lone writer committed itself (see Txn).
	inline atomic.Int64
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Compactor = (*Backend)(nil)
)

// markFile is the file, next to badger's, that records a revision known to be on
// stable storage. Open refuses a directory whose data is older (see ErrDataLoss).
const markFile = "mgmt-durable-revision"

// markInterval is how often a backend with synced writes records its revision in
// markFile.
const markInterval = time.Second

// Open opens the backend stored in dir, creating it if needed, or an in-memory one
// when opts.InMemory is set (dir must then be ""). It fails with [ErrLocked] when
// another Backend has dir open, with [ErrDataLoss] when dir holds less than it had
// durably committed, and with [ErrCorrupt] when a table of dir is damaged. The
// backend resumes at the revision it had: revisions never go back across a restart.
// Close it with [Backend.Close].
func Open(dir string, opts Options) (*Backend, error) {
	opts = opts.withDefaults()
	switch {
	case opts.InMemory && dir != "":
		return nil, fmt.Errorf("%w: an in-memory backend takes no directory (got %q)", backend.ErrInvalidArgument, dir)
	case !opts.InMemory && dir == "":
		return nil, fmt.Errorf("%w: no directory given", backend.ErrInvalidArgument)
	}
	log := opts.Logger
	bo := opts.badgerOptions(dir, log)
	var mark int64
	if !opts.InMemory {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("badger: open %s: %w", dir, err)
		}
		if err := checkTables(dir, bo); err != nil {
			return nil, err
		}
		var err error
		if mark, err = readMark(dir); err != nil {
			return nil, err
		}
	}
	db, err := dgbadger.Open(bo)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("%w: %s (%v)", ErrLocked, dir, err)
		}
		return nil, fmt.Errorf("badger: open %s: %w", dir, err)
	}
	if log == nil {
		log = discardLogger()
	}
	b := &Backend{
		opts:          opts,
		dir:           dir,
		db:            db,
		log:           log,
		kick:          make(chan struct{}, 1),
		notify:        make(chan struct{}),
		done:          make(chan struct{}),
		committerDone: make(chan struct{}),
		compactKick:   make(chan struct{}, 1),
		mark:          mark,
	}
	b.idle = sync.NewCond(&b.qmu)
	b.hub = backendkit.NewHub((*watchSource)(b), b.done, opts.WatchBuffer)
	if err := b.recoverState(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("badger: open %s: %w", dir, err)
	}
	if b.rev < mark {
		_ = db.Close()
		return nil, fmt.Errorf("%w: %s is at revision %d, but revision %d had been committed to stable storage",
			ErrDataLoss, dir, b.rev, mark)
	}
	b.ring.init()
	go b.commitLoop()
	b.background.Add(1)
	go b.backgroundLoop()
	return b, nil
}

// recoverState reads the revision, the compaction point and the oldest event kept,
// and checks that the event log ends at the revision.
func (b *Backend) recoverState() error {
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	rev, err := readRevision(txn)
	if err != nil {
		return err
	}
	if err := b.checkLayout(txn, rev); err != nil {
		return err
	}
	compacted, err := readInt(txn, keyCompact)
	if err != nil {
		return err
	}
	first, last := int64(0), int64(0)
	it := txn.NewIterator(dgbadger.IteratorOptions{Prefix: prefixEvents})
	it.Rewind()
	if it.Valid() {
		first, err = parseEventKey(it.Item().Key())
	}
	it.Close()
	if err != nil {
		return err
	}
	rit := txn.NewIterator(dgbadger.IteratorOptions{Prefix: prefixEvents, Reverse: true})
	rit.Seek(append(append([]byte{}, prefixEvents...), 0xff))
	if rit.Valid() {
		last, err = parseEventKey(rit.Item().Key())
	}
	rit.Close()
	if err != nil {
		return err
	}
	if last != rev || compacted > rev {
		return fmt.Errorf("%w: revision %d, last event at %d, compaction point %d", ErrCorrupt, rev, last, compacted)
	}

	b.rev, b.compacted = rev, compacted
	b.purged = first
	if first == 0 {
		b.purged = rev + 1
	}
	return nil
}

// checkLayout checks that the data is in this package's layout, and records the
// layout in a backend never written.
func (b *Backend) checkLayout(txn *dgbadger.Txn, rev int64) error {
	got, err := readInt(txn, keyLayout)
	switch {
	case err != nil:
		return err
	case got == layout:
		return nil
	case got != 0:
		return fmt.Errorf("%w: layout %d, this version reads layout %d", ErrLayout, got, layout)
	case rev != 0:
		return fmt.Errorf("%w: layout 1 (at revision %d), this version reads layout %d", ErrLayout, rev, layout)
	}
	return b.db.Update(func(txn *dgbadger.Txn) error { return txn.Set(keyLayout, encodeInt(layout)) })
}

// Revision returns the current revision: that of the last transaction that changed
// something, 0 for a backend never written.
func (b *Backend) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if b.closed.Load() {
		return 0, backend.ErrClosed
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.rev, nil
}

// Dir returns the directory the backend is stored in ("" in memory).
func (b *Backend) Dir() string { return b.dir }

// Close waits for the transactions already queued, ends every watcher with
// [backend.ErrClosed], stops the background work and closes badger, which flushes
// its memtable to disk. Every later call, Close included, returns
// [backend.ErrClosed].
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed.Load() {
		b.mu.Unlock()
		return backend.ErrClosed
	}
	b.closed.Store(true)
	close(b.done)
	b.mu.Unlock()

	b.qmu.Lock()
	b.qclosed = true
	b.qmu.Unlock()
	b.wake()
	<-b.committerDone
	b.background.Wait()
	b.hub.Wait()

	b.ops.Lock() // no read is using db any more
	defer b.ops.Unlock()
	err := b.db.Close()
	if err == nil && !b.opts.InMemory && b.failed.Load() == nil {
		b.mu.RLock()
		rev := b.rev
		b.mu.RUnlock()
		if rev > b.mark {
			err = writeMark(b.dir, rev)
		}
	}
	if err != nil {
		return fmt.Errorf("badger: close %s: %w", b.dir, err)
	}
	return nil
}

// enter starts a call that reads db: it fails when ctx is done or the backend is
// closed. On success the caller must call b.ops.RUnlock.
func (b *Backend) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.ops.RLock()
	if b.closed.Load() {
		b.ops.RUnlock()
		return backend.ErrClosed
	}
	return nil
}

// compactedLoad returns the compaction point.
func (b *Backend) compactedLoad() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.compacted
}

// oldestLocked returns the oldest readable revision (0 when nothing was written).
// b.mu must be held.
func (b *Backend) oldestLocked() int64 {
	if b.rev == 0 {
		return 0
	}
	return max(b.compacted, 1)
}

// published waits until the committer has published revision rev, so that no read
// reports a revision that [Backend.Revision] and the watchers have not reached:
// badger makes a commit visible to readers a moment before the committer publishes
// its revision, and a read may take its snapshot in between. A store that lists at
// the revision a read reported would otherwise be told that revision is in the
// future.
func (b *Backend) published(ctx context.Context, rev int64) error {
	b.mu.RLock()
	for b.rev < rev {
		ch := b.notify
		b.mu.RUnlock()
		select {
		case <-ch:
		case <-b.done:
			return backend.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
		b.mu.RLock()
	}
	b.mu.RUnlock()
	return nil
}

// wakeLocked wakes every watcher waiting for news. b.mu must be held for writing.
func (b *Backend) wakeLocked() {
	close(b.notify)
	b.notify = make(chan struct{})
}

// readRevision returns the revision stored in txn's snapshot.
func readRevision(txn *dgbadger.Txn) (int64, error) { return readInt(txn, keyRevision) }

func readInt(txn *dgbadger.Txn, key []byte) (int64, error) {
	item, err := txn.Get(key)
	if errors.Is(err, dgbadger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v int64
	err = item.Value(func(val []byte) error {
		var err error
		v, err = decodeInt(val)
		return err
	})
	return v, err
}

// errInternal wraps an unexpected badger failure.
func errInternal(err error) error {
	switch {
	case errors.Is(err, dgbadger.ErrDBClosed):
		return backend.ErrClosed
	case errors.Is(err, ErrCorrupt):
		return err
	}
	return fmt.Errorf("badger: %w", err)
}
