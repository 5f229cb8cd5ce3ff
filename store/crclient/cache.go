package crclient

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxCached bounds the conversion cache; past it the cache starts over.
const maxCached = 1 << 17

// convCache keeps, per object and per Go type of the user's, the last conversion of
// the store's object into that type, so that reading an object that has not changed
// since (same uid and resourceVersion, which the store changes on every write)
// copies the converted object instead of going through JSON again. It is safe for
// concurrent use.
type convCache struct {
	mu sync.Mutex
	m  map[convKey]convEntry
}

type convKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
	t         reflect.Type
}

type convEntry struct {
	uid, rv string
	obj     runtime.Object // never handed out: only copies of it
}

// get copies the cached conversion into dst; false when there is none for this
// uid and resourceVersion.
func (cc *convCache) get(k convKey, uid, rv string, dst runtime.Object) bool {
	cc.mu.Lock()
	e, ok := cc.m[k]
	cc.mu.Unlock()
	if !ok || e.uid != uid || e.rv != rv {
		return false
	}
	copyObject(dst, e.obj)
	return true
}

// put remembers a copy of obj as the conversion of the object with uid and rv.
func (cc *convCache) put(k convKey, uid, rv string, obj runtime.Object) {
	if uid == "" || rv == "" {
		return // a dry run's result, or a bookmark: nothing that a read gives back
	}
	cp := obj.DeepCopyObject()
	cc.mu.Lock()
	if cc.m == nil || len(cc.m) >= maxCached {
		cc.m = make(map[convKey]convEntry)
	}
	cc.m[k] = convEntry{uid: uid, rv: rv, obj: cp}
	cc.mu.Unlock()
}

// copyObject makes dst, of src's type, a deep copy of src.
func copyObject(dst, src runtime.Object) {
	if u, ok := src.(*unstructured.Unstructured); ok {
		dst.(*unstructured.Unstructured).Object = runtime.DeepCopyJSON(u.Object)
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}
