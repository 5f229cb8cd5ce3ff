package crclient

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/management-service/mgmt/store"
)

// unstructuredLike stands for "an unstructured object" where newObject asks for an
// example.
var unstructuredLike runtime.Object = &unstructured.Unstructured{}

// watcher turns the store's events into watch.Events of the user's type.
type watcher struct {
	w      *store.Watcher
	out    chan watch.Event
	stop   chan struct{}
	once   sync.Once
	closed chan struct{}
}

var _ watch.Interface = (*watcher)(nil)

func newWatcher(c *Client, k *kind, list runtime.Object, w *store.Watcher, indexed []indexedReq) *watcher {
	ww := &watcher{w: w, out: make(chan watch.Event), stop: make(chan struct{}), closed: make(chan struct{})}
	like := list
	go func() {
		defer close(ww.closed)
		defer close(ww.out)
		for ev := range w.ResultChan() {
			var out watch.Event
			if ev.Type == store.Error {
				st := metav1.Status{}
				if se, ok := toAPIError(ev.Err).(interface{ Status() metav1.Status }); ok {
					st = se.Status()
				} else if ev.Err != nil {
					st = metav1.Status{Status: metav1.StatusFailure, Message: ev.Err.Error(), Code: 500}
				}
				out = watch.Event{Type: watch.Error, Object: &st}
			} else {
				if len(indexed) > 0 && ev.Type != store.Bookmark {
					ok, err := c.matchIndexed(k, ev.Object, indexed)
					if err != nil || !ok {
						continue
					}
				}
				obj, err := c.newObject(k, like)
				if err != nil {
					continue
				}
				if err := c.fromStore(k, ev.Object, obj); err != nil {
					continue
				}
				if keepsTypeMeta(like) {
					obj.GetObjectKind().SetGroupVersionKind(k.gvk)
				}
				out = watch.Event{Type: watch.EventType(ev.Type), Object: obj}
			}
			select {
			case ww.out <- out:
			case <-ww.stop:
				return
			}
		}
	}()
	return ww
}

// ResultChan returns the events; it is closed when the watch ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch. It may be called more than once.
func (w *watcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.w.Stop()
	})
	<-w.closed
}
