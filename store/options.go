package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/management-service/mgmt/resource"
)

// Clock is the store's source of time. Tests inject a fake one (storetest.FakeClock) to
// step through grace periods without sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configure a [Store]. The zero value is a store of the kinds of package
// resource with the real clock, random uids and no admission hooks.
type Options struct {
	// Scheme holds the kinds the store accepts; nil means resource.NewScheme().
	Scheme *resource.Scheme
	// Clock is the source of time; nil means the system clock.
	Clock Clock
	// NewUID returns a fresh uid; nil means a random RFC 4122 version 4 UUID.
	NewUID func() string
	// RandomSuffix returns n random characters for generateName; nil means
	// crypto/rand over the alphabet "bcdfghjklmnpqrstvwxz2456789".
	RandomSuffix func(n int) string
	// Mutating are admission hooks that may change an object, run in order before
	// validation.
	Mutating []MutatingAdmitter
	// Validating are admission hooks that may refuse a write, run in order after the
	// store's own validation.
	Validating []ValidatingAdmitter
	// OwnerAuthorizer decides whether a caller may set blockOwnerDeletion on a
	// reference to an owner; nil allows every caller.
	OwnerAuthorizer OwnerAuthorizer
	// MaxObjectBytes is the largest encoded object the store writes; 0 means 1.5 MiB.
	// A larger object is refused with 413 RequestEntityTooLarge.
	MaxObjectBytes int
	// WatchBuffer is how many events a watcher holds for a consumer that is not
	// reading; 0 means 100. Writers and other watches never wait for a consumer: one
	// that falls more than WatchCacheEvents behind gets an ERROR event with 410
	// Expired, and resumes with a watch from the last resourceVersion it received.
	WatchBuffer int
	// WatchCacheEvents is how many of the latest events the store keeps in memory for
	// its watches, which share one backend watch and decode and encode each event
	// once; 0 means 1024. A watch that starts before these events follows the backend
	// with a watch of its own until it has caught up with them; a watch whose reader
	// falls behind them ends with 410 Expired.
	WatchCacheEvents int
	// WatchCacheBytes bounds the memory of those events as well: each is charged three
	// times the stored bytes of its object and of the object's previous version (the
	// stored bytes, the decoded object and its encoding), and the oldest events leave
	// the cache while the sum is over the bound (the newest event always stays). 0
	// means 64 MiB; a negative value bounds the events by count only. With large
	// objects the cache then holds fewer events, so a slow watch meets 410 sooner.
	WatchCacheBytes int64
	// BookmarkInterval is about the time between two bookmarks of a watch that asked
	// for them, sent whether or not events passed its selector; 0 means one minute.
	BookmarkInterval time.Duration
	// MaxUpdateRetries bounds how often GuaranteedUpdate and Txn run their function
	// again after a concurrent write; 0 means 64.
	MaxUpdateRetries int
	// ObjectCache is how many decoded objects the store keeps to answer reads without
	// decoding JSON again; 0 means 100,000, a negative value turns the cache off.
	// Entries are checked against the stored revision, so the cache never serves a
	// stale object.
	ObjectCache int
	// ObjectCacheBytes bounds the memory of those objects as well: each is charged
	// its stored bytes plus 1 KiB (about what the decoded object holds: 2.0 KB for a
	// 1.1 KB object), and entries are evicted while the sum is over the bound. 0
	// means [DefaultObjectCacheBytes] (64 MiB); a negative value bounds the cache by
	// count only. A list of more objects than the cache holds reads the ones it
	// misses without evicting others, so that one scan does not empty the cache.
	ObjectCacheBytes int64
	// Observer receives what the store measures (see [Observer]); nil measures
	// nothing.
	Observer Observer
	// Logger receives the store's background errors (reaper, tracker); nil discards.
	Logger *slog.Logger
	// FieldTypes gives the shape of each kind for server-side apply and
	// managedFields (how lists merge); nil tracks every kind's lists as atomic,
	// except metadata's (see [FieldType]).
	FieldTypes FieldTypes
	// Elector chooses, among several stores that share one backend, the one that
	// runs the reaper and the garbage collector; nil means this store always does.
	// Every store keeps its index and serves reads, writes and watches either way.
	Elector Elector
}

// Elector picks one leader among the stores that share a backend (for example one
// etcd cluster), so that background work (reaping expired grace periods, garbage
// collection) is done by one store, not once per store.
//
// Leadership needs no fencing for correctness: every action of the reaper and the
// collector is an optimistic transaction checked against what it read, so a store
// that acts after it lost the leadership at worst repeats a decision the new leader
// also makes, and one of the two finds the work already done.
type Elector interface {
	// Campaign blocks until the caller leads, then returns a channel that is closed
	// when the leadership ends. It returns ctx's error if ctx ends first. When ctx
	// ends during the leadership, the elector gives the leadership up and closes
	// the channel.
	Campaign(ctx context.Context) (lost <-chan struct{}, err error)
}

// Limits of the store.
const (
	// DefaultMaxObjectBytes is the largest encoded object: 1.5 MiB, as etcd's request
	// limit under kube-apiserver.
	DefaultMaxObjectBytes = 3 << 19
	// MaxGenerateNameAttempts is how many names a create with generateName tries.
	MaxGenerateNameAttempts = 8
	// DefaultNamespace is the namespace of a namespaced object that names none.
	DefaultNamespace = "default"
)

// WriteOptions are the options every write shares.
type WriteOptions struct {
	// DryRun runs everything (defaulting, validation, admission, name generation,
	// conflict checks) and stores nothing.
	DryRun bool
	// FieldManager names the writer in managedFields; empty means "unknown".
	FieldManager string
	// User is the caller, passed to admission hooks and the OwnerAuthorizer.
	User *UserInfo

	apply *applyState // set by Apply: the managedFields it computed (apply.go)
}

// CreateOptions are the options of a create.
type CreateOptions struct {
	WriteOptions
}

// UpdateOptions are the options of an update or status update. The
// resourceVersion precondition is the object's own metadata.resourceVersion.
type UpdateOptions struct {
	WriteOptions
}

// Propagation policies of a delete.
const (
	// DeletePropagationBackground deletes the owner now; the store then deletes its
	// dependents.
	DeletePropagationBackground = "Background"
	// DeletePropagationForeground keeps the owner, with the foregroundDeletion
	// finalizer, until every dependent that blocks owner deletion is gone.
	DeletePropagationForeground = "Foreground"
	// DeletePropagationOrphan removes the owner reference from every dependent, then
	// deletes the owner.
	DeletePropagationOrphan = "Orphan"
)

// Finalizers the store itself manages.
const (
	// FinalizerOrphan makes the store orphan the dependents before removing the object.
	FinalizerOrphan = resource.FinalizerOrphan
	// FinalizerForegroundDeletion makes the store wait for blocking dependents.
	FinalizerForegroundDeletion = resource.FinalizerForegroundDeletion
)

// Preconditions must hold for a delete to go ahead.
type Preconditions struct {
	// UID, when set, must be the object's uid (409 Conflict otherwise).
	UID *string
	// ResourceVersion, when set, must be the object's resourceVersion (409 Conflict).
	ResourceVersion *string
}

// DeleteOptions are the options of a delete.
type DeleteOptions struct {
	WriteOptions
	// GracePeriodSeconds is the grace period; nil means the object's kind default (0).
	// A negative value counts as 1.
	GracePeriodSeconds *int64
	// Preconditions must hold, or the delete fails with 409 Conflict.
	Preconditions Preconditions
	// PropagationPolicy is Background (the default), Foreground or Orphan.
	PropagationPolicy string
	// SkipFinalizers removes the object at once, without waiting for its finalizers
	// or a grace period, and without running them. It exists for moves that recreate
	// the object elsewhere in the same transaction (package migrate); dependents are
	// still garbage collected as for a Background delete.
	SkipFinalizers bool
	// MovedTo, with SkipFinalizers, records that the transaction recreates the object
	// at another place (package migrate). An update based on the moved object (its uid,
	// or a resourceVersion not newer than the move) then fails with 409 Conflict naming
	// the new place, where it would otherwise get 404 NotFound: the writer's copy is
	// stale, not the object gone.
	MovedTo *Location
}

// Location names an object of a known kind: its namespace ("" for cluster-scoped
// kinds) and name.
type Location struct {
	Namespace string
	Name      string
}

// GetOptions are the options of a get.
type GetOptions struct {
	// ResourceVersion "" or "0" reads the latest state; "N" asks for a state not
	// older than revision N (504 Timeout when the store has not reached N).
	ResourceVersion string
}

// ResourceVersionMatch values of a list.
const (
	// ResourceVersionMatchNotOlderThan serves a list at least as new as the given
	// resourceVersion (the default).
	ResourceVersionMatchNotOlderThan = "NotOlderThan"
	// ResourceVersionMatchExact serves the list exactly at the given resourceVersion.
	ResourceVersionMatchExact = "Exact"
)

// ListOptions select the objects of a list.
type ListOptions struct {
	// Namespace restricts a list of a namespaced kind to one namespace; "" lists all.
	Namespace string
	// LabelSelector filters by labels: "a=b,c!=d,e in (f,g),h,!i". Bad syntax: 400.
	LabelSelector string
	// FieldSelector filters by metadata.name and metadata.namespace. Other fields: 400.
	FieldSelector string
	// Limit is the most items to return; 0 means all. When more remain, the list's
	// continue token is set.
	Limit int64
	// Continue is the token of the previous page. Pages are served from the snapshot
	// of the first one; a token older than what is kept gives 410 Expired.
	Continue string
	// ResourceVersion "" or "0" lists the latest state; "N" lists a state not older
	// than N (or exactly N with ResourceVersionMatch Exact).
	ResourceVersion string
	// ResourceVersionMatch is "", NotOlderThan or Exact.
	ResourceVersionMatch string
}

// WatchOptions select what a watch sees.
type WatchOptions struct {
	// Namespace restricts the watch to one namespace; "" watches all.
	Namespace string
	// LabelSelector filters events; an object that starts matching is reported as
	// ADDED, one that stops matching as DELETED.
	LabelSelector string
	// FieldSelector filters by metadata.name and metadata.namespace.
	FieldSelector string
	// ResourceVersion "" or "0" starts with a synthetic ADDED event per existing
	// object; "N" delivers every change after revision N (410 Expired when N is older
	// than what is kept).
	ResourceVersion string
	// AllowBookmarks asks for BOOKMARK events carrying the current resourceVersion.
	AllowBookmarks bool
	// SendInitialEvents, with ResourceVersion "" or "0", ends the synthetic ADDED
	// events with a BOOKMARK annotated "k8s.io/initial-events-end".
	SendInitialEvents bool
	// SharedObjects hands the watch the same object for an event as every other
	// watch of the store that asked for it, instead of a copy of its own: the reader
	// must not change an event's Object. It saves a copy per event and watch for a
	// reader that only inspects and encodes them (see [Event.JSON]).
	SharedObjects bool
}
