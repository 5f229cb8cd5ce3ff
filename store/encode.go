package store

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// writeEncoding is the first encoding of a write.
//
// A create or update encodes twice: first to find what the write changes (its
// managedFields and generation), then with those set. For a kind objcodec can splice,
// the first encoding leaves managedFields out and the second is the first with them
// spliced in (see objcodec's doc); any other write takes json.Marshal twice.
type writeEncoding struct {
	data   []byte
	gen    int64 // metadata.generation in data
	sliced bool  // data has no managedFields; finish splices them in
}

// encodeFirst encodes work, the object a write is about to store, for the diffs
// that decide its managedFields and generation.
func (s *Store) encodeFirst(k *resource.KindInfo, work resource.Object) (writeEncoding, error) {
	meta := work.GetObjectMeta()
	if len(s.opts.Mutating) > 0 || !objcodec.Spliceable(reflect.TypeOf(work)) {
		data, err := s.encode(k, work)
		return writeEncoding{data: data, gen: meta.Generation}, err
	}
	sent := meta.ManagedFields
	meta.ManagedFields = nil
	data, err := s.encodeUnchecked(k, work)
	meta.ManagedFields = sent
	if err != nil {
		return writeEncoding{}, err
	}
	// The size limit applies as to the whole encoding, managedFields included.
	size := len(data)
	if len(sent) > 0 && size+objcodec.ManagedFieldsBound(sent) > s.maxSize {
		mf, ok := objcodec.AppendManagedFields(nil, sent)
		if !ok {
			data, err := s.encode(k, work)
			return writeEncoding{data: data, gen: meta.Generation}, err
		}
		size += len(`,"managedFields":`) + len(mf)
	}
	if size > s.maxSize {
		return writeEncoding{}, s.tooLarge(k, meta.Name, size)
	}
	return writeEncoding{data: data, gen: meta.Generation, sliced: true}, nil
}

// finish returns the encoding of work as stored, after its managedFields and
// generation were set.
func (s *Store) finish(k *resource.KindInfo, work resource.Object, first writeEncoding) ([]byte, error) {
	meta := work.GetObjectMeta()
	if first.sliced {
		if data, ok := objcodec.SpliceMeta(first.data, first.gen, meta.Generation, meta.ManagedFields, memberValue); ok {
			if len(data) > s.maxSize {
				return nil, s.tooLarge(k, meta.Name, len(data))
			}
			return data, nil
		}
	}
	return s.encode(k, work)
}

// memberValue is memberNamed as objcodec.SpliceMeta asks for it.
func memberValue(b []byte, key string) ([]byte, bool) {
	m, ok := memberNamed(b, key)
	return m.value, ok
}

// encodeUnchecked is encode without the size limit.
func (s *Store) encodeUnchecked(k *resource.KindInfo, obj resource.Object) ([]byte, error) {
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, apiVersionOf(k, tm.APIVersion)
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	meta.ResourceVersion = ""
	b, ok := objcodec.Encode(obj)
	var err error
	if !ok {
		b, err = json.Marshal(obj)
	}
	meta.ResourceVersion = rv
	if err != nil {
		return nil, resource.NewInternalError(fmt.Errorf("store: encode %s: %w", k.Kind, err))
	}
	return b, nil
}

// apiVersionOf returns k.APIVersion(), which is have when have is that already (it
// then costs no allocation).
func apiVersionOf(k *resource.KindInfo, have string) string {
	g, v := k.Group, k.Version
	if g == "" {
		return v
	}
	if len(have) == len(g)+1+len(v) && have[:len(g)] == g && have[len(g)] == '/' && have[len(g)+1:] == v {
		return have
	}
	return k.APIVersion()
}

// tooLarge is the error for an object of n encoded bytes, over the limit.
func (s *Store) tooLarge(k *resource.KindInfo, name string, n int) error {
	return resource.NewRequestEntityTooLarge(fmt.Sprintf(
		"%s %q is too large: %d bytes encoded, the limit is %d", k.Kind, name, n, s.maxSize))
}
