package crclient

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/management-service/mgmt/resource"
)

// A typed object crosses between the user's Go type and the store's through JSON:
// encoding/json writes one and reads the other. For a user type that mirrors one of
// the store's built-in kinds (a CRD type made for it), that is two full encodings
// and two full decodings per write, most of a write's conversion time. A mapper
// does the same in one pass over the values: it is compiled once per pair of types,
// only where it can prove from the types that the result is exactly what decoding
// the encoding would give, and it answers false at run time for any value whose
// round trip it does not reproduce (the caller then takes the JSON path, which also
// reports the errors). The metadata and the type metadata of the objects are left
// out: the caller converts them on its own.
//
// Covered, field by field with the same JSON name: strings, bools, integers of
// either signedness (into the same signedness, with the range checked), structs,
// pointers, slices, string-keyed maps, and metav1.Time and resource.Time in any
// combination. Not covered (no mapper): anything with JSON or text methods of its
// own, floats, interfaces, arrays, []byte, embedded structs, the ",string" option,
// names that json.Unmarshal would match only case-insensitively, duplicate names.

// mapFunc fills dst, a settable zero value, from src; false when src holds a value
// whose JSON round trip the mapper does not reproduce (dst is then partly written).
type mapFunc func(dst, src reflect.Value) bool

// objMapper converts the non-metadata fields of one object type into another's.
type objMapper struct {
	run mapFunc
}

var mappers sync.Map // [2]reflect.Type → *objMapper (nil: no mapper)

// mappersOff turns the mappers off (in tests, to compare with the JSON path).
var mappersOff atomic.Bool

// mapperFor returns the mapper from src to dst, both struct types of objects (not
// pointers), or nil when their JSON forms are not known to correspond.
func mapperFor(src, dst reflect.Type) *objMapper {
	key := [2]reflect.Type{src, dst}
	if m, ok := mappers.Load(key); ok {
		return m.(*objMapper)
	}
	var m *objMapper
	b := &mapBuilder{building: map[[2]reflect.Type]bool{}}
	if f, ok := b.topStruct(src, dst); ok {
		m = &objMapper{run: f}
	}
	actual, _ := mappers.LoadOrStore(key, m)
	return actual.(*objMapper)
}

// mapObject fills dst (a pointer to a struct, zeroed but for its metadata) with the
// non-metadata fields of src (a pointer to a struct); false when there is no mapper
// or it declined the values.
func mapObject(dst, src any) bool {
	if mappersOff.Load() {
		return false
	}
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || s.Kind() != reflect.Pointer || d.IsNil() || s.IsNil() {
		return false
	}
	m := mapperFor(s.Type().Elem(), d.Type().Elem())
	return m != nil && m.run(d.Elem(), s.Elem())
}

type mapBuilder struct {
	building map[[2]reflect.Type]bool
}

var (
	metaTimeType   = reflect.TypeFor[metav1.Time]()
	storeTimeType  = reflect.TypeFor[resource.Time]()
	k8sTypeMeta    = reflect.TypeFor[metav1.TypeMeta]()
	storeTypeMeta  = reflect.TypeFor[resource.TypeMeta]()
	storeMetaType  = reflect.TypeFor[resource.ObjectMeta]()
	marshalerType  = reflect.TypeFor[json.Marshaler]()
	unmarshalType  = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalr = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasJSONMethods reports whether t or *t encodes or decodes through methods of its own.
func hasJSONMethods(t reflect.Type) bool {
	for _, x := range []reflect.Type{t, reflect.PointerTo(t)} {
		if x.Implements(marshalerType) || x.Implements(unmarshalType) ||
			x.Implements(textMarshaler) || x.Implements(textUnmarshalr) {
			return true
		}
	}
	return false
}

// jsonField is a field as encoding/json sees it.
type jsonField struct {
	name      string
	index     int
	typ       reflect.Type
	omitEmpty bool
}

// fieldsOf lists the JSON fields of the struct t; top skips its metadata and type
// metadata. false when t has a field the mapper does not take.
func fieldsOf(t reflect.Type, top bool) ([]jsonField, bool) {
	var out []jsonField
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if top && ((f.Anonymous && name == "" && (f.Type == k8sTypeMeta || f.Type == storeTypeMeta)) ||
			(name == "metadata" && (f.Type == metaType || f.Type == storeMetaType))) {
			continue
		}
		if f.Anonymous || !f.IsExported() {
			if f.Anonymous {
				return nil, false
			}
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		if !plainJSONName(name) || seen[strings.ToLower(name)] {
			return nil, false
		}
		if top && (name == "metadata" || name == "apiVersion" || name == "kind") {
			return nil, false
		}
		seen[strings.ToLower(name)] = true
		jf := jsonField{name: name, index: i, typ: f.Type}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				jf.omitEmpty = true
			case "omitzero":
				// A zero value maps to a zero value, so leaving it out changes
				// nothing, unless the type says what zero is.
				_, v := f.Type.MethodByName("IsZero")
				_, p := reflect.PointerTo(f.Type).MethodByName("IsZero")
				if (v || p) && timeKind(f.Type) == 0 {
					return nil, false
				}
			case "", "inline":
			default:
				return nil, false // ",string" and anything unknown
			}
		}
		out = append(out, jf)
	}
	return out, true
}

// plainJSONName reports whether name is one encoding/json takes as it is.
func plainJSONName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return name != ""
}

func (b *mapBuilder) topStruct(src, dst reflect.Type) (mapFunc, bool) {
	if src.Kind() != reflect.Struct || dst.Kind() != reflect.Struct ||
		hasJSONMethods(src) || hasJSONMethods(dst) {
		return nil, false
	}
	return b.fields(src, dst, true)
}

// fields maps the fields of struct src onto those of struct dst by JSON name.
func (b *mapBuilder) fields(src, dst reflect.Type, top bool) (mapFunc, bool) {
	sf, ok := fieldsOf(src, top)
	if !ok {
		return nil, false
	}
	df, ok := fieldsOf(dst, top)
	if !ok {
		return nil, false
	}
	type pair struct {
		s, d      int
		omitEmpty bool
		f         mapFunc
	}
	var pairs []pair
	for _, s := range sf {
		var match *jsonField
		for i := range df {
			if df[i].name == s.name {
				match = &df[i]
				break
			}
		}
		if match == nil {
			for i := range df {
				if strings.EqualFold(df[i].name, s.name) {
					return nil, false // json.Unmarshal would match it
				}
			}
			if !encodesSafely(s.typ, map[reflect.Type]bool{}) {
				return nil, false // json.Marshal might refuse it: let it say so
			}
			continue // dropped, as json.Unmarshal drops unknown members
		}
		f, ok := b.value(s.typ, match.typ)
		if !ok {
			return nil, false
		}
		pairs = append(pairs, pair{s: s.index, d: match.index, omitEmpty: s.omitEmpty, f: f})
	}
	return func(d, s reflect.Value) bool {
		for _, p := range pairs {
			sv := s.Field(p.s)
			if p.omitEmpty {
				switch sv.Kind() {
				case reflect.Slice, reflect.Map:
					if sv.Len() == 0 {
						continue
					}
				}
			}
			if !p.f(d.Field(p.d), sv) {
				return false
			}
		}
		return true
	}, true
}

// timeKind is 1 for metav1.Time, 2 for resource.Time, 0 for anything else.
func timeKind(t reflect.Type) int {
	switch t {
	case metaTimeType:
		return 1
	case storeTimeType:
		return 2
	}
	return 0
}

// value returns the mapper of a value of type src into one of type dst.
func (b *mapBuilder) value(src, dst reflect.Type) (mapFunc, bool) {
	key := [2]reflect.Type{src, dst}
	if b.building[key] {
		// A recursive type: its values may hold cycles, which json.Marshal
		// reports and a mapper would follow for ever.
		return nil, false
	}
	b.building[key] = true
	defer delete(b.building, key)
	return b.build(src, dst)
}

func (b *mapBuilder) build(src, dst reflect.Type) (mapFunc, bool) {
	st, dt := src, dst
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if dt.Kind() == reflect.Pointer {
		dt = dt.Elem()
	}
	if timeKind(st) != 0 && timeKind(dt) != 0 {
		return timeMapper(src, dst), true
	}
	if timeKind(src) != 0 || timeKind(dst) != 0 {
		return nil, false
	}
	if hasJSONMethods(src) || hasJSONMethods(dst) {
		return nil, false
	}
	switch {
	case src.Kind() == reflect.Pointer && dst.Kind() == reflect.Pointer:
		elem, ok := b.value(src.Elem(), dst.Elem())
		if !ok {
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			if s.IsNil() {
				return true
			}
			p := reflect.New(dst.Elem())
			if !elem(p.Elem(), s.Elem()) {
				return false
			}
			d.Set(p)
			return true
		}, true
	case src.Kind() == reflect.Pointer:
		// null leaves a non-pointer as it is (zero).
		elem, ok := b.value(src.Elem(), dst)
		if !ok {
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			return s.IsNil() || elem(d, s.Elem())
		}, true
	case dst.Kind() == reflect.Pointer:
		return nil, false // whether it is allocated depends on the value's encoding
	}
	switch src.Kind() {
	case reflect.String:
		if dst.Kind() != reflect.String {
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			v := s.String()
			if !utf8.ValidString(v) {
				return false
			}
			d.SetString(v)
			return true
		}, true
	case reflect.Bool:
		if dst.Kind() != reflect.Bool {
			return nil, false
		}
		return func(d, s reflect.Value) bool { d.SetBool(s.Bool()); return true }, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch dst.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		default:
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			v := s.Int()
			if d.OverflowInt(v) {
				return false
			}
			d.SetInt(v)
			return true
		}, true
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch dst.Kind() {
		case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			v := s.Uint()
			if d.OverflowUint(v) {
				return false
			}
			d.SetUint(v)
			return true
		}, true
	case reflect.Struct:
		if dst.Kind() != reflect.Struct {
			return nil, false
		}
		return b.fields(src, dst, false)
	case reflect.Slice:
		if dst.Kind() != reflect.Slice || src.Elem().Kind() == reflect.Uint8 || dst.Elem().Kind() == reflect.Uint8 {
			return nil, false
		}
		elem, ok := b.value(src.Elem(), dst.Elem())
		if !ok {
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			if s.IsNil() {
				return true
			}
			n := s.Len()
			out := reflect.MakeSlice(dst, n, n)
			for i := range n {
				if !elem(out.Index(i), s.Index(i)) {
					return false
				}
			}
			d.Set(out)
			return true
		}, true
	case reflect.Map:
		if dst.Kind() != reflect.Map || src.Key().Kind() != reflect.String || dst.Key().Kind() != reflect.String ||
			hasJSONMethods(src.Key()) || hasJSONMethods(dst.Key()) {
			return nil, false
		}
		elem, ok := b.value(src.Elem(), dst.Elem())
		if !ok {
			return nil, false
		}
		return func(d, s reflect.Value) bool {
			if s.IsNil() {
				return true
			}
			out := reflect.MakeMapWithSize(dst, s.Len())
			it := s.MapRange()
			for it.Next() {
				k := it.Key().String()
				if !utf8.ValidString(k) {
					return false
				}
				v := reflect.New(dst.Elem()).Elem()
				if !elem(v, it.Value()) {
					return false
				}
				dk := reflect.New(dst.Key()).Elem()
				dk.SetString(k)
				out.SetMapIndex(dk, v)
			}
			d.Set(out)
			return true
		}, true
	}
	return nil, false
}

// timeMapper maps metav1.Time or resource.Time (or a pointer to one) into either
// (or a pointer to one), as their MarshalJSON and UnmarshalJSON would: through the
// RFC 3339 text, so the result is theirs exactly.
func timeMapper(src, dst reflect.Type) mapFunc {
	sPtr, dPtr := src.Kind() == reflect.Pointer, dst.Kind() == reflect.Pointer
	st, dt := src, dst
	if sPtr {
		st = st.Elem()
	}
	if dPtr {
		dt = dt.Elem()
	}
	sk, dk := timeKind(st), timeKind(dt)
	return func(d, s reflect.Value) bool {
		if sPtr {
			if s.IsNil() {
				return true // null: a pointer stays nil, a value zero
			}
			s = s.Elem()
		}
		t := s.Field(0).Interface().(time.Time)
		if t.IsZero() {
			return true // MarshalJSON writes null
		}
		var buf [40]byte
		var text []byte
		u := t.UTC()
		if sk == 2 {
			if y := u.Year(); y < 0 || y > 9999 {
				return false // MarshalJSON fails
			}
			u = u.Truncate(time.Second)
		}
		text = u.AppendFormat(buf[:0], time.RFC3339)
		pt, err := time.Parse(time.RFC3339, string(text))
		if err != nil {
			return false
		}
		if dk == 1 {
			pt = pt.Local()
		} else {
			pt = pt.UTC()
			if y := pt.Year(); y < 0 || y > 9999 {
				return false
			}
			pt = pt.Truncate(time.Second)
		}
		target := d
		if dPtr {
			target = reflect.New(dt).Elem()
		}
		target.Field(0).Set(reflect.ValueOf(pt))
		if dPtr {
			d.Set(target.Addr())
		}
		return true
	}
}

// encodesSafely reports whether json.Marshal encodes every value of t without an
// error (a field the mapper drops must not hide an error the JSON path reports).
func encodesSafely(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	if t == metaTimeType {
		return true // its MarshalJSON cannot fail
	}
	if hasJSONMethods(t) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return encodesSafely(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && !hasJSONMethods(t.Key()) && encodesSafely(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && f.Tag.Get("json") != "-" && !encodesSafely(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}
