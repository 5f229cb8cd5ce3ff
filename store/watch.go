package store

import (
	"context"
	"errors"
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
	// behind what the store keeps). The watch ends after it.
	Err error
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
	wctx, cancel := context.WithCancel(ctx)
	w := &Watcher{ch: make(chan Event, s.opts.WatchBuffer), cancel: cancel, done: make(chan struct{})}
	if !opts.AllowBookmarks {
		// Bookmarks need the backend's progress notifications: such a watch follows
		// the backend itself.
		if h := s.hub(from); h != nil {
			if q, ok := h.start(from); ok {
				go s.runHubWatch(wctx, w, h, q, k, reflect.TypeOf(example), f, opts, initial, from)
				return w, nil
			}
		}
	}
	bw, err := s.b.Watch(wctx, backend.WatchOptions{Prefix: prefix, StartRevision: from + 1, ProgressNotify: opts.AllowBookmarks})
	if err != nil {
		cancel()
		return nil, backendError(err)
	}
	go s.runWatch(wctx, w, bw, k, f, opts, initial, from, s.clock.Now())
	return w, nil
}

// runWatch serves a watch with a backend watch of its own.
func (s *Store) runWatch(ctx context.Context, w *Watcher, bw backend.Watcher, k *resource.KindInfo, f filter,
	opts WatchOptions, initial []backend.KV, from int64, lastBookmark time.Time) {
	defer close(w.done)
	defer close(w.ch)
	defer bw.Stop()
	send := w.sender(ctx)
	if !s.sendInitial(k, f, opts, initial, from, send) {
		return
	}
	s.followBackend(ctx, w, bw, k, f, opts, lastBookmark, 0, 0, send)
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
		if f.matches(obj) && !send(Event{Type: Added, Object: obj}) {
			return false
		}
	}
	if len(initial) > 0 || opts.SendInitialEvents {
		if opts.SendInitialEvents && opts.ResourceVersion == "" || opts.SendInitialEvents && opts.ResourceVersion == "0" {
			bm := k.New()
			bm.GetTypeMeta().Kind, bm.GetTypeMeta().APIVersion = k.Kind, k.APIVersion()
			bm.GetObjectMeta().ResourceVersion = formatRV(from)
			bm.GetObjectMeta().Annotations = map[string]string{AnnotationInitialEventsEnd: "true"}
			if !send(Event{Type: Bookmark, Object: bm}) {
				return false
			}
		}
	}
	return true
}

// followBackend sends the events of the backend watch bw until it or the watch ends,
// leaving out the first skip events of revision skipRev (sent already).
func (s *Store) followBackend(ctx context.Context, w *Watcher, bw backend.Watcher, k *resource.KindInfo, f filter,
	opts WatchOptions, lastBookmark time.Time, skipRev int64, skip int, send func(Event) bool) {
	defer bw.Stop()
	fail := func(err error) {
		send(Event{Type: Error, Err: err})
	}
	for {
		var be backend.Event
		var ok bool
		select {
		case be, ok = <-bw.Events():
		case <-ctx.Done():
			return
		}
		if !ok {
			err := bw.Err()
			if err == nil || ctx.Err() != nil {
				if err == nil && ctx.Err() == nil {
					fail(resource.NewInternalError(errors.New("store: backend watch ended")))
				}
				return
			}
			fail(backendError(err))
			return
		}
		if be.Type == backend.EventProgress {
			if opts.AllowBookmarks && s.clock.Now().Sub(lastBookmark) >= s.opts.BookmarkInterval {
				lastBookmark = s.clock.Now()
				bm := k.New()
				bm.GetTypeMeta().Kind, bm.GetTypeMeta().APIVersion = k.Kind, k.APIVersion()
				bm.GetObjectMeta().ResourceVersion = formatRV(be.Revision)
				if !send(Event{Type: Bookmark, Object: bm}) {
					return
				}
			}
			continue
		}
		if skip > 0 && be.Revision == skipRev {
			skip--
			continue
		}
		ev, emit, err := s.convertEvent(k, f, be, func(prev bool) (resource.Object, error) {
			kv := &be.KV
			if prev {
				kv = be.PrevKV
			} else if be.Type != backend.EventPut {
				return nil, nil
			}
			return s.decode(k, kv.Key, kv.ModRevision, kv.Value, be.Revision)
		})
		if err != nil {
			fail(err)
			return
		}
		if emit && !send(ev) {
			return
		}
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
