package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/management-service/mgmt/resource"
)

// A create or update encodes the object twice: once to find what it changes (the
// managedFields bookkeeping and the generation), once more with the managedFields and
// generation that follow from it. The second encoding differs from the first only
// there, and managedFields are the part of an object encoding/json is slowest at (it
// validates and compacts every fieldsV1 again). So, for kinds with the plain struct
// encoding, the first encoding leaves managedFields out, and the second is the first
// with the generation and the new managedFields written in, byte for byte what
// json.Marshal writes for the whole object. Anything else (a mutating hook, a kind
// the splice does not know, a value it cannot write exactly) takes json.Marshal.

// writeEncoding is the first encoding of a write.
type writeEncoding struct {
	data   []byte
	gen    int64 // metadata.generation in data
	sliced bool  // data has no managedFields; finish splices them in
}

// encodeFirst encodes work, the object a write is about to store, for the diffs
// that decide its managedFields and generation.
func (s *Store) encodeFirst(k *resource.KindInfo, work resource.Object) (writeEncoding, error) {
	meta := work.GetObjectMeta()
	if len(s.opts.Mutating) > 0 || !spliceable(reflect.TypeOf(work)) {
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
	if len(sent) > 0 && size+managedFieldsBound(sent) > s.maxSize {
		mf, ok := appendManagedFields(nil, sent)
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
		if data, ok := spliceMeta(first.data, first.gen, meta.Generation, meta.ManagedFields); ok {
			if len(data) > s.maxSize {
				return nil, s.tooLarge(k, meta.Name, len(data))
			}
			return data, nil
		}
	}
	return s.encode(k, work)
}

// managedFieldsBound is more than the encoding of mf can take.
func managedFieldsBound(mf []resource.ManagedFieldsEntry) int {
	n := 32
	for _, e := range mf {
		n += 200 + 6*(len(e.Manager)+len(e.Operation)+len(e.APIVersion)+len(e.FieldsType)+len(e.Subresource)+len(e.FieldsV1))
	}
	return n
}

// spliceMeta returns data, json.Marshal's encoding of an object whose metadata has no
// managedFields and generation gen, as json.Marshal writes the object with generation
// newGen and managedFields mf. ok is false when it cannot.
func spliceMeta(data []byte, gen, newGen int64, mf []resource.ManagedFieldsEntry) (out []byte, ok bool) {
	m, ok := memberNamed(data, "metadata")
	if !ok || len(m.value) < 3 || m.value[0] != '{' {
		return nil, false // metadata always has creationTimestamp at least
	}
	metaStart := offset(data, m.value)
	metaEnd := metaStart + len(m.value) // after its '}'
	genStart, genEnd := -1, -1
	if newGen != gen {
		if newGen == 0 {
			return nil, false
		}
		g, ok := memberNamed(m.value, "generation")
		if !ok {
			return nil, false
		}
		genStart = metaStart + offset(m.value, g.value)
		genEnd = genStart + len(g.value)
	}
	size := len(data) + 48
	for _, e := range mf {
		size += 112 + len(e.Manager) + len(e.Operation) + len(e.APIVersion) + len(e.FieldsType) + len(e.Subresource) + len(e.FieldsV1)
	}
	out = make([]byte, 0, size)
	if genStart >= 0 {
		out = append(out, data[:genStart]...)
		out = strconv.AppendInt(out, newGen, 10)
		out = append(out, data[genEnd:metaEnd-1]...)
	} else {
		out = append(out, data[:metaEnd-1]...)
	}
	if len(mf) > 0 {
		out = append(out, `,"managedFields":`...)
		if out, ok = appendManagedFields(out, mf); !ok {
			return nil, false
		}
	}
	return append(out, data[metaEnd-1:]...), true
}

// offset returns where sub, a subslice of b, starts in b.
func offset(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// appendManagedFields appends mf as json.Marshal writes it; false when it cannot
// write some value exactly so.
func appendManagedFields(dst []byte, mf []resource.ManagedFieldsEntry) ([]byte, bool) {
	dst = append(dst, '[')
	for i, e := range mf {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		first := true
		field := func(name string) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, '"')
			dst = append(dst, name...)
			dst = append(dst, '"', ':')
		}
		str := func(name, v string) bool {
			if v == "" {
				return true
			}
			field(name)
			var ok bool
			dst, ok = appendJSONString(dst, v)
			return ok
		}
		if !str("manager", e.Manager) || !str("operation", e.Operation) || !str("apiVersion", e.APIVersion) {
			return nil, false
		}
		if e.Time != nil {
			field("time")
			var ok bool
			if dst, ok = appendTime(dst, *e.Time); !ok {
				return nil, false
			}
		}
		if !str("fieldsType", e.FieldsType) {
			return nil, false
		}
		if len(e.FieldsV1) > 0 {
			if !marshaledJSON(e.FieldsV1) {
				return nil, false
			}
			field("fieldsV1")
			dst = append(dst, e.FieldsV1...)
		}
		if !str("subresource", e.Subresource) {
			return nil, false
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// appendJSONString appends s as json.Marshal writes a string: printable ASCII as it
// is, with '"', '\\', '\n', '\r', '\t', '<', '>' and '&' escaped, and valid UTF-8
// other than U+2028 and U+2029 as it is. Anything else (other control characters,
// invalid UTF-8, U+2028, U+2029) goes through json.Marshal.
func appendJSONString(dst []byte, s string) ([]byte, bool) {
	orig := dst
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '<':
			esc = `\u003c`
		case '>':
			esc = `\u003e`
		case '&':
			esc = `\u0026`
		default:
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[i:])
				if !(r == utf8.RuneError && size == 1) && r != '\u2028' && r != '\u2029' {
					i += size
					continue
				}
			}
			b, err := json.Marshal(s)
			if err != nil {
				return nil, false
			}
			return append(orig, b...), true
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}

// plain8 reports whether the 8 bytes of s are all jsonPlain, a word at a time: none
// is below 0x20 or from 0x80 on, and none is '"', '\\', '<', '>' or '&'.
func plain8(s string) bool {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// zero marks a word with a zero byte (exactly: a false mark only ever follows a
	// true one).
	zero := func(x uint64) uint64 { return (x - lsb) &^ x & msb }
	bad := w&msb | (w-lsb*0x20)&^w&msb |
		zero(w^(lsb*'"')) | zero(w^(lsb*'\\')) | zero(w^(lsb*'<')) | zero(w^(lsb*'>')) | zero(w^(lsb*'&'))
	return bad == 0
}

// jsonPlain marks the bytes json.Marshal writes in a string as they are: ASCII from
// space on, except '"', '\\', '<', '>' and '&'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// spliceable reports whether objects of type t (a pointer to a struct) encode as plain
// structs whose "metadata" is a resource.ObjectMeta with managedFields last, so that
// spliceMeta applies.
func spliceable(t reflect.Type) bool {
	if v, ok := spliceableTypes.Load(t); ok {
		return v.(bool)
	}
	ok := spliceLayoutKnown && normalizerFor(t) != nil && hasMetadataField(t.Elem())
	spliceableTypes.Store(t, ok)
	return ok
}

var spliceableTypes sync.Map // reflect.Type → bool

func hasMetadataField(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("json") == "metadata" && f.Type == reflect.TypeFor[resource.ObjectMeta]() {
			return true
		}
	}
	return false
}

// spliceLayoutKnown checks that ObjectMeta and ManagedFieldsEntry are laid out as
// spliceMeta and appendManagedFields write them; a change to either turns the splice
// off rather than writing something else than json.Marshal.
var spliceLayoutKnown = func() bool {
	tags := func(t reflect.Type) []string {
		var out []string
		for i := 0; i < t.NumField(); i++ {
			out = append(out, t.Field(i).Name+" "+t.Field(i).Type.String()+" "+t.Field(i).Tag.Get("json"))
		}
		return out
	}
	meta := tags(reflect.TypeFor[resource.ObjectMeta]())
	entry := tags(reflect.TypeFor[resource.ManagedFieldsEntry]())
	wantEntry := []string{
		"Manager string manager,omitempty",
		"Operation string operation,omitempty",
		"APIVersion string apiVersion,omitempty",
		"Time *resource.Time time,omitempty",
		"FieldsType string fieldsType,omitempty",
		"FieldsV1 json.RawMessage fieldsV1,omitempty",
		"Subresource string subresource,omitempty",
	}
	hasGen := false
	for _, m := range meta {
		hasGen = hasGen || m == "Generation int64 generation,omitempty"
	}
	return hasGen && len(meta) > 0 && meta[len(meta)-1] == "ManagedFields []resource.ManagedFieldsEntry managedFields,omitempty" &&
		fmt.Sprint(entry) == fmt.Sprint(wantEntry)
}()

// encodeUnchecked is encode without the size limit.
func (s *Store) encodeUnchecked(k *resource.KindInfo, obj resource.Object) ([]byte, error) {
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, apiVersionOf(k, tm.APIVersion)
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	meta.ResourceVersion = ""
	b, ok := appendObject(obj)
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
