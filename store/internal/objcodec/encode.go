package objcodec

import (
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/management-service/mgmt/resource"
)

// encFunc appends the JSON encoding of v to dst, byte for byte as json.Marshal
// writes it; false when it cannot.
type encFunc func(dst []byte, v reflect.Value) ([]byte, bool)

// objEncoder is the compiled encoder of a pointer-to-struct type, with the size of
// its last encoding to size the next one's buffer.
type objEncoder struct {
	enc  encFunc
	last atomic.Int64
}

// encoders caches an *objEncoder per pointer-to-struct type; a nil *objEncoder
// marks a type the encoder does not cover.
var encoders sync.Map // reflect.Type → *objEncoder

// Encode returns json.Marshal's encoding of obj, a pointer to a struct, or false
// when the compiled encoder does not cover obj's type or value.
//
// On false, json.Marshal must do it.
func Encode(obj resource.Object) ([]byte, bool) {
	if r, ok := obj.(*resource.RawObject); ok {
		return encodeRaw(r)
	}
	return appendEncode(nil, obj)
}

// AppendEncode is [Encode] appending to dst (which may be nil): dst is grown as
// needed, and the result shares its array when it had room. False as for Encode.
func AppendEncode(dst []byte, obj resource.Object) ([]byte, bool) {
	if r, ok := obj.(*resource.RawObject); ok {
		b, ok := encodeRaw(r)
		if !ok {
			return nil, false
		}
		return append(dst, b...), true
	}
	return appendEncode(dst, obj)
}

// appendEncode is AppendEncode for a typed object.
func appendEncode(dst []byte, obj resource.Object) ([]byte, bool) {
	v := reflect.ValueOf(obj)
	e := encoderFor(v.Type())
	if e == nil || v.IsNil() {
		return nil, false
	}
	n := e.last.Load()
	if want := int(n + n/16 + 64); cap(dst)-len(dst) < want {
		dst = append(make([]byte, 0, len(dst)+want), dst...)
	}
	start := len(dst)
	buf, ok := e.enc(dst, v.Elem())
	if !ok {
		return nil, false
	}
	e.last.Store(int64(len(buf) - start))
	return buf, true
}

// encoderFor returns the encoder of t, or nil when it does not cover t.
func encoderFor(t reflect.Type) *objEncoder {
	if e, ok := encoders.Load(t); ok {
		return e.(*objEncoder)
	}
	var e *objEncoder
	// The normalizer's coverage is the encoder's too: a type it does not know may
	// have a JSON form the encoder does not know either.
	if spliceLayoutKnown && normalizerFor(t) != nil {
		b := encBuilder{busy: map[reflect.Type]bool{}}
		if f, ok := b.build(t.Elem()); ok {
			e = &objEncoder{enc: f}
		}
	}
	encoders.Store(t, e)
	return e
}

type encBuilder struct {
	busy map[reflect.Type]bool // structs being built: a recursive type is not covered
}

// build compiles the encoder of values of t; false when it does not cover t.
func (b *encBuilder) build(t reflect.Type) (encFunc, bool) {
	switch t {
	case timeType:
		return encTime, true
	case rawMessageType:
		return encRawMessage, true
	}
	if t.Kind() == reflect.Pointer {
		return b.buildPointer(t)
	}
	if hasCustomJSON(t) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Bool:
		return encBool, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encInt, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return encUint, true
	case reflect.String:
		return encString, true
	case reflect.Slice:
		return b.buildSlice(t)
	case reflect.Map:
		return b.buildMap(t)
	case reflect.Struct:
		return b.buildStruct(t)
	}
	return nil, false
}

func (b *encBuilder) buildPointer(t reflect.Type) (encFunc, bool) {
	e := t.Elem()
	if k := e.Kind(); k != reflect.Struct && k != reflect.String && !plainKind(k) {
		return nil, false
	}
	// A pointer has the methods of what it points to (json.Marshal calls them on
	// the pointer, with null for nil), which build checks.
	f, ok := b.build(e)
	if !ok {
		return nil, false
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		if v.IsNil() {
			return append(dst, "null"...), true
		}
		return f(dst, v.Elem())
	}, true
}

func (b *encBuilder) buildSlice(t reflect.Type) (encFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 {
		return nil, false // base64, not covered
	}
	if t.Elem().Kind() == reflect.String && !hasCustomJSON(t.Elem()) {
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			dst = append(dst, '[')
			for i, n := 0, v.Len(); i < n; i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				var ok bool
				if dst, ok = appendJSONString(dst, v.Index(i).String()); !ok {
					return nil, false
				}
			}
			return append(dst, ']'), true
		}, true
	}
	f, ok := b.build(t.Elem())
	if !ok {
		return nil, false
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		if v.IsNil() {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, n := 0, v.Len(); i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = f(dst, v.Index(i)); !ok {
				return nil, false
			}
		}
		return append(dst, ']'), true
	}, true
}

func (b *encBuilder) buildMap(t reflect.Type) (encFunc, bool) {
	key, elem := t.Key(), t.Elem()
	if key.Kind() != reflect.String || hasCustomJSON(key) || hasCustomJSON(elem) {
		return nil, false
	}
	if t == stringMapType {
		return encStringMap, true
	}
	if elem.Kind() != reflect.String && !plainKind(elem.Kind()) {
		return nil, false
	}
	f, ok := b.build(elem)
	if !ok {
		return nil, false
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		if v.IsNil() {
			return append(dst, "null"...), true
		}
		keys := make([]string, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			keys = append(keys, it.Key().String())
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSONString(dst, k); !ok {
				return nil, false
			}
			dst = append(dst, ':')
			if dst, ok = f(dst, v.MapIndex(reflect.ValueOf(k).Convert(key))); !ok {
				return nil, false
			}
		}
		return append(dst, '}'), true
	}, true
}

// encField is one field of a struct encoder: where it is, the `"name":` it writes,
// and when it is left out.
type encField struct {
	index     []int
	name      string // `"name":`
	omitEmpty bool
	omitZero  bool
	f         encFunc
}

func (b *encBuilder) buildStruct(t reflect.Type) (encFunc, bool) {
	if b.busy[t] {
		return nil, false
	}
	b.busy[t] = true
	defer delete(b.busy, t)
	fields, ok := b.structFields(t, nil, map[string]bool{})
	if !ok {
		return nil, false
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		dst = append(dst, '{')
		first := true
		for i := range fields {
			fd := &fields[i]
			fv := v.Field(fd.index[0])
			for _, j := range fd.index[1:] {
				fv = fv.Field(j)
			}
			if fd.omitEmpty && emptyValue(fv) || fd.omitZero && fv.IsZero() {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, fd.name...)
			var ok bool
			if dst, ok = fd.f(dst, fv); !ok {
				return nil, false
			}
		}
		return append(dst, '}'), true
	}, true
}

// structFields compiles the fields of t (at index path prefix), in the order
// encoding/json writes them, those of embedded structs in their place. It refuses
// what the normalizer refuses, and in addition names that encoding/json escapes,
// and omitzero on a type with an IsZero method.
func (b *encBuilder) structFields(t reflect.Type, prefix []int, names map[string]bool) ([]encField, bool) {
	var out []encField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, omitEmpty, omitZero, ok := jsonField(sf)
		if !ok {
			return nil, false
		}
		index := append(slices.Clip(prefix), i)
		if sf.Anonymous && name == "" {
			if sf.Type.Kind() != reflect.Struct || hasCustomJSON(sf.Type) || b.busy[sf.Type] {
				return nil, false
			}
			b.busy[sf.Type] = true
			inner, ok := b.structFields(sf.Type, index, names)
			delete(b.busy, sf.Type)
			if !ok {
				return nil, false
			}
			out = append(out, inner...)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if names[name] || !plainName(name) {
			return nil, false
		}
		names[name] = true
		if omitZero {
			if sf.Type.Kind() == reflect.Interface {
				return nil, false
			}
			if _, has := sf.Type.MethodByName("IsZero"); has {
				return nil, false
			}
			if _, has := reflect.PointerTo(sf.Type).MethodByName("IsZero"); has {
				return nil, false
			}
		}
		f, ok := b.build(sf.Type)
		if !ok {
			return nil, false
		}
		out = append(out, encField{index: index, name: `"` + name + `":`, omitEmpty: omitEmpty, omitZero: omitZero, f: f})
	}
	return out, true
}

// plainName reports names encoding/json writes as they are: printable ASCII without
// the characters it escapes.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// emptyValue is encoding/json's idea of empty, for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

func encBool(dst []byte, v reflect.Value) ([]byte, bool) {
	return strconv.AppendBool(dst, v.Bool()), true
}

func encInt(dst []byte, v reflect.Value) ([]byte, bool) {
	return strconv.AppendInt(dst, v.Int(), 10), true
}

func encUint(dst []byte, v reflect.Value) ([]byte, bool) {
	return strconv.AppendUint(dst, v.Uint(), 10), true
}

func encString(dst []byte, v reflect.Value) ([]byte, bool) {
	return appendJSONString(dst, v.String())
}

// encStringMap writes a map[string]string with its keys sorted, as encoding/json
// does.
func encStringMap(dst []byte, v reflect.Value) ([]byte, bool) {
	m := v.Interface().(map[string]string)
	if m == nil {
		return append(dst, "null"...), true
	}
	var keys []string
	if len(m) >= bigMapKeys {
		keys = bigMapSortedKeys(m)
	} else {
		var buf [16]string
		keys = buf[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendJSONString(dst, k); !ok {
			return nil, false
		}
		dst = append(dst, ':')
		if dst, ok = appendJSONString(dst, m[k]); !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// bigMapKeys is the size from which encStringMap remembers a map's sorted keys: a
// write of an object with a very large map (tens of thousands of labels) encodes it
// two or three times, and sorting its keys was most of each encoding.
const bigMapKeys = 1024

// sortedKeysSlots is how many large maps' sorted keys are remembered.
const sortedKeysSlots = 4

// sortedKeys remembers the sorted keys of the last large maps encoded, by the map's
// address. The address only says where to look: a remembered list is used only
// when the map has exactly its keys (the same count, and each of them present), so
// a map changed since, or another map at the same address, is sorted anew.
var sortedKeys struct {
	mu    sync.Mutex
	next  int
	slots [sortedKeysSlots]struct {
		addr uintptr
		keys []string // never changed once remembered
	}
}

// bigMapSortedKeys returns m's keys in order, from sortedKeys when it remembers
// them for m, otherwise sorted now and remembered.
func bigMapSortedKeys(m map[string]string) []string {
	addr := uintptr(reflect.ValueOf(m).UnsafePointer())
	var known []string
	sortedKeys.mu.Lock()
	for i := range sortedKeys.slots {
		if sl := &sortedKeys.slots[i]; sl.addr == addr && sl.keys != nil {
			known = sl.keys
			break
		}
	}
	sortedKeys.mu.Unlock()
	if sameKeys(m, known) {
		return known
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sortedKeys.mu.Lock()
	sl := &sortedKeys.slots[sortedKeys.next]
	sl.addr, sl.keys = addr, keys
	sortedKeys.next = (sortedKeys.next + 1) % sortedKeysSlots
	sortedKeys.mu.Unlock()
	return keys
}

// sameKeys reports whether keys, a list without repeats, holds exactly m's keys.
func sameKeys(m map[string]string, keys []string) bool {
	if keys == nil || len(keys) != len(m) {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// encTime writes a resource.Time as its MarshalJSON does: null when zero, else the
// RFC 3339 UTC string at whole seconds; false outside the years it can write.
func encTime(dst []byte, v reflect.Value) ([]byte, bool) {
	var t resource.Time
	if v.CanAddr() {
		t = *v.Addr().Interface().(*resource.Time)
	} else {
		t = v.Interface().(resource.Time)
	}
	return appendTime(dst, t)
}

func appendTime(dst []byte, t resource.Time) ([]byte, bool) {
	if t.IsZero() {
		return append(dst, "null"...), true
	}
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return nil, false // an error for json.Marshal
	}
	dst = append(dst, '"')
	dst = u.Truncate(time.Second).AppendFormat(dst, time.RFC3339)
	return append(dst, '"'), true
}

// encRawMessage writes a json.RawMessage that is exactly as json.Marshal writes it
// (compact, valid, escaped); null when nil.
func encRawMessage(dst []byte, v reflect.Value) ([]byte, bool) {
	b := v.Bytes()
	if b == nil {
		return append(dst, "null"...), true
	}
	if !marshaledJSON(b) {
		return nil, false
	}
	return append(dst, b...), true
}
