package objcodec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/management-service/mgmt/resource"
)

// normFunc normalizes the addressable value v in place (fix) or only checks that it
// needs no change (!fix). false means only a JSON round trip gives the exact result
// (v may then be half done and must be dropped), or, when checking, that v needs a
// change.
type normFunc func(v reflect.Value, fix bool) bool

// normalizers caches a normFunc per pointer-to-struct type; a nil normFunc marks a
// type the normalizer does not cover.
var normalizers sync.Map // reflect.Type → normFunc

var (
	timeType        = reflect.TypeFor[resource.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	customJSONTypes = []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[json.Unmarshaler](),
		reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// Copy returns a copy of obj that is exactly what a JSON round trip of obj gives.
//
// The error of an obj that cannot be encoded is a 400 [resource.StatusError]. With
// shallow, an obj that needs no normalizing is copied shallowly: the copy shares
// obj's maps, lists and pointers. Only for a write that never changes anything
// through them, and hands the copy to no code of the user's (admission hooks, the
// owner authorizer), which could.
func Copy(k *resource.KindInfo, obj resource.Object, shallow bool) (resource.Object, error) {
	if r, ok := obj.(*resource.RawObject); ok {
		if out, ok := copyRaw(r, shallow); ok {
			// A round trip decodes into k.New(), whose TypeMeta names the kind: it
			// stays where the encoding had no apiVersion or kind.
			if out.Kind == "" {
				out.Kind = k.Kind
			}
			if out.APIVersion == "" {
				out.APIVersion = k.APIVersion()
			}
			return out, nil
		}
		return jsonCopy(k, obj)
	}
	t := reflect.TypeOf(obj)
	if norm := normalizerFor(t); norm != nil {
		if shallow && norm(reflect.ValueOf(obj).Elem(), false) {
			out := reflect.New(t.Elem())
			out.Elem().Set(reflect.ValueOf(obj).Elem())
			return out.Interface().(resource.Object), nil
		}
		// The kind's DeepCopyResource, or the reflective copy for a kind without one
		// (exact for every type the normalizer covers).
		out := DeepCopy(obj)
		if reflect.TypeOf(out) == t && norm(reflect.ValueOf(out).Elem(), true) {
			return out, nil
		}
	}
	return jsonCopy(k, obj)
}

// jsonCopy copies obj through its JSON encoding.
func jsonCopy(k *resource.KindInfo, obj resource.Object) (resource.Object, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("the %s cannot be encoded: %v", k.Kind, err)).WithCause(err)
	}
	out := k.New()
	if err := json.Unmarshal(b, out); err != nil {
		return nil, resource.NewInternalError(fmt.Errorf("store: copy %s: %w", k.Kind, err))
	}
	return out, nil
}

// Normalize returns a copy of obj as a JSON round trip leaves it, or obj itself when
// it cannot be encoded.
//
// It is for an object a mutating admission hook may have changed; encoding an obj
// that cannot be encoded reports the error.
func Normalize(k *resource.KindInfo, obj resource.Object) resource.Object {
	if norm := normalizerFor(reflect.TypeOf(obj)); norm != nil {
		// Normalizing works on a copy: a half-done obj must stay usable for the JSON
		// round trip below.
		out := DeepCopy(obj)
		if reflect.TypeOf(out) == reflect.TypeOf(obj) && norm(reflect.ValueOf(out).Elem(), true) {
			return out
		}
	}
	out, err := jsonCopy(k, obj)
	if err != nil {
		return obj
	}
	return out
}

// normalizerFor returns the normalizer of t, a pointer to a struct, or nil when it
// does not cover t.
func normalizerFor(t reflect.Type) normFunc {
	if f, ok := normalizers.Load(t); ok {
		return f.(normFunc)
	}
	var f normFunc
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		b := normBuilder{busy: map[reflect.Type]bool{}}
		if fn, ok := b.build(t.Elem(), false); ok {
			f = fn
			if f == nil {
				f = func(reflect.Value, bool) bool { return true }
			}
		}
	}
	normalizers.Store(t, f)
	return f
}

type normBuilder struct {
	busy map[reflect.Type]bool // structs being built: a recursive type is not covered
}

func hasCustomJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range customJSONTypes {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return false
}

// plainKind reports kinds whose values a round trip keeps as they are.
func plainKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// build returns the normalizer of values of t, held in a field with omitempty or
// not; a nil normFunc with ok true means there is nothing to do. ok false: not
// covered.
func (b *normBuilder) build(t reflect.Type, omitEmpty bool) (f normFunc, ok bool) {
	switch t {
	case timeType:
		return normTime, true
	case rawMessageType:
		return normRawMessage(omitEmpty), true
	}
	if t.Kind() == reflect.Pointer {
		// A pointer has the methods of what it points to, which build checks.
		return b.buildPointer(t)
	}
	if hasCustomJSON(t) {
		return nil, false
	}
	switch k := t.Kind(); {
	case plainKind(k):
		return nil, true
	case k == reflect.String:
		return normString, true
	case k == reflect.Slice:
		return b.buildSlice(t, omitEmpty)
	case k == reflect.Map:
		return b.buildMap(t, omitEmpty)
	case k == reflect.Struct:
		return b.buildStruct(t)
	}
	return nil, false
}

func (b *normBuilder) buildPointer(t reflect.Type) (normFunc, bool) {
	e := t.Elem()
	if e == timeType {
		return normTimePointer, true
	}
	// A pointer to a value that can encode as null (a nil slice, map or pointer)
	// comes back nil: not covered.
	if k := e.Kind(); k != reflect.Struct && k != reflect.String && !plainKind(k) {
		return nil, false
	}
	f, ok := b.build(e, false)
	if !ok || f == nil {
		return nil, ok
	}
	return func(v reflect.Value, fix bool) bool {
		if v.IsNil() {
			return true
		}
		return f(v.Elem(), fix)
	}, true
}

func (b *normBuilder) buildSlice(t reflect.Type, omitEmpty bool) (normFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 {
		return nil, false // base64, not covered
	}
	f, ok := b.build(t.Elem(), false)
	if !ok {
		return nil, false
	}
	return func(v reflect.Value, fix bool) bool {
		n := v.Len()
		if n == 0 {
			return !omitEmpty || v.IsNil() || setZero(v, fix)
		}
		if f != nil {
			for i := 0; i < n; i++ {
				if !f(v.Index(i), fix) {
					return false
				}
			}
		}
		return true
	}, true
}

func (b *normBuilder) buildMap(t reflect.Type, omitEmpty bool) (normFunc, bool) {
	key, elem := t.Key(), t.Elem()
	if key.Kind() != reflect.String || hasCustomJSON(key) || hasCustomJSON(elem) {
		return nil, false
	}
	strElem := elem.Kind() == reflect.String
	if !strElem && !plainKind(elem.Kind()) {
		return nil, false // values would need normalizing, which a map cannot do in place
	}
	if t == stringMapType {
		return func(v reflect.Value, fix bool) bool {
			m := v.Interface().(map[string]string)
			if len(m) == 0 {
				return !omitEmpty || m == nil || setZero(v, fix)
			}
			for k, x := range m {
				if !utf8.ValidString(k) || !utf8.ValidString(x) {
					return false
				}
			}
			return true
		}, true
	}
	return func(v reflect.Value, fix bool) bool {
		if v.Len() == 0 {
			return !omitEmpty || v.IsNil() || setZero(v, fix)
		}
		it := v.MapRange()
		for it.Next() {
			if !utf8.ValidString(it.Key().String()) || strElem && !utf8.ValidString(it.Value().String()) {
				return false
			}
		}
		return true
	}, true
}

type normField struct {
	index int
	f     normFunc
}

func (b *normBuilder) buildStruct(t reflect.Type) (normFunc, bool) {
	if b.busy[t] {
		return nil, false
	}
	b.busy[t] = true
	defer delete(b.busy, t)
	names := map[string]bool{}
	fields, ok := b.structFields(t, names)
	if !ok {
		return nil, false
	}
	if len(fields) == 0 {
		return nil, true
	}
	return func(v reflect.Value, fix bool) bool {
		for _, fd := range fields {
			if !fd.f(v.Field(fd.index), fix) {
				return false
			}
		}
		return true
	}, true
}

// structFields compiles the fields of t that need work, and adds their JSON names to
// names (with those of embedded structs, whose fields encoding/json promotes). A field
// JSON leaves out (unexported, "-"), a name used twice (encoding/json would drop or
// hide one), an embedded pointer or a ",string" option make t not covered.
func (b *normBuilder) structFields(t reflect.Type, names map[string]bool) ([]normField, bool) {
	var out []normField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, omitEmpty, omitZero, ok := jsonField(sf)
		if !ok {
			return nil, false
		}
		if sf.Anonymous && name == "" {
			if sf.Type.Kind() != reflect.Struct || hasCustomJSON(sf.Type) || b.busy[sf.Type] {
				return nil, false
			}
			b.busy[sf.Type] = true
			inner, ok := b.structFields(sf.Type, names)
			delete(b.busy, sf.Type)
			if !ok {
				return nil, false
			}
			if len(inner) > 0 {
				out = append(out, normField{index: i, f: func(v reflect.Value, fix bool) bool {
					for _, fd := range inner {
						if !fd.f(v.Field(fd.index), fix) {
							return false
						}
					}
					return true
				}})
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if names[name] {
			return nil, false
		}
		names[name] = true
		if omitZero && sf.Type != timeType && sf.Type.Kind() == reflect.Struct {
			// omitzero asks IsZero where the type has one: its idea of zero may not be
			// the zero value the decoder leaves.
			if _, has := sf.Type.MethodByName("IsZero"); has {
				return nil, false
			}
			if _, has := reflect.PointerTo(sf.Type).MethodByName("IsZero"); has {
				return nil, false
			}
		}
		f, ok := b.build(sf.Type, omitEmpty)
		if !ok {
			return nil, false
		}
		if f != nil {
			out = append(out, normField{index: i, f: f})
		}
	}
	return out, true
}

// validTagName reports names encoding/json takes as written (it ignores others).
func validTagName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// setZero clears v when fixing; when checking, v needing it means "no".
func setZero(v reflect.Value, fix bool) bool {
	if fix {
		v.SetZero()
	}
	return fix
}

func normString(v reflect.Value, _ bool) bool { return utf8.ValidString(v.String()) }

// normTime does what resource.Time's JSON round trip does: UTC at whole seconds, and
// the plain zero value for any zero time.
func normTime(v reflect.Value, fix bool) bool {
	return normTimeValue(v.Addr().Interface().(*resource.Time), fix)
}

func normTimeValue(t *resource.Time, fix bool) bool {
	if t.IsZero() {
		if *t == (resource.Time{}) {
			return true
		}
		if fix {
			*t = resource.Time{}
		}
		return fix
	}
	u := t.Time.UTC()
	if y := u.Year(); y < 1 || y > 9999 {
		return false // not encodable, or at the edge of what Truncate and Parse agree on
	}
	u = u.Truncate(time.Second)
	if t.Time == u {
		return true
	}
	if fix {
		t.Time = u
	}
	return fix
}

// normTimePointer: a pointer to a zero time encodes as null, which decodes as nil.
func normTimePointer(v reflect.Value, fix bool) bool {
	if v.IsNil() {
		return true
	}
	t := v.Interface().(*resource.Time)
	if t.IsZero() {
		return setZero(v, fix)
	}
	return normTimeValue(t, fix)
}

// normRawMessage: empty under omitempty is left out (nil); otherwise the bytes must
// already be what json.Marshal writes for them (compact, valid, with <, >, &, U+2028
// and U+2029 escaped), which they are when they came from the store.
func normRawMessage(omitEmpty bool) normFunc {
	return func(v reflect.Value, fix bool) bool {
		b := v.Bytes()
		if len(b) == 0 {
			if !omitEmpty {
				return false // encodes as null or fails
			}
			return b == nil || setZero(v, fix)
		}
		return marshaledJSON(b)
	}
}

// marshaledJSON reports whether b is valid JSON exactly as json.Marshal writes a
// json.RawMessage holding it: compact, with <, >, &, U+2028 and U+2029 escaped. It
// accepts a subset of that (nothing nested deeper than 512 levels), which is enough:
// what it refuses takes the JSON round trip.
func marshaledJSON(b []byte) bool {
	c := jsonChecker{b: b}
	return c.value(0) && c.i == len(b)
}

type jsonChecker struct {
	b []byte
	i int
}

func (c *jsonChecker) next(want byte) bool {
	if c.i < len(c.b) && c.b[c.i] == want {
		c.i++
		return true
	}
	return false
}

func (c *jsonChecker) value(depth int) bool {
	if depth > 512 || c.i >= len(c.b) {
		return false
	}
	switch c.b[c.i] {
	case '{':
		c.i++
		if c.next('}') {
			return true
		}
		for {
			if !c.string() || !c.next(':') || !c.value(depth+1) {
				return false
			}
			if !c.next(',') {
				return c.next('}')
			}
		}
	case '[':
		c.i++
		if c.next(']') {
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			if !c.next(',') {
				return c.next(']')
			}
		}
	case '"':
		return c.string()
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	}
	return c.number()
}

func (c *jsonChecker) literal(lit string) bool {
	if len(c.b)-c.i < len(lit) || string(c.b[c.i:c.i+len(lit)]) != lit {
		return false
	}
	c.i += len(lit)
	return true
}

func (c *jsonChecker) digits() bool {
	start := c.i
	for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i > start
}

// number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *jsonChecker) number() bool {
	c.next('-')
	if c.next('0') {
		// no more digits before the fraction
	} else if c.i >= len(c.b) || c.b[c.i] < '1' || c.b[c.i] > '9' || !c.digits() {
		return false
	}
	if c.next('.') && !c.digits() {
		return false
	}
	if c.next('e') || c.next('E') {
		if !c.next('+') {
			c.next('-')
		}
		if !c.digits() {
			return false
		}
	}
	return true
}

func (c *jsonChecker) string() bool {
	if !c.next('"') {
		return false
	}
	b := c.b
	for c.i < len(b) {
		switch ch := b[c.i]; {
		case ch == '"':
			c.i++
			return true
		case ch < 0x20, ch == '<', ch == '>', ch == '&':
			return false
		case ch == 0xE2 && c.i+2 < len(b) && b[c.i+1] == 0x80 && b[c.i+2]&^1 == 0xA8:
			return false // U+2028, U+2029
		case ch == '\\':
			if c.i+1 >= len(b) {
				return false
			}
			switch b[c.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.i += 2
			case 'u':
				if c.i+6 > len(b) {
					return false
				}
				for _, h := range b[c.i+2 : c.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				c.i += 6
			default:
				return false
			}
		default:
			c.i++
		}
	}
	return false
}

// jsonField reads the json tag of sf: its name ("" for the Go name) and its
// omitempty and omitzero options; false for a field the normalizer and the encoder
// do not cover: unexported, left out ("-"), with the ",string" option, or with a
// name that encoding/json would escape or ignore.
func jsonField(sf reflect.StructField) (name string, omitEmpty, omitZero, ok bool) {
	if !sf.IsExported() {
		return "", false, false, false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", false, false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero":
			omitZero = true
		case "string":
			return "", false, false, false
		}
	}
	if name != "" && !validTagName(name) {
		return "", false, false, false
	}
	return name, omitEmpty, omitZero, true
}
