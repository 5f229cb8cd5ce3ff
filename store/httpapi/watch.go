package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// watchWriteTimeout bounds the write of one event: a client that stops reading is
// dropped instead of holding the watch (and its buffered events) forever.
const watchWriteTimeout = 30 * time.Second

// watch streams the events of a watch as JSON lines of {"type", "object"}, the way
// kube-apiserver streams them for application/json. Errors before the stream starts
// (a malformed selector, 410 Expired for a compacted resourceVersion) are answered as
// HTTP errors; an error during the stream is an ERROR event carrying a Status, after
// which the stream ends.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, ri *route) error {
	conv, err := s.watchConverter(r, ri)
	if err != nil {
		return err
	}
	k := ri.kind
	o := ri.opts
	ctx, cancel := context.WithTimeout(r.Context(), o.watchTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	wo := store.WatchOptions{
		Namespace:         ri.namespace,
		LabelSelector:     o.list.LabelSelector,
		FieldSelector:     o.list.FieldSelector,
		ResourceVersion:   o.list.ResourceVersion,
		AllowBookmarks:    o.allowBookmarks,
		SendInitialEvents: o.initialEvents,
		// A plain stream only reads and encodes the objects: every watch of an event
		// shares one object, and its encoding. A stream of another form (a Table,
		// metadata only) converts each object, so it gets its own copies.
		SharedObjects: conv == nil,
	}
	rc := http.NewResponseController(w)
	ready := func() {
		w.Header().Set("Content-Type", resource.MediaTypeJSON)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(http.StatusOK)
		_ = rc.Flush()
	}
	var buf []byte
	var deadlineSet time.Time
	gone := false
	event := func(ev store.Event) bool {
		if ev.Type != store.Error && (ev.Object == nil || (ev.Type != store.Bookmark && !ri.visible(ev.Object))) {
			return true
		}
		typ, data := s.watchEventData(ev, k, conv)
		// Each write has watchWriteTimeout; the deadline moves at most once a second.
		if now := time.Now(); now.Sub(deadlineSet) > time.Second {
			deadlineSet = now
			_ = rc.SetWriteDeadline(now.Add(watchWriteTimeout))
		}
		if !writeWatchEvent(w, &buf, typ, data) {
			gone = true
			return false
		}
		if typ == store.Error {
			_ = rc.Flush()
			return false
		}
		return true
	}
	// Flush when the store has nothing more ready: a reader that keeps up gets every
	// event at once, one behind gets them in fewer, larger writes.
	idle := func() {
		if !gone && rc.Flush() != nil {
			gone = true
			cancel()
		}
	}
	// The stream runs in this goroutine: no channel between the store and it.
	return s.store.WatchFunc(ctx, k.New(), wo, store.WatchHandler{Ready: ready, Event: event, Idle: idle})
}

// watchEventData returns the type and the object of ev as the stream writes them: the
// object's JSON (shared with every other watch of the event: not to be changed), a
// bookmark's object, or the Status of an error.
//
// conv, when not nil, turns each object into the form the client asked for (see
// watchConverter); that form is encoded for this watch alone.
func (s *Server) watchEventData(ev store.Event, k *resource.KindInfo, conv func(resource.Object) any) (store.EventType, []byte) {
	var data []byte
	err := ev.Err
	switch {
	case ev.Type == store.Error:
	case conv != nil:
		setTypeMeta(ev.Object, k)
		data, err = s.codec.Encode(conv(ev.Object), resource.MediaTypeJSON)
	default:
		data, err = ev.JSON()
	}
	if err == nil {
		return ev.Type, data
	}
	st := resource.StatusOf(err)
	st.Kind, st.APIVersion, st.Status = "Status", "v1", resource.StatusFailure
	data, _ = s.codec.Encode(st, resource.MediaTypeJSON)
	return store.Error, data
}

// writeWatchEvent writes one line {"type":…,"object":…} of the stream through buf,
// the stream's scratch buffer; false when the client is gone.
func writeWatchEvent(w http.ResponseWriter, buf *[]byte, typ store.EventType, object []byte) bool {
	b := append((*buf)[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = append(b, object...)
	b = append(b, "}\n"...)
	*buf = b
	_, err := w.Write(b)
	return err == nil
}
