package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/management-service/mgmt/resource"
)

// objectCache keeps decoded objects by key and modRevision, so that reads, lists and
// watch fan-out copy a decoded object instead of decoding JSON again. An entry is
// valid only for the exact revision it was decoded at; a stale one is a miss, never
// a wrong answer. Cached objects are never handed out: callers get deep copies.
type objectCache struct {
	mu  sync.RWMutex
	m   map[string]cacheEntry
	max int
}

type cacheEntry struct {
	rev int64
	obj resource.Object
	rv  string // rev as a resourceVersion, for reads stamped with it
}

func newObjectCache(max int) *objectCache {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = 100000
	}
	return &objectCache{m: map[string]cacheEntry{}, max: max}
}

// has reports whether the cache holds an object for key, at any revision.
func (c *objectCache) has(key string) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	_, ok := c.m[key]
	c.mu.RUnlock()
	return ok
}

func (c *objectCache) get(key string, rev int64) resource.Object {
	return c.entry(key, rev).obj
}

// entry returns the entry of key at rev; a zero entry when there is none.
func (c *objectCache) entry(key string, rev int64) cacheEntry {
	if c == nil || rev == 0 {
		return cacheEntry{}
	}
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.rev != rev {
		return cacheEntry{}
	}
	return e
}

// put stores obj, which the caller must not change afterwards.
func (c *objectCache) put(key string, rev int64, obj resource.Object) {
	if c == nil || rev == 0 {
		return
	}
	c.putRV(key, rev, formatRV(rev), obj)
}

// putRV is put with rv, rev as a resourceVersion.
func (c *objectCache) putRV(key string, rev int64, rv string, obj resource.Object) {
	if c == nil || rev == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok && old.rev > rev {
		return // a newer revision is already here
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m { // evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cacheEntry{rev: rev, obj: obj, rv: rv}
}

func (c *objectCache) drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// decode returns a private copy of the object stored at key with modRev, stamped
// with resourceVersion stamp.
func (s *Store) decode(k *resource.KindInfo, key string, modRev int64, data []byte, stamp int64) (resource.Object, error) {
	out := k.New()
	if err := s.decodeTo(k, key, modRev, data, stamp, out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeTo fills out with the object stored at key with modRev (from the cache or
// from data) and stamps resourceVersion stamp.
func (s *Store) decodeTo(k *resource.KindInfo, key string, modRev int64, data []byte, stamp int64, out resource.Object) error {
	if s.cache == nil || modRev == 0 {
		// Nothing to share: decode straight into out.
		reflect.ValueOf(out).Elem().SetZero()
		if err := s.unmarshal(k, key, data, out); err != nil {
			return err
		}
		out.GetObjectMeta().ResourceVersion = formatRV(stamp)
		return nil
	}
	src, rv, err := s.stored(k, key, modRev, data, stamp, reflect.TypeOf(out))
	if err != nil {
		return err
	}
	deepCopyInto(out, src)
	out.GetObjectMeta().ResourceVersion = rv
	return nil
}

// unmarshal decodes the stored bytes data of key into out, a zero object.
func (s *Store) unmarshal(k *resource.KindInfo, key string, data []byte, out resource.Object) error {
	if err := json.Unmarshal(data, out); err != nil {
		return resource.NewInternalError(fmt.Errorf("store: stored %s %s is corrupt: %w", k.Kind, key, err))
	}
	tm := out.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()
	return nil
}

// stored returns the object stored at key with modRev, as a t (a pointer type of
// kind k), decoded from data or taken from the cache, and stamp as a
// resourceVersion. The object is shared: the caller must not change it, and hands out
// only copies.
func (s *Store) stored(k *resource.KindInfo, key string, modRev int64, data []byte, stamp int64, t reflect.Type) (resource.Object, string, error) {
	if e := s.cache.entry(key, modRev); e.obj != nil && reflect.TypeOf(e.obj) == t {
		if resultCheck != nil {
			resultCheck(s, k, key, data, e.obj)
		}
		rv := e.rv
		if stamp != modRev {
			rv = formatRV(stamp)
		}
		return e.obj, rv, nil
	}
	obj := reflect.New(t.Elem()).Interface().(resource.Object)
	if err := s.unmarshal(k, key, data, obj); err != nil {
		return nil, "", err
	}
	if modRev != 0 {
		s.cache.put(key, modRev, obj)
	}
	return obj, formatRV(stamp), nil
}

// result fills the caller's object with what a write stored at key (its bytes
// data at revision rev, none on a dry run).
func (s *Store) result(k *resource.KindInfo, key string, data []byte, rev int64, out resource.Object) error {
	if err := s.decodeTo(k, key, rev, data, rev, out); err != nil {
		return err
	}
	if rev == 0 {
		out.GetObjectMeta().ResourceVersion = ""
	}
	return nil
}

// giveResult moves the written object into the caller's object and stamps the
// commit's revision (none on a dry run). The write recorded its value with
// putObject, which keeps a copy for the cache and the tracker: only the value the
// transaction finally wrote for a key gets there, never an intermediate state of a
// key written twice in one transaction (a create, then a status update), which a
// concurrent reader would take for the stored object.
//
// written is exactly what decoding the stored bytes gives (writes start from
// copyObject's round-trip-exact copy and change it only in ways a round trip keeps),
// so the caller gets back the stored object.
func (tx *Tx) giveResult(out, written resource.Object, rev int64) error {
	written.GetObjectMeta().ResourceVersion = ""
	moveInto(out, written)
	if rev != 0 {
		out.GetObjectMeta().ResourceVersion = tx.formatRV(rev)
	}
	return nil
}

// resultCheck, set by tests, is shown every object a commit remembers as the one
// stored at key with bytes data, and every object the cache serves for them.
var resultCheck func(s *Store, k *resource.KindInfo, key string, data []byte, stored resource.Object)

// copiers holds a compiled deep-copy function per type.
var copiers sync.Map // reflect.Type → copyFunc

type copyFunc func(dst, src reflect.Value)

// deepCopy returns a copy of obj that shares no mutable memory with it: through its
// own DeepCopyObject when it has one, else by reflection.
func deepCopy(obj resource.Object) resource.Object {
	if c, ok := obj.(resource.DeepCopier); ok {
		return c.DeepCopyObject()
	}
	v := reflect.ValueOf(obj)
	out := reflect.New(v.Type().Elem())
	copierFor(v.Type().Elem())(out.Elem(), v.Elem())
	return out.Interface().(resource.Object)
}

// deepCopyInto makes dst a deep copy of src (same pointer type).
func deepCopyInto(dst, src resource.Object) {
	if c, ok := src.(resource.DeepCopierInto); ok {
		c.DeepCopyObjectInto(dst)
		return
	}
	if c, ok := src.(resource.DeepCopier); ok {
		moveInto(dst, c.DeepCopyObject())
		return
	}
	d, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	copierFor(d.Type())(d, sv)
}

// copierFor compiles a deep-copy function for t. Structs with unexported fields are
// copied as values (time.Time is immutable, which is the case that matters here).
func copierFor(t reflect.Type) copyFunc {
	if f, ok := copiers.Load(t); ok {
		return f.(copyFunc)
	}
	var f copyFunc
	// A placeholder breaks recursion for self-referencing types.
	var self copyFunc = func(d, s reflect.Value) { f(d, s) }
	copiers.Store(t, self)
	f = buildCopier(t)
	copiers.Store(t, f)
	return f
}

func assign(d, s reflect.Value) { d.Set(s) }

func buildCopier(t reflect.Type) copyFunc {
	if !hasRefs(t, map[reflect.Type]bool{}) {
		return assign
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.New(elem)
			copierFor(elem)(n.Elem(), s.Elem())
			d.Set(n)
		}
	case reflect.Slice:
		elem := t.Elem()
		plain := !hasRefs(elem, map[reflect.Type]bool{})
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.MakeSlice(t, s.Len(), s.Len())
			if plain {
				reflect.Copy(n, s)
			} else {
				c := copierFor(elem)
				for i := 0; i < s.Len(); i++ {
					c(n.Index(i), s.Index(i))
				}
			}
			d.Set(n)
		}
	case reflect.Map:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.MakeMapWithSize(t, s.Len())
			c := copierFor(elem)
			it := s.MapRange()
			for it.Next() {
				v := reflect.New(elem).Elem()
				c(v, it.Value())
				n.SetMapIndex(it.Key(), v)
			}
			d.Set(n)
		}
	case reflect.Struct:
		return structCopier(t)
	case reflect.Array:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			c := copierFor(elem)
			for i := 0; i < s.Len(); i++ {
				c(d.Index(i), s.Index(i))
			}
		}
	}
	return assign // interfaces, channels, funcs: shared (the kinds have none)
}

// structCopier copies a struct field by field, each with its own copier; a struct
// with an unexported field is assigned whole.
func structCopier(t reflect.Type) copyFunc {
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			return assign
		}
	}
	type field struct {
		i int
		c copyFunc
	}
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		fields = append(fields, field{i, copierFor(t.Field(i).Type)})
	}
	return func(d, s reflect.Value) {
		for _, f := range fields {
			f.c(d.Field(f.i), s.Field(f.i))
		}
	}
}

// hasRefs reports whether values of t can share memory when assigned.
func hasRefs(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return hasRefs(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasRefs(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
