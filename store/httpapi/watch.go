package httpapi

import (
	"bytes"
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
	}
	wt, err := s.store.Watch(ctx, k.New(), wo)
	if err != nil {
		return err
	}
	defer wt.Stop()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", resource.MediaTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil
	}
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-wt.ResultChan():
			if !ok {
				return nil
			}
			buf.Reset()
			var obj any
			if ev.Type == store.Error {
				st := resource.StatusOf(ev.Err)
				st.Kind, st.APIVersion, st.Status = "Status", "v1", resource.StatusFailure
				obj = st
			} else {
				if ev.Object == nil || (ev.Type != store.Bookmark && !ri.visible(ev.Object)) {
					continue
				}
				setTypeMeta(ev.Object, k)
				obj = conv(ev.Object)
			}
			data, err := s.codec.Encode(obj, resource.MediaTypeJSON)
			if err != nil {
				st := resource.StatusOf(err)
				st.Kind, st.APIVersion, st.Status = "Status", "v1", resource.StatusFailure
				data, _ = s.codec.Encode(st, resource.MediaTypeJSON)
				ev.Type = store.Error
			}
			buf.WriteString(`{"type":"`)
			buf.WriteString(string(ev.Type))
			buf.WriteString(`","object":`)
			buf.Write(data)
			buf.WriteString("}\n")
			_ = rc.SetWriteDeadline(time.Now().Add(watchWriteTimeout))
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
			if ev.Type == store.Error {
				return nil
			}
		}
	}
}
