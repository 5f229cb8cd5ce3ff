package store

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// The watch hub: one backend watch per store, shared by the store's watches.
//
// The hub follows the backend once and keeps the latest events in a ring. Each
// event's objects are decoded at most once, the first time a watch needs them, and
// each is encoded at most once per wire format ([Event.JSON], [Event.Encoded]): every
// watch of the event shares the same bytes. Every watch runs one goroutine that reads
// the ring from its own position into its channel; a watch that asked for
// SharedObjects gets the hub's object itself, any other watch a copy of its own.
//
// Nobody waits for a watch. A reader that does not keep up holds at most its channel
// (WatchBuffer events, shared with the ring) and the batch its goroutine is sending;
// once the ring has moved past the watch's position, the watch ends at once with 410
// Expired, after what its channel holds. The reader resumes with a watch from the
// last resourceVersion it received (served by the ring if it still holds it, else
// caught up from the backend, below) or lists again.
//
// A watch the ring cannot serve yet (one that starts before what the ring holds)
// follows the backend with a watch of its own until that watch reports progress (it
// has delivered every event up to a revision) at a revision the ring holds; it then
// goes on from the ring. Only a watch still running when the hub ends (the store
// closed, or the backend's watch failed) stays with a backend watch of its own.
//
// Bookmarks come from the hub too: it knows the revision up to which it has every
// event (the backend's progress reports, which also complete the revision of its last
// event, and each new revision, which completes the one before), and wakes
// the watches that asked for bookmarks about once a second; such a watch, having
// sent everything up to that revision, sends a bookmark when BookmarkInterval has
// passed since its last one (or its deadline is two seconds away), whether or not any
// event passed its selector.

// hubBatch is the most events a watch takes from the ring at once: what a stalled
// reader's goroutine holds beyond its channel.
const hubBatch = 32

// hubTick is how often the hub wakes the watches that asked for bookmarks.
const hubTick = time.Second

// DefaultWatchCacheBytes is the default of [Options.WatchCacheBytes]: 64 MiB.
const DefaultWatchCacheBytes = 64 << 20

// watchHub follows the backend for a store's watches, keeping its latest
// [Options.WatchCacheEvents] events in a ring, within [Options.WatchCacheBytes].
type watchHub struct {
	cancel context.CancelFunc
	exited chan struct{}

	mu       sync.RWMutex
	ring     []*hubEvent   // the event with sequence number q is ring[q%len(ring)]
	head     int64         // sequence number of the next event
	tail     int64         // sequence number of the oldest event kept
	dropped  int64         // every event of a revision up to dropped may be missing
	progress int64         // every event of a revision up to progress is in the ring or dropped
	notify   chan struct{} // closed and replaced when events come or the hub ends
	tick     chan struct{} // closed and replaced about once a second
	ended    bool          // the hub follows the backend no more
	bytes    int64         // the charge of the events in the ring (hubEvent.charge)
	budget   int64         // the most bytes kept; <= 0 means no bound but the ring's length
}

// hubEvent is one backend event with its objects, decoded and encoded when first
// needed and then shared (never changed).
type hubEvent struct {
	be        backend.Event
	cur, prev eventObject
	charge    int64 // what the event counts against the hub's budget
}

// eventCharge is what an event counts against [Options.WatchCacheBytes]: three times
// the stored bytes of its object and previous version, for the stored bytes, the
// decoded objects and their encoding.
func eventCharge(be backend.Event) int64 {
	n := int64(len(be.KV.Key) + len(be.KV.Value))
	if be.PrevKV != nil {
		n += int64(len(be.PrevKV.Value))
	}
	return 3 * n
}

// hub returns the store's hub, started if needed so that it has every event after
// revision from; nil when the store is closed or the backend cannot be watched.
func (s *Store) hub(from int64) *watchHub {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	if s.hubClosed {
		return nil
	}
	if h := s.watchHub; h != nil {
		h.mu.RLock()
		ended := h.ended
		h.mu.RUnlock()
		if !ended {
			return h
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	bw, err := s.b.Watch(ctx, backend.WatchOptions{Prefix: "/", StartRevision: from + 1, ProgressNotify: true})
	if err != nil {
		cancel()
		return nil
	}
	h := &watchHub{cancel: cancel, exited: make(chan struct{}), ring: make([]*hubEvent, s.opts.WatchCacheEvents),
		dropped: from, progress: from, notify: make(chan struct{}), tick: make(chan struct{}),
		budget: s.opts.WatchCacheBytes}
	s.watchHub = h
	// The first tick is asked for before the hub runs: a fake clock stepped right
	// after the first watch starts fires it.
	go h.run(ctx, bw, s.clock, s.clock.After(hubTick))
	return h
}

// closeHub stops the hub for good; watches still reading from it go on with
// backend watches of their own.
func (s *Store) closeHub() {
	s.hubMu.Lock()
	s.hubClosed = true
	h := s.watchHub
	s.hubMu.Unlock()
	if h != nil {
		h.cancel()
		<-h.exited
	}
}

func (h *watchHub) run(ctx context.Context, bw backend.Watcher, clock Clock, tick <-chan time.Time) {
	defer close(h.exited)
	defer bw.Stop()
	var batch []backend.Event
	for {
		select {
		case be, ok := <-bw.Events():
			if !ok {
				h.end()
				return
			}
			// Take what else is ready, and wake the watches once for all of it.
			batch = append(batch[:0], be)
			for more := true; more && len(batch) < 256; {
				select {
				case be, ok := <-bw.Events():
					if !ok {
						h.add(batch)
						h.end()
						return
					}
					batch = append(batch, be)
				default:
					more = false
				}
			}
			h.add(batch)
			clear(batch)
		case <-tick:
			tick = clock.After(hubTick)
			h.mu.Lock()
			close(h.tick)
			h.tick = make(chan struct{})
			h.mu.Unlock()
		case <-ctx.Done():
			h.end()
			return
		}
	}
}

// add puts the events of batch (and their progress) in the ring.
func (h *watchHub) add(batch []backend.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	added := false
	for _, be := range batch {
		if be.Type == backend.EventProgress {
			h.progress = max(h.progress, be.Revision)
			continue
		}
		if be.Type != backend.EventPut && be.Type != backend.EventDelete {
			continue
		}
		// Every event of an older revision came before this one.
		h.progress = max(h.progress, be.Revision-1)
		ev := &hubEvent{be: be, charge: eventCharge(be)}
		for h.head > h.tail && (h.head-h.tail == int64(len(h.ring)) ||
			(h.budget > 0 && h.bytes+ev.charge > h.budget)) {
			h.dropOldestLocked()
		}
		h.ring[h.head%int64(len(h.ring))] = ev
		h.bytes += ev.charge
		h.head++
		added = true
	}
	if added {
		close(h.notify)
		h.notify = make(chan struct{})
	}
}

// dropOldestLocked takes the oldest event out of the ring.
func (h *watchHub) dropOldestLocked() {
	i := h.tail % int64(len(h.ring))
	old := h.ring[i]
	h.dropped = max(h.dropped, old.be.Revision)
	h.bytes -= old.charge
	h.ring[i] = nil
	h.tail++
}

func (h *watchHub) end() {
	h.mu.Lock()
	h.ended = true
	close(h.notify)
	h.notify = make(chan struct{})
	h.mu.Unlock()
}

// start returns the sequence number of the first event after revision from, and false
// when the ring may no longer hold every event after from.
func (h *watchHub) start(from int64) (int64, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.ended || from < h.dropped {
		return 0, false
	}
	q := h.head
	for q > h.tail && h.ring[(q-1)%int64(len(h.ring))].be.Revision > from {
		q--
	}
	return q, true
}

// hubRead is what a watch learns from one read of the ring.
type hubRead struct {
	notify   <-chan struct{} // closed on the next change
	tick     <-chan struct{} // closed on the next bookmark tick
	progress int64           // every event up to this revision was read, when the read reached the head
	ended    bool            // no event will come after the ones read
}

// read appends to buf up to hubBatch events from sequence number q on. ok is false
// when the ring no longer holds q.
func (h *watchHub) read(q int64, buf []*hubEvent) (_ []*hubEvent, r hubRead, ok bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if q < h.tail {
		return buf, hubRead{}, false
	}
	for ; q < h.head && len(buf) < hubBatch; q++ {
		buf = append(buf, h.ring[q%int64(len(h.ring))])
	}
	r = hubRead{notify: h.notify, tick: h.tick, ended: h.ended, progress: -1}
	if q == h.head {
		r.progress = h.progress
	}
	return buf, r, true
}

// lost reports whether the ring no longer holds sequence number q, and returns the
// channel closed on the next change.
func (h *watchHub) lost(q int64) (bool, <-chan struct{}) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return q < h.tail, h.notify
}

// hubCursor is a hub watch's position: q in the ring, and in the backend's terms the
// events of revision last under the watch's prefix it has looked at, count of them.
type hubCursor struct {
	q     int64
	start int64 // the revision the watch started from: a bookmark is of a later one, as in kube
	floor int64 // events of a revision up to floor were sent before (or precede the watch)
	last  int64
	count int
	sent  int64     // the revision of the last event or bookmark sent
	bm    time.Time // when the last bookmark was sent (or the watch started), by the store's clock
	bmAt  time.Time // the same by the system clock, which the watch's deadline is on
	// A backend watch that takes over from the hub in the middle of a revision leaves
	// out the first skip events of revision skipRev (sent already).
	skipRev int64
	skip    int
}

// hubEnd says why a watch stopped following the hub.
type hubEnd int

const (
	hubDone  hubEnd = iota // the watch is over: an error was sent, the reader left, ctx ended
	hubLost                // the ring moved past the watch before it read its events
	hubEnded               // the hub ended: go on from the cursor with a backend watch
)

// followHub sends the ring's events to the watch from c on until the watch is over,
// the ring moves past it, or the hub ends.
func (s *Store) followHub(ctx context.Context, out *watchSink, h *watchHub, c *hubCursor, k *resource.KindInfo,
	t reflect.Type, f filter, opts WatchOptions) hubEnd {
	prefix := nsPrefix(k, opts.Namespace)
	send := out.send
	var buf []*hubEvent
	for {
		var r hubRead
		var ok bool
		buf, r, ok = h.read(c.q, buf[:0])
		if !ok {
			return hubLost
		}
		for _, ev := range buf {
			c.q++
			be := ev.be
			if be.Revision <= c.floor || !strings.HasPrefix(be.KV.Key, prefix) {
				continue
			}
			if be.Revision == c.last {
				c.count++
			} else {
				c.last, c.count = be.Revision, 1
			}
			we, emit, err := s.convertEvent(k, f, be, func(prev bool) (resource.Object, error) {
				return ev.object(s, k, t, prev)
			})
			if err != nil {
				send(Event{Type: Error, Err: err})
				return hubDone
			}
			if !emit {
				continue
			}
			we.src = &ev.cur
			if we.Type == Deleted {
				we.src = &ev.prev
			}
			if !opts.SharedObjects {
				we.Object = objcodec.DeepCopy(we.Object)
			}
			if out.w == nil {
				// A WatchFunc's handler: nothing to watch while it runs.
				if !send(we) {
					clear(buf)
					return hubDone
				}
			} else if end, ok := s.sendFromHub(ctx, out.w, h, c.q, we, r.notify); !ok {
				clear(buf)
				return end
			}
			c.sent = be.Revision
		}
		clear(buf)
		if len(buf) > 0 {
			continue
		}
		// kube-apiserver sends a watch only bookmarks of revisions after the one it
		// started from: an idle store sends none.
		if opts.AllowBookmarks && r.progress > c.start && r.progress >= max(c.floor, c.last, c.sent) && s.bookmarkDue(ctx, c) {
			c.bm, c.bmAt = s.clock.Now(), time.Now()
			if !send(Event{Type: Bookmark, Object: bookmarkObject(k, r.progress)}) {
				return hubDone
			}
			c.sent = r.progress
		}
		if r.ended {
			return hubEnded
		}
		var tick <-chan struct{}
		if opts.AllowBookmarks {
			tick = r.tick
		}
		out.waiting()
		select {
		case <-r.notify:
		case <-tick:
		case <-ctx.Done():
			return hubDone
		}
	}
}

// sendFromHub hands ev to the watch's reader. While the reader does not take it, it
// watches the ring: once the ring no longer holds q, the next event the watch would
// read, the watch cannot go on and ends (hubLost) without waiting for its reader.
func (s *Store) sendFromHub(ctx context.Context, w *Watcher, h *watchHub, q int64, ev Event,
	notify <-chan struct{}) (hubEnd, bool) {
	select {
	case w.ch <- ev:
		return 0, true
	default:
	}
	for {
		select {
		case w.ch <- ev:
			return 0, true
		case <-ctx.Done():
			return hubDone, false
		case <-notify:
			var lost bool
			if lost, notify = h.lost(q); lost {
				return hubLost, false
			}
		}
	}
}

// bookmarkDue reports whether the watch at c sends a bookmark now: BookmarkInterval
// has passed since its last one, or its deadline is less than two seconds away and
// its last one is older than that (so that the watch that follows starts from a
// recent revision).
func (s *Store) bookmarkDue(ctx context.Context, c *hubCursor) bool {
	if s.clock.Now().Sub(c.bm) >= s.opts.BookmarkInterval {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < 2*time.Second && time.Since(c.bmAt) > 2*time.Second
}

// bookmarkObject is the object of a bookmark at revision rev: an empty object of kind
// k carrying only the resourceVersion.
func bookmarkObject(k *resource.KindInfo, rev int64) resource.Object {
	bm := k.New()
	bm.GetTypeMeta().Kind, bm.GetTypeMeta().APIVersion = k.Kind, k.APIVersion()
	bm.GetObjectMeta().ResourceVersion = formatRV(rev)
	return bm
}

// object returns the shared object after the event (prev false) or before it, a t of
// kind k stamped with the event's revision, decoded at most once; nil when the event
// has no value there.
func (ev *hubEvent) object(s *Store, k *resource.KindInfo, t reflect.Type, prev bool) (resource.Object, error) {
	be := ev.be
	o, kv := &ev.cur, &be.KV
	if prev {
		o, kv = &ev.prev, be.PrevKV
	} else if be.Type != backend.EventPut {
		kv = nil
	}
	o.once.Do(func() {
		if kv == nil {
			return
		}
		o.k, o.data, o.rev = k, kv.Value, be.Revision
		obj, _, err := s.stored(k, kv.Key, kv.ModRevision, kv.Value, be.Revision, t)
		if err != nil {
			o.err = err
			return
		}
		// One copy per event, stamped with its revision, shared by every watch.
		o.obj = objcodec.DeepCopy(obj)
		o.obj.GetObjectMeta().ResourceVersion = formatRV(be.Revision)
	})
	return o.obj, o.err
}
