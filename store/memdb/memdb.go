package memdb

import (
	"context"
	"fmt"
	"sync"

	iradix "github.com/hashicorp/go-immutable-radix"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// DefaultHistoryRevisions is the number of revisions kept when
// [Options].HistoryRevisions is zero or less.
const DefaultHistoryRevisions = 10000

// DefaultHistoryBytes is the byte budget of the history when [Options].HistoryBytes
// is zero: 64 MiB.
const DefaultHistoryBytes = 64 << 20

// DefaultWatchBuffer is the capacity of a watcher's channel when [Options].WatchBuffer
// is zero or less.
const DefaultWatchBuffer = 64

// Options configure a [Backend]. The zero value gives the defaults.
type Options struct {
	// HistoryRevisions is how many of the most recent revisions, the current one
	// included, are kept: a read at a past revision and a watch replay are served from
	// them. A read or a watch start older than that fails with
	// [backend.ErrCompacted], and a watcher that falls that far behind ends with it.
	// Memory grows with it: each kept revision holds the bytes its transaction wrote
	// (the same bytes the data holds, not a copy) and the tree nodes it replaced.
	// Zero or less means [DefaultHistoryRevisions] (10000).
	HistoryRevisions int
	// HistoryBytes bounds the history by size as well: a revision is charged the
	// bytes of the values its transaction wrote and of the values it replaced or
	// deleted (those the history keeps alive), and the oldest revisions are
	// discarded, as by the count, while the kept ones are charged more than
	// HistoryBytes. The current revision is always kept. Large values written often
	// thus shorten the history (a watcher or a paged list then meets
	// [backend.ErrCompacted] sooner) instead of growing memory: with the default, 300
	// updates of a 1.4 MB object keep about 23 revisions, not 300. Zero means
	// [DefaultHistoryBytes] (64 MiB); a negative value bounds by count only.
	HistoryBytes int64
	// WatchBuffer is the capacity of each watcher's event channel: how many events a
	// watcher's goroutine hands over ahead of its reader. It never blocks writers, who
	// do not wait for watchers at all; it only smooths delivery. Zero or less means
	// [DefaultWatchBuffer] (64).
	WatchBuffer int
}

// Backend is a [backend.Backend] and [backend.Compactor] kept in memory in an
// immutable radix tree. Build it with [New]; the zero value is not usable. It is safe
// for concurrent use.
type Backend struct {
	opts Options

	// wmu serializes write transactions: the check of the compares, the commit of a
	// new tree and the publication of the new revision happen as one step.
	wmu sync.Mutex
	// tree is the data as of the current revision. Only writers, holding wmu, read
	// and replace it; readers take a revision's tree from ring.
	tree *iradix.Tree

	// mu guards everything below. Writers hold it only to publish a commit; readers
	// and watchers hold it shared to pick a snapshot or copy events.
	mu sync.RWMutex
	// rev is the current revision.
	rev int64
	// compacted is the compaction point: revisions below it are not readable.
	compacted int64
	// ring holds the last opts.HistoryRevisions revisions; revision r lives at
	// r % len(ring). A discarded revision's slot is the zero revision.
	ring []revision
	// histBytes is the sum of the bytes charged to the revisions in ring.
	histBytes int64
	// floor is the oldest revision the byte budget keeps (0: no bound yet).
	floor int64
	// empty is the tree of the never-written backend, served at revision 0.
	empty *iradix.Tree
	// notify is closed and replaced whenever watchers have something to look at: a
	// commit, a compaction.
	notify chan struct{}
	closed bool
	// done is closed by Close; it ends the watchers.
	done chan struct{}
	// hub runs the watchers; Close waits on it.
	hub *backendkit.Hub
}

// revision is what the backend keeps of one past revision.
type revision struct {
	rev    int64
	snap   *iradix.Tree    // the data as of rev (immutable: later commits make new trees)
	events []backend.Event // the changes of rev's transaction, in op order
	bytes  int64           // charged to the byte budget: values written and replaced
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Compactor = (*Backend)(nil)
)

// row is one key's version in the tree, under the key's bytes. Rows are never
// modified once inserted: the trees of every kept revision share them.
type row struct {
	key       string
	value     []byte
	createRev int64
	modRev    int64
}

func (r *row) kv() backend.KV {
	return backend.KV{Key: r.key, Value: r.value, CreateRevision: r.createRev, ModRevision: r.modRev}
}

// New returns an empty backend at revision 0.
func New(opts Options) *Backend {
	if opts.HistoryRevisions <= 0 {
		opts.HistoryRevisions = DefaultHistoryRevisions
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = DefaultWatchBuffer
	}
	if opts.HistoryBytes == 0 {
		opts.HistoryBytes = DefaultHistoryBytes
	}
	tree := iradix.New()
	b := &Backend{
		opts:   opts,
		tree:   tree,
		ring:   make([]revision, opts.HistoryRevisions),
		empty:  tree,
		notify: make(chan struct{}),
		done:   make(chan struct{}),
	}
	b.hub = backendkit.NewHub((*watchSource)(b), b.done, opts.WatchBuffer)
	return b
}

// Revision returns the current revision: that of the last transaction that changed
// something, 0 for a backend never written.
func (b *Backend) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0, backend.ErrClosed
	}
	return b.rev, nil
}

// Close ends every watcher with [backend.ErrClosed], waits for their goroutines to
// exit and releases the data. Every later call, Close included, returns
// [backend.ErrClosed].
func (b *Backend) Close() error {
	b.wmu.Lock() // no transaction is half done
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.wmu.Unlock()
		return backend.ErrClosed
	}
	b.closed = true
	close(b.done)
	b.ring = nil
	b.empty, b.tree = nil, nil
	b.mu.Unlock()
	b.wmu.Unlock()
	b.hub.Wait()
	return nil
}

// oldestLocked returns the oldest readable revision (0 when nothing was written).
// b.mu must be held.
func (b *Backend) oldestLocked() int64 {
	if b.rev == 0 {
		return 0
	}
	oldest := b.rev - int64(len(b.ring)) + 1
	oldest = max(oldest, b.compacted, b.floor)
	if oldest < 1 {
		oldest = 1
	}
	return oldest
}

// snapshot returns the data as of rev (0: current) and the revision it is at.
func (b *Backend) snapshot(ctx context.Context, rev int64) (*iradix.Tree, int64, error) {
	if rev < 0 {
		return nil, 0, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, 0, backend.ErrClosed
	}
	if rev == 0 {
		rev = b.rev
	}
	if rev == 0 {
		return b.empty, 0, nil
	}
	if rev > b.rev {
		return nil, 0, fmt.Errorf("%w: revision %d, current %d", backend.ErrFutureRevision, rev, b.rev)
	}
	oldest := b.oldestLocked()
	e := b.ring[rev%int64(len(b.ring))]
	if rev < oldest || e.rev != rev {
		return nil, 0, fmt.Errorf("%w: revision %d, oldest kept %d", backend.ErrCompacted, rev, oldest)
	}
	return e.snap, rev, nil
}
