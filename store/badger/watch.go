package badger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// The ring keeps the events of the latest revisions in memory, for watchers that
// keep up: at most ringRevisions revisions and, beyond the newest one, ringBytes
// bytes of keys and values. Older events are read from the event log on disk.
const (
	ringRevisions = 4096
	ringBytes     = 32 << 20
)

// ring is a circular buffer of the latest committed revisions and their events.
// Revisions in it are consecutive. It is guarded by Backend.mu.
type ring struct {
	entries []revEvents
	head    int // index of the oldest entry
	n       int
	bytes   int
}

func (r *ring) init() { r.entries = make([]revEvents, ringRevisions) }

func (r *ring) push(e revEvents) {
	if r.n == len(r.entries) {
		r.pop()
	}
	r.entries[(r.head+r.n)%len(r.entries)] = e
	r.n++
	r.bytes += e.size
	for r.bytes > ringBytes && r.n > 1 {
		r.pop()
	}
}

func (r *ring) pop() {
	r.bytes -= r.entries[r.head].size
	r.entries[r.head] = revEvents{}
	r.head = (r.head + 1) % len(r.entries)
	r.n--
}

// get returns the entry of revision rev, if the ring holds it.
func (r *ring) get(rev int64) (*revEvents, bool) {
	if r.n == 0 {
		return nil, false
	}
	first := r.entries[r.head].rev
	if rev < first || rev >= first+int64(r.n) {
		return nil, false
	}
	return &r.entries[(r.head+int(rev-first))%len(r.entries)], true
}

// Watch starts a watcher of the keys under opts.Prefix from opts.StartRevision (0:
// the changes after the current revision). StartRevision may lie in the future: the
// watcher then waits for it. A StartRevision below the compaction point fails at once
// with [backend.ErrCompacted]; any revision above it can be watched from, also after
// a restart.
//
// Each watcher is a goroutine with a cursor in the history. It copies the events at
// or after its cursor that match its prefix to its channel, from an in-memory ring
// of the latest revisions when it keeps up and from the event log on disk when it
// does not, and sleeps when it has caught up until the next commit. Writers never
// wait for it. A watcher whose reader falls below the compaction point ends with
// [backend.ErrCompacted].
func (b *Backend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	if err := backendkit.CheckWatch(ctx, opts); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, backend.ErrClosed
	}
	return b.hub.Start(ctx, opts, b.rev, b.oldestLocked())
}

// watchSource is the [backendkit.Source] of a [Backend]: its ring of the latest
// revisions and its event log.
type watchSource Backend

// Collect returns the events of revisions from next on that match prefix, up to a
// batch, the last revision looked at, the current revision and the channel that will
// be closed on the next change. It copies them from the ring when the ring holds
// revision next, and reads them from the event log otherwise.
func (s *watchSource) Collect(prefix string, next int64) (backendkit.Batch, error) {
	b := (*Backend)(s)
	b.mu.RLock()
	if b.closed.Load() {
		b.mu.RUnlock()
		return backendkit.Batch{}, backend.ErrClosed
	}
	cur, notify := b.rev, b.notify
	if next > cur {
		b.mu.RUnlock()
		return backendkit.Batch{Upto: next - 1, Current: cur, Notify: notify}, nil
	}
	if next < b.compacted {
		c := b.compacted
		b.mu.RUnlock()
		return backendkit.Batch{}, fmt.Errorf("%w: watcher fell behind, revision %d was compacted (oldest kept %d)", backend.ErrCompacted, next, c)
	}
	if _, ok := b.ring.get(next); ok {
		events, upto := backendkit.Scan(prefix, next, cur, func(r int64) []backend.Event {
			e, _ := b.ring.get(r) // the ring holds every revision from next to cur
			return e.events
		})
		b.mu.RUnlock()
		return backendkit.Batch{Events: events, Upto: upto, Current: cur, Notify: notify}, nil
	}
	b.mu.RUnlock()
	events, upto, err := b.readEvents(prefix, next, cur)
	return backendkit.Batch{Events: events, Upto: upto, Current: cur, Notify: notify}, err
}

// Lost reports, with an error, whether revision need is below the compaction point,
// and returns the channel that will be closed on the next change.
func (s *watchSource) Lost(need int64) (<-chan struct{}, error) {
	b := (*Backend)(s)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed.Load() {
		return nil, nil // the watcher sees done instead
	}
	if need <= b.rev && need < b.compacted {
		return b.notify, fmt.Errorf("%w: watcher fell behind, revision %d was compacted", backend.ErrCompacted, need)
	}
	return b.notify, nil
}

// readEvents reads the events of revisions next..cur that match prefix from the
// event log, up to a batch, with their values and previous values from the current
// versions and the history.
func (b *Backend) readEvents(prefix string, next, cur int64) ([]backend.Event, int64, error) {
	if err := b.enter(context.Background()); err != nil {
		return nil, 0, err
	}
	defer b.ops.RUnlock()
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	// Looked at after the snapshot was taken: see checkRevision.
	if c := b.compactedLoad(); next < c {
		return nil, 0, fmt.Errorf("%w: watcher fell behind, revision %d was compacted (oldest kept %d)", backend.ErrCompacted, next, c)
	}
	it := txn.NewIterator(dgbadger.IteratorOptions{Prefix: prefixEvents})
	defer it.Close()
	var events []backend.Event
	upto := next - 1
	it.Seek(eventKey(next))
	for r := next; r <= cur && r-next < backendkit.BatchRevisions && len(events) < backendkit.BatchEvents; r++ {
		if !it.Valid() {
			return nil, 0, fmt.Errorf("%w: the event log ends before revision %d", ErrCorrupt, r)
		}
		item := it.Item()
		got, err := parseEventKey(item.Key())
		if err != nil {
			return nil, 0, errInternal(err)
		}
		if got != r {
			if r == next && got > r {
				return nil, 0, fmt.Errorf("%w: watcher fell behind, revision %d was compacted", backend.ErrCompacted, r)
			}
			return nil, 0, fmt.Errorf("%w: the event log has revision %d where %d belongs", ErrCorrupt, got, r)
		}
		var recs []eventRecord
		if err := item.Value(func(val []byte) error {
			var err error
			recs, err = decodeEvents(val)
			return err
		}); err != nil {
			return nil, 0, errInternal(err)
		}
		for _, rec := range recs {
			if !strings.HasPrefix(rec.key, prefix) {
				continue
			}
			ev, err := loadEvent(txn, r, rec)
			if err != nil {
				return nil, 0, errInternal(err)
			}
			events = append(events, ev)
		}
		upto = r
		it.Next()
	}
	return events, upto, nil
}

// loadEvent builds the event of rec at revision rev, with the values it refers to.
func loadEvent(txn *dgbadger.Txn, rev int64, rec eventRecord) (backend.Event, error) {
	ev := backend.Event{Type: rec.typ, Revision: rev, KV: backend.KV{Key: rec.key, ModRevision: rev}}
	if rec.typ == backend.EventPut {
		v, err := versionExact(txn, rec.key, rev)
		if err != nil {
			return ev, err
		}
		ev.KV.Value, ev.KV.CreateRevision = v.value, rec.createRev
	}
	if rec.prevModRev != 0 {
		v, err := versionExact(txn, rec.key, rec.prevModRev)
		if err != nil {
			return ev, err
		}
		ev.PrevKV = &backend.KV{Key: rec.key, Value: v.value, CreateRevision: rec.prevCreateRev, ModRevision: rec.prevModRev}
	}
	return ev, nil
}

// versionExact returns the version of key written at rev, which must exist and be a
// put. The value is a copy.
func versionExact(txn *dgbadger.Txn, key string, rev int64) (*version, error) {
	item, err := txn.Get(historyKey(key, rev))
	if errors.Is(err, dgbadger.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: no version of %q at revision %d", ErrCorrupt, key, rev)
	}
	if err != nil {
		return nil, err
	}
	v, err := historyItem(item, true)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: the version of %q at revision %d is a deletion", ErrCorrupt, key, rev)
	}
	return v, err
}
