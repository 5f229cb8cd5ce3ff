package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// EventType is the type of a watch [Event].
type EventType string

// Watch event types, as Kubernetes names them.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// AnnotationInitialEventsEnd marks the bookmark that ends the initial events of a
// watch with SendInitialEvents.
const AnnotationInitialEventsEnd = "k8s.io/initial-events-end"

// Event is one change seen by a [Watcher].
type Event struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type EventType
	// Object is the object after the change; for DELETED its last state, stamped with
	// the resourceVersion of the deletion; for BOOKMARK an empty object of the kind
	// carrying only the resourceVersion. Nil for ERROR.
	Object resource.Object
	// Err is set for ERROR: a *resource.StatusError (410 Expired when the watch fell
	// behind what the store keeps, or behind its fellow watches: see
	// [Options.WatchCacheEvents]). The watch ends after it.
	Err error

	src *eventObject // where Object came from, for JSON and Encoded
}

// Watcher delivers the events of a watch, in resourceVersion order, without gaps or
// duplicates.
type Watcher struct {
	ch     chan Event
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// sender returns the function that hands an event to the watcher's reader; false
// when the watch ended first.
func (w *Watcher) sender(ctx context.Context) func(Event) bool {
	return func(ev Event) bool {
		select {
		case w.ch <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// ResultChan returns the events. It is closed when the watch ends.
func (w *Watcher) ResultChan() <-chan Event { return w.ch }

// Stop ends the watch and waits until its channel is closed. It may be called more
// than once.
func (w *Watcher) Stop() {
	w.once.Do(w.cancel)
	<-w.done
}

// Watch watches the objects of example's kind that opts select. With ResourceVersion
// "" or "0" it starts with an ADDED event per existing object; with "N" it delivers
// every change after revision N.
//
// Errors: 400 for a malformed selector or resourceVersion; 410 Expired when N is older
// than what the store keeps; 504 Timeout when N is newer than the store.
func (s *Store) Watch(ctx context.Context, example resource.Object, opts WatchOptions) (*Watcher, error) {
	wctx, cancel := context.WithCancel(ctx)
	st, err := s.startWatch(wctx, example, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &Watcher{ch: make(chan Event, s.opts.WatchBuffer), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(w.ch)
		s.runWatch(wctx, &watchSink{send: w.sender(wctx), w: w}, st)
	}()
	return w, nil
}

// WatchHandler receives the events of a watch that [Store.WatchFunc] runs.
type WatchHandler struct {
	// Ready is called once the watch is set up, before any event; nil calls nothing.
	Ready func()
	// Event is called with each event, as a [Watcher] delivers them; it returns false
	// to end the watch. The watch ends after an ERROR event.
	Event func(Event) bool
	// Idle is called when every event available so far was handed to Event and the
	// watch waits for more (a stream flushes there); nil calls nothing.
	Idle func()
}

// WatchFunc is [Store.Watch] run in the caller's goroutine, without a channel: it
// calls h.Event with each event until ctx ends, h.Event returns false, or an ERROR
// event was handed on. It returns the errors Watch returns, before any event, and nil
// once the watch has run.
//
// Nothing waits for h.Event: while it blocks, the watch keeps nothing but the
// events it took from the store's shared watch cache and has not handed on yet, and
// a watch that has fallen behind the cache by the time h.Event returns ends with 410
// Expired. It saves the goroutine and the channel hop of a Watcher, for a server
// that writes each event to a stream.
func (s *Store) WatchFunc(ctx context.Context, example resource.Object, opts WatchOptions, h WatchHandler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := s.startWatch(ctx, example, opts)
	if err != nil {
		return err
	}
	if h.Ready != nil {
		h.Ready()
	}
	send := func(ev Event) bool {
		return ctx.Err() == nil && h.Event(ev) && ev.Type != Error
	}
	s.runWatch(ctx, &watchSink{send: send, idle: h.Idle}, st)
	return nil
}

// watchSink is where a watch's events go.
type watchSink struct {
	send func(Event) bool // hands an event on; false when the watch is over
	idle func()           // called before the watch waits for more events; may be nil
	w    *Watcher         // the Watcher whose channel send fills, nil for WatchFunc
}

// waiting tells the sink that the watch waits for more events.
func (o *watchSink) waiting() {
	if o.idle != nil {
		o.idle()
	}
}

// watchStart is a watch set up and ready to run: from the hub h at sequence number q,
// or, when bw is set, from the backend watch bw until the hub can take over.
type watchStart struct {
	ws      *watchState
	initial []backend.KV
	h       *watchHub
	q       int64
	bw      backend.Watcher
}

// startWatch checks a watch's options and sets it up.
func (s *Store) startWatch(ctx context.Context, example resource.Object, opts WatchOptions) (*watchStart, error) {
	k, err := s.kindOf(example)
	if err != nil {
		return nil, err
	}
	f, err := parseFilter(opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	if k.Namespaced && opts.Namespace != "" {
		if errs := resource.ValidateNamespaceName(opts.Namespace, resource.NewPath("metadata", "namespace")); len(errs) > 0 {
			return nil, resource.NewInvalid(k, "", errs)
		}
	}
	from, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if err := s.waitForRevision(ctx, from); err != nil {
		return nil, err
	}
	prefix := nsPrefix(k, opts.Namespace)
	var initial []backend.KV
	if from == 0 {
		res, err := s.b.Range(ctx, backend.RangeOptions{Prefix: prefix})
		if err != nil {
			return nil, backendError(err)
		}
		initial, from = res.KVs, res.Revision
	}
	st := &watchStart{ws: &watchState{k: k, t: reflect.TypeOf(example), f: f, opts: opts, from: from, prefix: prefix},
		initial: initial}
	if h := s.hub(from); h != nil {
		if q, ok := h.start(from); ok {
			st.h, st.q = h, q
			return st, nil
		}
	}
	// The ring starts after from: catch up with a backend watch of its own.
	bw, err := s.b.Watch(ctx, backend.WatchOptions{Prefix: prefix, StartRevision: from + 1, ProgressNotify: true})
	if err != nil {
		return nil, backendError(err)
	}
	st.bw = bw
	return st, nil
}

// watchState is what a watch's goroutine knows of it.
type watchState struct {
	k      *resource.KindInfo
	t      reflect.Type
	f      filter
	opts   WatchOptions
	from   int64
	prefix string
}

// runWatch serves a watch: its initial events, then the hub from st's position, or
// st's backend watch until the hub can take over.
func (s *Store) runWatch(ctx context.Context, out *watchSink, st *watchStart) {
	ws, h, bw := st.ws, st.h, st.bw
	send := out.send
	if !s.sendInitial(ws.k, ws.f, ws.opts, st.initial, ws.from, send) {
		if bw != nil {
			bw.Stop()
		}
		return
	}
	c := hubCursor{q: st.q, start: ws.from, floor: ws.from, last: ws.from, sent: ws.from, bm: s.clock.Now(), bmAt: time.Now()}
	for {
		if bw != nil {
			if h, c.q = s.followBackend(ctx, out, bw, ws, &c); h == nil {
				return
			}
			bw = nil
		}
		switch s.followHub(ctx, out, h, &c, ws.k, ws.t, ws.f, ws.opts) {
		case hubDone:
			return
		case hubLost:
			send(Event{Type: Error, Err: resource.NewExpired(fmt.Sprintf(
				"the watch fell %d events behind the others; watch again from the last resourceVersion received",
				s.opts.WatchCacheEvents))})
			return
		}
		// The hub ended: go on from the position with a backend watch of its own.
		start, skip := c.last+1, 0
		if c.count > 0 {
			start, skip = c.last, c.count
		}
		if s.hubFallback != nil {
			s.hubFallback(skip)
		}
		var err error
		bw, err = s.b.Watch(ctx, backend.WatchOptions{Prefix: ws.prefix, StartRevision: start, ProgressNotify: true})
		if err != nil {
			if ctx.Err() == nil {
				send(Event{Type: Error, Err: backendError(err)})
			}
			return
		}
		c.skipRev, c.skip = c.last, skip
	}
}

// sendInitial sends the ADDED events of a watch that started without a
// resourceVersion, and the bookmark that ends them when asked; false when the watch
// ended.
func (s *Store) sendInitial(k *resource.KindInfo, f filter, opts WatchOptions, initial []backend.KV, from int64,
	send func(Event) bool) bool {
	for _, kv := range initial {
		obj, err := s.decode(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision)
		if err != nil {
			send(Event{Type: Error, Err: err})
			return false
		}
		ev := Event{Type: Added, Object: obj, src: &eventObject{k: k, data: kv.Value, rev: kv.ModRevision, obj: obj}}
		if f.matches(obj) && !send(ev) {
			return false
		}
	}
	if len(initial) > 0 || opts.SendInitialEvents {
		if opts.SendInitialEvents && opts.ResourceVersion == "" || opts.SendInitialEvents && opts.ResourceVersion == "0" {
			bm := bookmarkObject(k, from)
			bm.GetObjectMeta().Annotations = map[string]string{AnnotationInitialEventsEnd: "true"}
			if !send(Event{Type: Bookmark, Object: bm}) {
				return false
			}
		}
	}
	return true
}

// followBackend sends the events of the backend watch bw from c on until the watch
// ends (it returns nil) or bw reports progress at a revision the hub holds: it then
// returns the hub and the sequence number to go on from, with c at that revision.
func (s *Store) followBackend(ctx context.Context, out *watchSink, bw backend.Watcher, ws *watchState,
	c *hubCursor) (*watchHub, int64) {
	defer bw.Stop()
	send := out.send
	fail := func(err error) {
		send(Event{Type: Error, Err: err})
	}
	k, f, opts := ws.k, ws.f, ws.opts
	for {
		var be backend.Event
		var ok bool
		if len(bw.Events()) == 0 {
			out.waiting()
		}
		select {
		case be, ok = <-bw.Events():
		case <-ctx.Done():
			return nil, 0
		}
		if !ok {
			err := bw.Err()
			if err == nil || ctx.Err() != nil {
				if err == nil && ctx.Err() == nil {
					fail(resource.NewInternalError(errors.New("store: backend watch ended")))
				}
				return nil, 0
			}
			fail(backendError(err))
			return nil, 0
		}
		if be.Type == backend.EventProgress {
			// Every event up to be.Revision was delivered: the hub may take over.
			if be.Revision >= c.last {
				if h := s.hub(be.Revision); h != nil {
					if q, ok := h.start(be.Revision); ok {
						c.floor, c.last, c.count, c.skip = be.Revision, be.Revision, 0, 0
						return h, q
					}
				}
			}
			if opts.AllowBookmarks && be.Revision > c.start && be.Revision >= max(c.sent, c.floor) && s.bookmarkDue(ctx, c) {
				c.bm, c.bmAt = s.clock.Now(), time.Now()
				if !send(Event{Type: Bookmark, Object: bookmarkObject(k, be.Revision)}) {
					return nil, 0
				}
				c.sent = be.Revision
			}
			continue
		}
		if c.skip > 0 && be.Revision == c.skipRev {
			c.skip--
			continue
		}
		if be.Revision == c.last {
			c.count++
		} else {
			c.last, c.count = be.Revision, 1
		}
		var cur, prev resource.Object
		ev, emit, err := s.convertEvent(k, f, be, func(isPrev bool) (resource.Object, error) {
			kv := &be.KV
			if isPrev {
				kv = be.PrevKV
			} else if be.Type != backend.EventPut {
				return nil, nil
			}
			obj, err := s.decode(k, kv.Key, kv.ModRevision, kv.Value, be.Revision)
			if isPrev {
				prev = obj
			} else {
				cur = obj
			}
			return obj, err
		})
		if err != nil {
			fail(err)
			return nil, 0
		}
		if !emit {
			continue
		}
		switch {
		case cur != nil && ev.Object == cur:
			ev.src = &eventObject{k: k, data: be.KV.Value, rev: be.Revision, obj: cur}
		case prev != nil && ev.Object == prev:
			ev.src = &eventObject{k: k, data: be.PrevKV.Value, rev: be.Revision, obj: prev}
		}
		if !send(ev) {
			return nil, 0
		}
		c.sent = be.Revision
	}
}

// convertEvent turns a backend event into a watch event, applying the filter: an
// object that starts matching is ADDED, one that stops matching is DELETED. object
// gives the object after the event (prev false; nil for a delete) or before it (nil
// for a create); the event carries one of them.
func (s *Store) convertEvent(k *resource.KindInfo, f filter, be backend.Event,
	object func(prev bool) (resource.Object, error)) (Event, bool, error) {
	var cur, prev resource.Object
	var err error
	if be.Type == backend.EventPut {
		if cur, err = object(false); err != nil {
			return Event{}, false, err
		}
	}
	needPrev := be.Type == backend.EventDelete || (!f.empty() && be.PrevKV != nil)
	if needPrev && be.PrevKV != nil {
		if prev, err = object(true); err != nil {
			return Event{}, false, err
		}
	}
	curOK := cur != nil && f.matches(cur)
	prevOK := prev != nil && f.matches(prev)
	if f.empty() && be.Type == backend.EventPut {
		prevOK = be.PrevKV != nil
	}
	switch {
	case be.Type == backend.EventDelete:
		if prevOK {
			return Event{Type: Deleted, Object: prev}, true, nil
		}
	case curOK && prevOK:
		return Event{Type: Modified, Object: cur}, true, nil
	case curOK:
		return Event{Type: Added, Object: cur}, true, nil
	case prevOK:
		return Event{Type: Deleted, Object: prev}, true, nil
	}
	return Event{}, false, nil
}
