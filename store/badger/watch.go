package badger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
)

// A watcher's goroutine copies at most this many events, and looks at most at this
// many revisions, each time it reads the ring or the event log.
const (
	watchBatchEvents    = 256
	watchBatchRevisions = 1024
)

// The ring keeps the events of the latest revisions in memory, for watchers that
// keep up: at most ringRevisions revisions and, beyond the newest one, ringBytes
// bytes of keys and values. Older events are read from the event log on disk.
const (
	ringRevisions = 4096
	ringBytes     = 32 << 20
)

// errStopped ends a watcher stopped by its owner (Stop or its context): Err is nil.
var errStopped = errors.New("badger: watch stopped")

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
	if opts.StartRevision < 0 {
		return nil, fmt.Errorf("%w: negative start revision %d", backend.ErrInvalidArgument, opts.StartRevision)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watcher{
		b:        b,
		ctx:      ctx,
		prefix:   opts.Prefix,
		progress: opts.ProgressNotify,
		ch:       make(chan backend.Event, b.opts.WatchBuffer),
		stop:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, backend.ErrClosed
	}
	w.next = opts.StartRevision
	if w.next == 0 {
		w.next = b.rev + 1
	}
	if w.next <= b.rev {
		if oldest := b.oldestLocked(); w.next < oldest {
			return nil, fmt.Errorf("%w: watch from revision %d, oldest kept %d", backend.ErrCompacted, w.next, oldest)
		}
	}
	w.start = w.next
	b.watchers.Add(1)
	b.live++
	go w.run()
	return w, nil
}

// watcher is the [backend.Watcher] of a [Backend].
type watcher struct {
	b        *Backend
	ctx      context.Context
	prefix   string
	progress bool
	ch       chan backend.Event

	start int64 // the first revision asked for
	next  int64 // the next revision to look at; only the goroutine uses it
	sent  int64 // the revision of the last event or progress sent; only the goroutine

	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}

	mu  sync.Mutex
	err error
}

// Events returns the channel of events, closed when the watch ends.
func (w *watcher) Events() <-chan backend.Event { return w.ch }

// Err returns why the watch ended, once the channel is closed.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch and waits for its goroutine to exit.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.exited
}

func (w *watcher) run() {
	err := w.loop()
	if errors.Is(err, errStopped) {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.b.mu.Lock()
	w.b.live--
	w.b.mu.Unlock()
	close(w.ch)
	close(w.exited)
	w.b.watchers.Done()
}

func (w *watcher) loop() error {
	for {
		batch, upto, cur, notify, err := w.b.collect(w.prefix, w.next)
		if err != nil {
			return err
		}
		for _, ev := range batch {
			if err := w.send(ev, upto+1, notify); err != nil {
				return err
			}
			w.sent = ev.Revision
		}
		w.next = upto + 1
		if w.next <= cur {
			continue // more history to go through
		}
		if w.progress && cur > w.sent && cur >= w.start-1 {
			ev := backend.Event{Type: backend.EventProgress, Revision: cur}
			if err := w.send(ev, w.next, notify); err != nil {
				return err
			}
			w.sent = cur
		}
		select {
		case <-notify:
		case <-w.stop:
			return errStopped
		case <-w.ctx.Done():
			return errStopped
		case <-w.b.done:
			return backend.ErrClosed
		}
	}
}

// send hands ev to the reader. While the reader does not take it, send keeps an eye
// on the compaction point: once revision need is below it, the watch cannot go on
// without a gap and ends with ErrCompacted.
func (w *watcher) send(ev backend.Event, need int64, notify <-chan struct{}) error {
	if ev.PrevKV != nil { // each watcher gets its own copy of the struct
		prev := *ev.PrevKV
		ev.PrevKV = &prev
	}
	for {
		select {
		case w.ch <- ev:
			return nil
		case <-w.stop:
			return errStopped
		case <-w.ctx.Done():
			return errStopped
		case <-w.b.done:
			return backend.ErrClosed
		case <-notify:
			var lost bool
			notify, lost = w.b.lost(need)
			if lost {
				return fmt.Errorf("%w: watcher fell behind, revision %d was compacted", backend.ErrCompacted, need)
			}
		}
	}
}

// collect returns the events of revisions from next on that match prefix, up to a
// batch, the last revision looked at, the current revision and the channel that will
// be closed on the next change.
func (b *Backend) collect(prefix string, next int64) (events []backend.Event, upto, cur int64, notify <-chan struct{}, err error) {
	b.mu.RLock()
	if b.closed.Load() {
		b.mu.RUnlock()
		return nil, 0, 0, nil, backend.ErrClosed
	}
	cur, notify = b.rev, b.notify
	if next > cur {
		b.mu.RUnlock()
		return nil, next - 1, cur, notify, nil
	}
	if next < b.compacted {
		c := b.compacted
		b.mu.RUnlock()
		return nil, 0, 0, nil, fmt.Errorf("%w: watcher fell behind, revision %d was compacted (oldest kept %d)", backend.ErrCompacted, next, c)
	}
	if _, ok := b.ring.get(next); ok {
		upto = next - 1
		for r := next; r <= cur && r-next < watchBatchRevisions && len(events) < watchBatchEvents; r++ {
			e, _ := b.ring.get(r) // the ring holds every revision from next to cur
			for _, ev := range e.events {
				if strings.HasPrefix(ev.KV.Key, prefix) {
					events = append(events, ev)
				}
			}
			upto = r
		}
		b.mu.RUnlock()
		return events, upto, cur, notify, nil
	}
	b.mu.RUnlock()
	events, upto, err = b.readEvents(prefix, next, cur)
	return events, upto, cur, notify, err
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
	for r := next; r <= cur && r-next < watchBatchRevisions && len(events) < watchBatchEvents; r++ {
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

// versionExact returns the version of key written at rev, which must exist: in the
// current versions or in the history.
func versionExact(txn *dgbadger.Txn, key string, rev int64) (*version, error) {
	v, err := getCurrent(txn, key)
	if err != nil || (v != nil && v.modRev == rev) {
		return v, err
	}
	item, err := txn.Get(historyKey(key, rev))
	if errors.Is(err, dgbadger.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: no version of %q at revision %d", ErrCorrupt, key, rev)
	}
	if err != nil {
		return nil, err
	}
	v, err = historyItem(item, true)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: the version of %q at revision %d is a deletion", ErrCorrupt, key, rev)
	}
	return v, err
}

// lost reports whether revision need is below the compaction point, and returns the
// channel that will be closed on the next change.
func (b *Backend) lost(need int64) (<-chan struct{}, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed.Load() {
		return nil, false // send sees done instead
	}
	return b.notify, need <= b.rev && need < b.compacted
}
