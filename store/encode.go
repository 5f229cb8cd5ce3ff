package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
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
	// scratch, when set, is the scratchBufs slot data goes back to (release) once
	// finish made the stored encoding, which never shares data's array. data is the
	// write's alone: the slot's array, or a fresh one when it was too small.
	scratch *[]byte
}

// scratchBufs holds the buffers of first encodings, which live only while a write
// runs: a write of an object of a kilobyte or more then allocates one encoding, the
// one it stores, instead of two.
var scratchBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxScratch is the largest buffer kept in scratchBufs: a write of a huge object
// does not leave its buffer behind.
const maxScratch = 64 << 10

// release hands first's buffer back to scratchBufs. first.data must not be used
// afterwards.
func (first writeEncoding) release() {
	if first.scratch == nil {
		return
	}
	if cap(first.data) <= maxScratch {
		*first.scratch = first.data[:0]
		scratchBufs.Put(first.scratch)
	}
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
	buf := scratchBufs.Get().(*[]byte)
	data, err := s.appendUnchecked(*buf, k, work)
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
	return writeEncoding{data: data, gen: meta.Generation, sliced: true, scratch: buf}, nil
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
	return s.appendUnchecked(nil, k, obj)
}

// appendUnchecked is encodeUnchecked writing into dst's array when it has room (dst
// may be nil): the result is dst's array or a fresh one, never shared with anything
// else.
func (s *Store) appendUnchecked(dst []byte, k *resource.KindInfo, obj resource.Object) ([]byte, error) {
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, apiVersionOf(k, tm.APIVersion)
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	meta.ResourceVersion = ""
	b, ok := objcodec.AppendEncode(dst[:0], obj)
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

// eventObject is the object of a watch event with what it was decoded from: the
// stored bytes and the revision it is stamped with. An event served by the watch hub
// shares it with every watch of the event, and with it the encodings of the object
// (Event.JSON, Event.Encoded), each made once.
type eventObject struct {
	once sync.Once // decodes obj (for an event of the hub)
	k    *resource.KindInfo
	data []byte          // the stored bytes: json.Marshal's, without resourceVersion
	rev  int64           // the resourceVersion obj carries
	obj  resource.Object // as delivered, stamped with rev (shared: never changed)
	err  error

	jsonOnce sync.Once
	json     []byte
	jsonErr  error

	mu   sync.Mutex
	encs []*encoding // by format, in the order asked for
}

// encoding is one encoding of an event's object, made once.
type encoding struct {
	format string
	once   sync.Once
	data   []byte
	err    error
}

// JSON returns the event's object as JSON, written as json.Marshal writes it: for
// an object the store delivered, from its stored bytes with the resourceVersion
// written in, without decoding or encoding it again. The bytes of an event served by
// the store's shared watch cache are made once and shared by every watch of the
// event: the caller must not change them. They are the object as the store
// delivered it: changes made to Object since are not in them. For an event without
// an object (ERROR) it returns nil.
func (ev Event) JSON() ([]byte, error) {
	if ev.src == nil {
		if ev.Object == nil {
			return nil, nil
		}
		return encodeObject(ev.Object)
	}
	o := ev.src
	o.jsonOnce.Do(func() {
		var ok bool
		if o.json, ok = withResourceVersion(o.k, o.data, o.rev); !ok {
			o.json, o.jsonErr = encodeObject(o.obj)
		}
	})
	return o.json, o.jsonErr
}

// Encoded returns the event's object as encode writes it in format, a name of the
// caller's choosing for one wire format ("table", "yaml"): for an event served by the
// store's shared watch cache, encode runs once per format for all of the event's
// watches, which share the bytes (the caller must not change them). encode gets
// the object as the store delivered it, shared with other watches: it must not
// change it.
func (ev Event) Encoded(format string, encode func(resource.Object) ([]byte, error)) ([]byte, error) {
	if ev.src == nil || ev.src.obj == nil {
		return encode(ev.Object)
	}
	o := ev.src
	o.mu.Lock()
	var e *encoding
	for _, have := range o.encs {
		if have.format == format {
			e = have
			break
		}
	}
	if e == nil {
		e = &encoding{format: format}
		o.encs = append(o.encs, e)
	}
	o.mu.Unlock()
	e.once.Do(func() { e.data, e.err = encode(o.obj) })
	return e.data, e.err
}

// encodeObject writes obj as json.Marshal does.
func encodeObject(obj resource.Object) ([]byte, error) {
	if b, ok := objcodec.Encode(obj); ok {
		return b, nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, resource.NewInternalError(fmt.Errorf("store: encode %T: %w", obj, err))
	}
	return b, nil
}

// withResourceVersion returns data, the stored encoding of an object of kind k (which
// has no resourceVersion), with metadata.resourceVersion rev written in where
// json.Marshal writes it; false when data is not as the store writes it (then the
// caller encodes the decoded object).
func withResourceVersion(k *resource.KindInfo, data []byte, rev int64) ([]byte, bool) {
	h, ok := scanMetaHead(k, data)
	if !ok {
		return nil, false
	}
	return h.withResourceVersion(data, rev), true
}

// metaHead is what scanMetaHead finds at the start of a stored object's metadata.
type metaHead struct {
	at              int    // where resourceVersion goes: the first member after uid
	name, namespace []byte // their values as written, without quotes (nil: absent)
}

// scanMetaHead reads the start of data, the stored encoding of an object of kind k:
// kind and apiVersion first (anything else was written by someone else, and decoding
// may change it), then metadata's name, generateName, namespace and uid, up to the
// member resourceVersion goes before. It reads no further, so its cost does not grow
// with the object. False when data does not start as the store writes it, or already
// has a resourceVersion.
func scanMetaHead(k *resource.KindInfo, data []byte) (metaHead, bool) {
	var h metaHead
	rest, ok := bytes.CutPrefix(data, []byte(`{"kind":"`))
	if !ok {
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(k.Kind)); !ok {
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","apiVersion":"`)); !ok {
		return h, false
	}
	if k.Group != "" {
		if rest, ok = bytes.CutPrefix(rest, []byte(k.Group)); !ok || len(rest) == 0 || rest[0] != '/' {
			return h, false
		}
		rest = rest[1:]
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(k.Version)); !ok {
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","metadata":{`)); !ok {
		return h, false
	}
	i := len(data) - len(rest)
	for {
		if i >= len(data) || data[i] != '"' {
			return h, false // metadata ends (or is not as json.Marshal writes it) before the members that follow uid
		}
		ke, _, err := jsonscan.ScanString(data, i)
		if err != nil || ke >= len(data) || data[ke] != ':' {
			return h, false
		}
		switch key := string(data[i+1 : ke-1]); key {
		case "name", "generateName", "namespace", "uid":
			vs := ke + 1
			if vs >= len(data) || data[vs] != '"' {
				return h, false
			}
			ve, _, err := jsonscan.ScanString(data, vs)
			if err != nil || ve >= len(data) || data[ve] != ',' {
				return h, false
			}
			switch key {
			case "name":
				h.name = data[vs+1 : ve-1]
			case "namespace":
				h.namespace = data[vs+1 : ve-1]
			}
			i = ve + 1
		case "resourceVersion":
			return h, false
		default:
			h.at = i
			return h, true
		}
	}
}

// withResourceVersion returns data with metadata.resourceVersion rev written in at h.
func (h metaHead) withResourceVersion(data []byte, rev int64) []byte {
	out := make([]byte, 0, len(data)+len(`"resourceVersion":"",`)+20)
	out = append(out, data[:h.at]...)
	out = append(out, `"resourceVersion":"`...)
	out = strconv.AppendInt(out, rev, 10)
	out = append(out, `",`...)
	return append(out, data[h.at:]...)
}
