package backend

import (
	"context"
	"errors"
)

// Errors a backend returns. Callers check them with [errors.Is]; a backend may wrap
// them with detail.
var (
	// ErrCompacted is returned by a read or a watch at a revision older than the
	// backend still keeps, and ends a watcher that fell behind what is kept.
	ErrCompacted = errors.New("backend: revision has been compacted")
	// ErrFutureRevision is returned by a read at a revision newer than the current one.
	ErrFutureRevision = errors.New("backend: revision is in the future")
	// ErrClosed is returned by every call after Close, and ends open watchers.
	ErrClosed = errors.New("backend: closed")
	// ErrKeyNotFound is returned by Get when the key does not exist at that revision.
	ErrKeyNotFound = errors.New("backend: key not found")
	// ErrInvalidArgument is returned for a malformed request: an empty key, a Start
	// outside the Prefix, a negative limit or revision, two operations on one key.
	ErrInvalidArgument = errors.New("backend: invalid argument")
	// ErrTxnTooLarge is returned by Txn, wrapped together with ErrInvalidArgument,
	// for a transaction larger than the backend commits at once (badger: a share of
	// its memtable; etcd: its request size or operation count limit). Nothing of it
	// was applied.
	ErrTxnTooLarge = errors.New("backend: transaction too large")
)

// KV is one key at one revision.
type KV struct {
	// Key is the full key.
	Key string
	// Value is the stored bytes. Callers must not modify it.
	Value []byte
	// CreateRevision is the revision at which the key was last created.
	CreateRevision int64
	// ModRevision is the revision of the key's last write (or, in a delete event, of
	// the deletion).
	ModRevision int64
}

// RangeOptions select keys for [Backend.Range].
type RangeOptions struct {
	// Prefix selects the keys that start with it; "" selects every key.
	Prefix string
	// Start is the first key to return (inclusive), used to continue a paged read.
	// It must start with Prefix; "" starts at Prefix.
	Start string
	// Limit is the most keys to return; 0 means no limit.
	Limit int
	// Revision reads the keys as they were at that revision; 0 means the current one.
	// Below what is kept: ErrCompacted; above the current revision: ErrFutureRevision.
	Revision int64
}

// RangeResult is the answer of [Backend.Range].
type RangeResult struct {
	// KVs are the keys found, in ascending byte order of Key.
	KVs []KV
	// Revision is the revision the read was served at.
	Revision int64
	// More is true when keys past the last returned one match too (Limit cut the read).
	More bool
}

// Compare is a condition of a [Txn]: the key's ModRevision must equal ModRevision.
// ModRevision 0 means the key must not exist.
type Compare struct {
	// Key to check.
	Key string
	// ModRevision the key must have now; 0 for "absent".
	ModRevision int64
	// Prefix makes Key a prefix: the compare holds when no key under it that exists
	// now has a ModRevision above ModRevision, that is, nothing under the prefix was
	// created or changed after ModRevision. (A key deleted since is not seen.) It
	// guards a read of a range, as the other form guards a read of a key.
	Prefix bool
}

// Op is one write of a [Txn].
type Op struct {
	// Key to write or delete.
	Key string
	// Value to store; ignored when Delete is set. A nil Value stores an empty value.
	// Once given to [Backend.Txn], Value belongs to the backend, which may keep it
	// without a copy: the caller must not change it afterwards, whatever the result.
	Value []byte
	// Delete removes the key. Deleting a key that does not exist changes nothing.
	Delete bool
}

// Txn is an atomic transaction: if every Compare holds, every Op is applied, all at one
// new revision; otherwise nothing is.
type Txn struct {
	// Compares must all hold for the Ops to be applied.
	Compares []Compare
	// Ops are applied in order; a key may appear at most once.
	Ops []Op
}

// TxnResult is the answer of [Backend.Txn].
type TxnResult struct {
	// Succeeded is true when every Compare held and the Ops were applied.
	Succeeded bool
	// Revision is the revision the transaction created; when it failed or changed
	// nothing, the current revision.
	Revision int64
	// FailedCompare is the index of the first Compare that did not hold, or -1.
	FailedCompare int
}

// EventType says what an [Event] reports.
type EventType int

// Event types.
const (
	// EventPut reports a key created or changed.
	EventPut EventType = iota + 1
	// EventDelete reports a key deleted.
	EventDelete
	// EventProgress reports that every event up to Revision has been delivered; it
	// carries no key. Sent only to watchers that asked for progress.
	EventProgress
)

// String returns "PUT", "DELETE" or "PROGRESS".
func (t EventType) String() string {
	switch t {
	case EventPut:
		return "PUT"
	case EventDelete:
		return "DELETE"
	case EventProgress:
		return "PROGRESS"
	}
	return "UNKNOWN"
}

// Event is one change seen by a watcher.
type Event struct {
	// Type says what happened.
	Type EventType
	// Revision is the revision of the change (or, for a progress event, the revision
	// up to which every event has been delivered). Events of one transaction share it.
	Revision int64
	// KV is the key after the change. For a delete it has Key, no Value,
	// and ModRevision equal to Revision.
	KV KV
	// PrevKV is the key before the change; nil when the key was created.
	PrevKV *KV
}

// WatchOptions select what a watcher sees.
type WatchOptions struct {
	// Prefix selects the keys that start with it; "" selects every key.
	Prefix string
	// StartRevision is the first revision to deliver (inclusive); 0 means the changes
	// after the current revision. Below what is kept: ErrCompacted, returned by Watch
	// or, by a backend that learns it only later, as the Err of a watcher that ends
	// before delivering any event.
	StartRevision int64
	// ProgressNotify asks for [EventProgress] events: one each time the watcher has
	// delivered everything up to a revision newer than the last progress it sent and
	// has nothing more to send. That includes the revision of the last event it sent:
	// the events of one transaction may reach the reader one by one, and only the
	// progress tells the reader that it has all of them.
	ProgressNotify bool
}

// Watcher streams events. Events arrive in revision order, without gaps or
// duplicates, the events of one transaction in the order of its ops.
type Watcher interface {
	// Events returns the channel of events. It is closed when the watch ends: after
	// Stop, when the context given to Watch is done, when the backend is closed, or
	// when the watcher can no longer continue without a gap.
	Events() <-chan Event
	// Err returns why the watch ended, once Events is closed: nil after Stop or
	// context cancellation, ErrClosed after Close, ErrCompacted when the watcher fell
	// behind what the backend keeps.
	Err() error
	// Stop ends the watch and releases its resources. It may be called more than once.
	Stop()
}

// Backend is an ordered key-value store with one global revision. Every successful
// transaction that changes something creates exactly one new revision, one larger
// than the last (one that changes nothing, such as a delete of an absent key, creates
// none); revisions never go back, also across restarts of a durable backend. Every
// method is safe for concurrent use.
type Backend interface {
	// Get returns key as of revision rev (0: current). ErrKeyNotFound when it does not
	// exist then; ErrCompacted or ErrFutureRevision as for Range.
	Get(ctx context.Context, key string, rev int64) (KV, error)
	// Range returns the keys selected by opts, in key order, from one consistent
	// snapshot.
	Range(ctx context.Context, opts RangeOptions) (RangeResult, error)
	// Txn applies t atomically. A failed Compare is not an error: the result says
	// Succeeded false. Errors are for the backend itself (closed, I/O, invalid input).
	Txn(ctx context.Context, t Txn) (TxnResult, error)
	// Watch starts a watcher. Events already committed at or after
	// opts.StartRevision are delivered first. A watcher that does not read never
	// blocks writers: it falls behind and ends with ErrCompacted once what it needs
	// is no longer kept.
	Watch(ctx context.Context, opts WatchOptions) (Watcher, error)
	// Revision returns the current revision: that of the last successful write, 0 for
	// an empty backend that was never written.
	Revision(ctx context.Context) (int64, error)
	// Close releases the backend. Open watchers end with ErrClosed.
	Close() error
}

// HeadGetter is implemented by backends that read a key's current revisions for less
// than its value (the badger backend keeps them apart from the value). A store that
// holds the object decoded at that revision then does not read the value at all.
type HeadGetter interface {
	// GetHead returns key's current version without its value: KV.Value is nil.
	// ErrKeyNotFound when it does not exist.
	GetHead(ctx context.Context, key string) (KV, error)
}

// Compactor is implemented by backends whose history can be discarded on request.
type Compactor interface {
	// Compact discards history below rev: afterwards reads at a revision < rev and
	// watches starting below rev fail with ErrCompacted. The current state is kept.
	// Compacting at or below the current compaction point does nothing; rev above the
	// current revision is ErrFutureRevision.
	Compact(ctx context.Context, rev int64) error
	// CompactRevision returns the oldest revision still readable.
	CompactRevision(ctx context.Context) (int64, error)
}
