package store

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// The watch hub: one backend watch per store, shared by the store's watches.
//
// A watch of its own on the backend costs a goroutine in the backend and one in the
// store, and each decodes (or copies from the cache) every event on its own. The hub
// follows the backend once, keeps the latest events in a ring, and decodes each
// event's object at most once, the first time a watch needs it; every watch then
// runs one goroutine that reads the ring from its own position and sends its own
// copy of the shared object (a watch never hands out an object another watch or the
// cache holds).
//
// A watch the ring cannot serve follows the backend itself, as all watches used to,
// with the backend's semantics: one that starts before what the ring holds, one whose
// reader fell behind (its channel full when the next event is due: it goes on from
// that event, and gets 410 Expired once the backend no longer keeps it, as a watch
// that never used the hub would), one whose ring position was overwritten, one
// still running when the hub ends (the store closed or the backend's watch failed),
// and one that asked for bookmarks (which need the backend's word that every event
// up to a revision was delivered).

// watchHub follows the backend for a store's watches, keeping its latest
// [Options.WatchCacheEvents] events in a ring.
type watchHub struct {
	cancel context.CancelFunc
	exited chan struct{}

	mu      sync.RWMutex
	ring    []*hubEvent   // the event with sequence number q is ring[q%len(ring)]
	head    int64         // sequence number of the next event
	tail    int64         // sequence number of the oldest event kept
	dropped int64         // every event of a revision up to dropped may be missing
	notify  chan struct{} // closed and replaced when an event comes or the hub ends
	ended   bool          // the hub follows the backend no more
}

// hubEvent is one backend event with its objects, decoded when first needed and then
// shared (never changed, never handed out).
type hubEvent struct {
	be                backend.Event
	curOnce, prevOnce sync.Once
	cur, prev         resource.Object
	curErr, prevErr   error
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
	bw, err := s.b.Watch(ctx, backend.WatchOptions{Prefix: "/", StartRevision: from + 1})
	if err != nil {
		cancel()
		return nil
	}
	h := &watchHub{cancel: cancel, exited: make(chan struct{}), ring: make([]*hubEvent, s.opts.WatchCacheEvents),
		dropped: from, notify: make(chan struct{})}
	s.watchHub = h
	go h.run(ctx, bw)
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

func (h *watchHub) run(ctx context.Context, bw backend.Watcher) {
	defer close(h.exited)
	defer bw.Stop()
	for {
		select {
		case be, ok := <-bw.Events():
			if !ok {
				h.end()
				return
			}
			if be.Type == backend.EventPut || be.Type == backend.EventDelete {
				h.add(be)
			}
		case <-ctx.Done():
			h.end()
			return
		}
	}
}

func (h *watchHub) add(be backend.Event) {
	ev := &hubEvent{be: be}
	h.mu.Lock()
	if h.head-h.tail == int64(len(h.ring)) {
		old := h.ring[h.tail%int64(len(h.ring))]
		h.dropped = max(h.dropped, old.be.Revision)
		h.ring[h.tail%int64(len(h.ring))] = nil
		h.tail++
	}
	h.ring[h.head%int64(len(h.ring))] = ev
	h.head++
	close(h.notify)
	h.notify = make(chan struct{})
	h.mu.Unlock()
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

// read appends to buf the events from sequence number q on. ok is false when the
// ring no longer holds q. notify is closed on the next change; ended says that no
// event will come after the ones read.
func (h *watchHub) read(q int64, buf []*hubEvent) (_ []*hubEvent, notify <-chan struct{}, ended, ok bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if q < h.tail {
		return buf, nil, false, false
	}
	for ; q < h.head; q++ {
		buf = append(buf, h.ring[q%int64(len(h.ring))])
	}
	return buf, h.notify, h.ended, true
}

// object returns the shared object after the event (prev false) or before it, a t of
// kind k, decoded at most once; nil when the event has no value there.
func (ev *hubEvent) object(s *Store, k *resource.KindInfo, t reflect.Type, prev bool) (resource.Object, error) {
	be := ev.be
	if !prev {
		ev.curOnce.Do(func() {
			if be.Type == backend.EventPut {
				ev.cur, _, ev.curErr = s.stored(k, be.KV.Key, be.KV.ModRevision, be.KV.Value, be.Revision, t)
			}
		})
		return ev.cur, ev.curErr
	}
	ev.prevOnce.Do(func() {
		if p := be.PrevKV; p != nil {
			ev.prev, _, ev.prevErr = s.stored(k, p.Key, p.ModRevision, p.Value, be.Revision, t)
		}
	})
	return ev.prev, ev.prevErr
}

// runHubWatch serves a watch from the hub from sequence number q on, after the
// initial events; it goes on with a backend watch of its own when the hub cannot
// serve it any more.
func (s *Store) runHubWatch(ctx context.Context, w *Watcher, h *watchHub, q int64, k *resource.KindInfo, t reflect.Type,
	f filter, opts WatchOptions, initial []backend.KV, from int64) {
	defer close(w.done)
	defer close(w.ch)
	send := w.sender(ctx)
	if !s.sendInitial(k, f, opts, initial, from, send) {
		return
	}
	prefix := nsPrefix(k, opts.Namespace)
	c := hubCursor{q: q, last: from}
	if !s.followHub(ctx, w, h, &c, k, t, f, prefix, from, send) {
		return
	}
	// Go on from the position with a backend watch of its own.
	start, skip := c.last+1, 0
	if c.count > 0 || c.behind {
		start, skip = c.last, c.count
	}
	if s.hubFallback != nil {
		s.hubFallback(skip)
	}
	bw, err := s.b.Watch(ctx, backend.WatchOptions{Prefix: prefix, StartRevision: start})
	if err != nil {
		if ctx.Err() == nil {
			send(Event{Type: Error, Err: backendError(err)})
		}
		return
	}
	s.followBackend(ctx, w, bw, k, f, opts, s.clock.Now(), c.last, skip, send)
}

// hubCursor is a hub watch's position: q in the ring, and in the backend's terms the
// events of revision last under the watch's prefix it has looked at, count of them.
type hubCursor struct {
	q      int64
	last   int64
	count  int
	behind bool // the reader fell behind: go on with the event at (last, count)
}

// followHub sends the ring's events to the watch until the ring moves past it, the
// hub ends, or its reader falls behind; it reports false when the watch is over (an
// error was sent, the reader left, ctx ended) and true when it must go on from c with
// a backend watch.
func (s *Store) followHub(ctx context.Context, w *Watcher, h *watchHub, c *hubCursor, k *resource.KindInfo,
	t reflect.Type, f filter, prefix string, from int64, send func(Event) bool) bool {
	var buf []*hubEvent
	for {
		var notify <-chan struct{}
		var ended, ok bool
		buf, notify, ended, ok = h.read(c.q, buf[:0])
		if !ok {
			return true // the ring moved past this watch
		}
		for _, ev := range buf {
			c.q++
			be := ev.be
			if be.Revision <= from || !strings.HasPrefix(be.KV.Key, prefix) {
				continue
			}
			if be.Revision == c.last {
				c.count++
			} else {
				c.last, c.count = be.Revision, 1
			}
			out, emit, err := s.convertEvent(k, f, be, func(prev bool) (resource.Object, error) {
				return ev.object(s, k, t, prev)
			})
			if err != nil {
				send(Event{Type: Error, Err: err})
				return false
			}
			if !emit {
				continue
			}
			if len(w.ch) == cap(w.ch) {
				// The reader is behind. From this event on the watch follows the
				// backend, whose history (not the ring) decides how far behind a
				// reader may fall before its watch ends with 410 Expired.
				c.count--
				c.behind = true
				return true
			}
			// Every watch sends its own copy, stamped with the event's revision.
			out.Object = objcodec.DeepCopy(out.Object)
			out.Object.GetObjectMeta().ResourceVersion = formatRV(be.Revision)
			if !send(out) {
				return false
			}
		}
		clear(buf)
		if len(buf) > 0 {
			continue
		}
		if ended {
			return true
		}
		select {
		case <-notify:
		case <-ctx.Done():
			return false
		}
	}
}
