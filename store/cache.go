package store

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// DefaultObjectCacheBytes is the default of [Options.ObjectCacheBytes]: 64 MiB, about
// 30,000 objects of 1 KB.
const DefaultObjectCacheBytes = 64 << 20

// newObjectCache returns the decoded-object cache opts ask for; nil when it is off.
func newObjectCache(opts Options) *objcodec.Cache {
	b := opts.ObjectCacheBytes
	if b == 0 {
		b = DefaultObjectCacheBytes
	}
	return objcodec.NewCache(opts.ObjectCache, b)
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
	objcodec.DeepCopyInto(out, src)
	out.GetObjectMeta().ResourceVersion = rv
	return nil
}

// unmarshal decodes the stored bytes data of key into out, a zero object.
//
// objcodec.Decode gives exactly what json.Unmarshal gives, at a fraction of the
// cost, for the typed kinds; where it answers no (a type it does not cover, bytes
// it is not certain of), it may have half filled out, and json.Unmarshal starts
// over from a zero object.
func (s *Store) unmarshal(k *resource.KindInfo, key string, data []byte, out resource.Object) error {
	if !objcodec.Decode(data, out) {
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(data, out); err != nil {
			return resource.NewInternalError(fmt.Errorf("store: stored %s %s is corrupt: %w", k.Kind, key, err))
		}
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
	if e := s.cache.Entry(key, modRev); e.Obj != nil && reflect.TypeOf(e.Obj) == t {
		if c := s.resultCheck(); c != nil {
			c.checkResult(k, key, data, e.Obj)
		}
		rv := e.RV
		if stamp != modRev {
			rv = formatRV(stamp)
		}
		return e.Obj, rv, nil
	}
	obj := reflect.New(t.Elem()).Interface().(resource.Object)
	if err := s.unmarshal(k, key, data, obj); err != nil {
		return nil, "", err
	}
	if modRev != 0 {
		s.cache.Put(key, modRev, len(data), obj)
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
// objcodec.Copy's round-trip-exact copy and change it only in ways a round trip
// keeps), so the caller gets back the stored object.
func (tx *Tx) giveResult(out, written resource.Object, rev int64) error {
	written.GetObjectMeta().ResourceVersion = ""
	moveInto(out, written)
	if rev != 0 {
		out.GetObjectMeta().ResourceVersion = tx.formatRV(rev)
	}
	return nil
}

// resultChecker is implemented by *Store only in the store's own test binary
// (export_test.go), where every object a commit remembers as the one stored at a key,
// and every object the cache serves for it, is checked against the stored bytes. In
// a program no *Store implements it, and nothing is checked.
type resultChecker interface {
	// checkingResults reports whether the check is on (it is off in benchmarks).
	checkingResults() bool
	// checkResult checks stored, remembered as the object stored at key with bytes
	// data.
	checkResult(k *resource.KindInfo, key string, data []byte, stored resource.Object)
}

// resultCheck returns the tests' check of remembered objects, or nil when it is
// off (always in a program).
func (s *Store) resultCheck() resultChecker {
	if c, ok := any(s).(resultChecker); ok && c.checkingResults() {
		return c
	}
	return nil
}
