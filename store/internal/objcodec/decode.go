package objcodec

import (
	"bytes"
	"reflect"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
)

// decFunc decodes the JSON value at d.i (whitespace already skipped) into the zero
// value at p, exactly as json.Unmarshal would, and leaves d.i just after the value;
// false when it cannot say for certain what json.Unmarshal does.
//
// Every decFunc writes into zero memory only: a fresh object, whose fields are
// each decoded at most once (a duplicate key answers false), a pointer's new
// target, a slice's new element or a map's new value. So a JSON null leaves the
// zero value in place wherever json.Unmarshal sets or keeps the zero value.
type decFunc func(d *decoder, p unsafe.Pointer) bool

// objDecoder is the compiled decoder of a pointer-to-struct type.
type objDecoder struct {
	dec decFunc
}

// decoders caches an *objDecoder per pointer-to-struct type; a nil *objDecoder
// marks a type the decoder does not cover.
var decoders sync.Map // reflect.Type → *objDecoder

// maxDecodeDepth bounds the nesting the decoder follows; json.Unmarshal allows
// more, and anything deeper answers false.
const maxDecodeDepth = 512

var rawObjectPtrType = reflect.TypeFor[*resource.RawObject]()

// Decode fills out, a pointer to a zero object, exactly as json.Unmarshal(data, out)
// would, and reports true; or reports false when it cannot be sure to: data that is
// not valid JSON or not an object, a value json.Unmarshal would refuse for its
// field, a type the compiled decoder does not cover, or anything unusual (a key
// that names a field only case-insensitively, escapes in a field's key, a
// duplicate field, a lone surrogate or invalid UTF-8 in a string).
//
// On false, out may be half filled: the caller must decode data with json.Unmarshal
// into a fresh zero object.
//
// out refers to nothing of data. Its short strings share chunks of a few hundred
// bytes, a handful of allocations per object instead of one per string; a string
// kept after the rest of out is dropped keeps its chunk alive.
func Decode(data []byte, out resource.Object) bool {
	v := reflect.ValueOf(out)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	od := decoderFor(v.Type())
	if od == nil {
		return false
	}
	d := decoder{b: data}
	d.ws()
	if d.peek() != '{' {
		return false
	}
	if !od.dec(&d, v.UnsafePointer()) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// Decodable reports whether [Decode] covers objects of t's type.
func Decodable(t reflect.Type) bool { return decoderFor(t) != nil }

// decoderFor returns the decoder of t, or nil when it does not cover t.
func decoderFor(t reflect.Type) *objDecoder {
	if od, ok := decoders.Load(t); ok {
		return od.(*objDecoder)
	}
	var od *objDecoder
	// The encoder's coverage is the decoder's: the types whose JSON form is fully
	// known here. resource.RawObject has its own UnmarshalJSON and keeps its path.
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t != rawObjectPtrType && encoderFor(t) != nil {
		b := decBuilder{busy: map[reflect.Type]bool{}}
		if f, ok := b.build(t.Elem()); ok {
			od = &objDecoder{dec: f}
		}
	}
	decoders.Store(t, od)
	return od
}

type decBuilder struct {
	busy map[reflect.Type]bool // structs being built: a recursive type is not covered
}

// build compiles the decoder of values of t; false when it does not cover t.
func (b *decBuilder) build(t reflect.Type) (decFunc, bool) {
	switch t {
	case timeType:
		return decTime, true
	case rawMessageType:
		return decRawMessage, true
	}
	if t.Kind() == reflect.Pointer {
		return b.buildPointer(t)
	}
	if hasCustomJSON(t) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Bool:
		return decBool, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decIntOfSize(t.Size()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return decUintOfSize(t.Size()), true
	case reflect.String:
		return decString, true
	case reflect.Slice:
		return b.buildSlice(t)
	case reflect.Map:
		return b.buildMap(t)
	case reflect.Struct:
		return b.buildStruct(t)
	}
	return nil, false
}

func (b *decBuilder) buildPointer(t reflect.Type) (decFunc, bool) {
	e := t.Elem()
	if k := e.Kind(); k != reflect.Struct && k != reflect.String && !plainKind(k) {
		return nil, false
	}
	f, ok := b.build(e)
	if !ok {
		return nil, false
	}
	return func(d *decoder, p unsafe.Pointer) bool {
		if d.peek() == 'n' {
			return d.literal("null") // the pointer stays nil
		}
		np := reflect.New(e).UnsafePointer()
		if !f(d, np) {
			return false
		}
		*(*unsafe.Pointer)(p) = np
		return true
	}, true
}

func (b *decBuilder) buildSlice(t reflect.Type) (decFunc, bool) {
	e := t.Elem()
	if e.Kind() == reflect.Uint8 {
		return nil, false // base64, not covered
	}
	if e.Kind() == reflect.String && !hasCustomJSON(e) {
		// []string and slices of named string types share the layout of []string.
		return decStringSlice, true
	}
	f, ok := b.build(e)
	if !ok {
		return nil, false
	}
	size := e.Size()
	return func(d *decoder, p unsafe.Pointer) bool {
		switch d.peek() {
		case 'n':
			return d.literal("null") // the slice stays nil
		case '[':
		default:
			return false
		}
		if !d.enter('[') {
			return false
		}
		sv := reflect.NewAt(t, p).Elem()
		if d.peek() == ']' {
			d.i++
			d.depth--
			sv.Set(reflect.MakeSlice(t, 0, 0)) // json.Unmarshal leaves an empty, non-nil slice
			return true
		}
		for n := 0; ; n++ {
			if n == sv.Cap() {
				sv.Grow(1)
			}
			sv.SetLen(n + 1)
			if !f(d, unsafe.Add(sv.UnsafePointer(), uintptr(n)*size)) {
				return false
			}
			if !d.more() {
				return d.closed(']')
			}
		}
	}, true
}

func (b *decBuilder) buildMap(t reflect.Type) (decFunc, bool) {
	key, elem := t.Key(), t.Elem()
	if key.Kind() != reflect.String || hasCustomJSON(key) || hasCustomJSON(elem) {
		return nil, false
	}
	if t == stringMapType {
		return decStringMap, true
	}
	if elem.Kind() != reflect.String && !plainKind(elem.Kind()) {
		return nil, false
	}
	f, ok := b.build(elem)
	if !ok {
		return nil, false
	}
	return func(d *decoder, p unsafe.Pointer) bool {
		switch d.peek() {
		case 'n':
			return d.literal("null") // the map stays nil
		case '{':
		default:
			return false
		}
		if !d.enter('{') {
			return false
		}
		mv := reflect.NewAt(t, p).Elem()
		mv.Set(reflect.MakeMap(t))
		if d.peek() == '}' {
			d.i++
			d.depth--
			return true
		}
		for {
			if d.peek() != '"' {
				return false
			}
			k, ok := d.str()
			if !ok || !d.colon() {
				return false
			}
			// json.Unmarshal decodes each value into a fresh zero element and sets
			// it: a later duplicate key wins.
			ev := reflect.New(elem)
			if !f(d, ev.UnsafePointer()) {
				return false
			}
			mv.SetMapIndex(reflect.ValueOf(k).Convert(key), ev.Elem())
			if !d.more() {
				return d.closed('}')
			}
		}
	}, true
}

// decField is one field of a struct decoder: its JSON name, that name in ASCII
// lower case, where it is and how to decode it.
type decField struct {
	name  string
	lower string
	off   uintptr
	f     decFunc
}

func (b *decBuilder) buildStruct(t reflect.Type) (decFunc, bool) {
	if b.busy[t] {
		return nil, false
	}
	b.busy[t] = true
	defer delete(b.busy, t)
	fields, ok := b.structFields(t, 0, map[string]bool{})
	if !ok || len(fields) > 64 {
		return nil, false
	}
	return func(d *decoder, p unsafe.Pointer) bool {
		switch d.peek() {
		case 'n':
			return d.literal("null") // the struct stays as it is
		case '{':
		default:
			return false
		}
		if !d.enter('{') {
			return false
		}
		if d.peek() == '}' {
			d.i++
			d.depth--
			return true
		}
		var seen uint64
		next := 0
		for {
			key, ok := d.plainKey()
			if !ok || !d.colon() {
				return false
			}
			// Keys come in field order when json.Marshal wrote them: look from the
			// field after the last one first.
			idx := -1
			for j := next; j < len(fields); j++ {
				if fields[j].name == string(key) {
					idx = j
					break
				}
			}
			if idx < 0 {
				for j := 0; j < next; j++ {
					if fields[j].name == string(key) {
						idx = j
						break
					}
				}
			}
			if idx < 0 {
				// json.Unmarshal ignores an unknown key, but takes one that names a
				// field case-insensitively for that field.
				if !unknownKey(key, fields) || !d.skip() {
					return false
				}
			} else {
				if seen&(1<<idx) != 0 {
					return false // json.Unmarshal would merge into the field
				}
				seen |= 1 << idx
				next = idx + 1
				fd := &fields[idx]
				if !fd.f(d, unsafe.Add(p, fd.off)) {
					return false
				}
			}
			if !d.more() {
				return d.closed('}')
			}
		}
	}, true
}

// structFields compiles the fields of t (at offset base in the outer struct), those
// of embedded structs in their place; it refuses what the encoder refuses.
func (b *decBuilder) structFields(t reflect.Type, base uintptr, names map[string]bool) ([]decField, bool) {
	var out []decField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _, ok := jsonField(sf)
		if !ok {
			return nil, false
		}
		if sf.Anonymous && name == "" {
			if sf.Type.Kind() != reflect.Struct || hasCustomJSON(sf.Type) || b.busy[sf.Type] {
				return nil, false
			}
			b.busy[sf.Type] = true
			inner, ok := b.structFields(sf.Type, base+sf.Offset, names)
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
		f, ok := b.build(sf.Type)
		if !ok {
			return nil, false
		}
		out = append(out, decField{name: name, lower: lowerASCII(name), off: base + sf.Offset, f: f})
	}
	return out, true
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// unknownKey reports whether json.Unmarshal certainly ignores key, which matches no
// field name exactly: it is ASCII (a non-ASCII letter can fold to an ASCII one) and
// matches no field name in another case.
func unknownKey(key []byte, fields []decField) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for i := range fields {
		l := fields[i].lower
		if len(l) != len(key) {
			continue
		}
		same := true
		for j, c := range key {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != l[j] {
				same = false
				break
			}
		}
		if same {
			return false
		}
	}
	return true
}

// decoder is the read position in one JSON text.
type decoder struct {
	b     []byte
	i     int
	depth int
	// arena is the chunk the object's short strings are copied into: one
	// allocation holds many of them, instead of one each (see keep).
	arena []byte
}

const (
	// arenaChunk is the size of a chunk of the string arena.
	arenaChunk = 256
	// arenaMax is the longest string the arena takes; a longer one gets its own
	// allocation, so that a chunk's unused tail stays small.
	arenaMax = 64
)

// keep returns seg as a string the decoded object owns. Short strings share
// chunks of arenaChunk bytes with the object's other short strings: a kept string
// keeps its chunk alive, so an object's strings cost a few allocations, not one
// each. Chunks are never shared between two Decode calls, and the input is never
// referenced: the caller may reuse data once Decode returns.
func (d *decoder) keep(seg []byte) string {
	n := len(seg)
	switch {
	case n == 0:
		return ""
	case n > arenaMax:
		return string(seg)
	case cap(d.arena)-len(d.arena) < n:
		d.arena = make([]byte, 0, arenaChunk)
	}
	at := len(d.arena)
	d.arena = append(d.arena, seg...)
	return unsafe.String(&d.arena[at], n)
}

func (d *decoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// ws skips JSON whitespace.
func (d *decoder) ws() {
	if d.i < len(d.b) && d.b[d.i] > ' ' {
		return // compact JSON, the common case
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// enter steps into an object or array at d.i (open) and past the whitespace after
// it; false when that is nested too deep.
func (d *decoder) enter(open byte) bool {
	if d.peek() != open || d.depth >= maxDecodeDepth {
		return false
	}
	d.i++
	d.depth++
	d.ws()
	return true
}

// more steps past the whitespace after a member or element and a comma, and the
// whitespace after that; false when there is no comma (the caller checks for the
// closing bracket).
func (d *decoder) more() bool {
	d.ws()
	if d.peek() == ',' {
		d.i++
		d.ws()
		return true
	}
	return false
}

// closed steps past the closing bracket of an object or array.
func (d *decoder) closed(closing byte) bool {
	if d.peek() != closing {
		return false
	}
	d.i++
	d.depth--
	return true
}

// colon steps past the whitespace, colon and whitespace after an object's key.
func (d *decoder) colon() bool {
	d.ws()
	if d.peek() != ':' {
		return false
	}
	d.i++
	d.ws()
	return true
}

func (d *decoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// plainKey reads an object's key without escapes or control characters and returns
// its bytes (shared with the input).
func (d *decoder) plainKey() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	b := d.b
	for j := d.i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			key := b[d.i+1 : j]
			d.i = j + 1
			return key, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a JSON string at d.i as json.Unmarshal decodes it; false for invalid
// JSON and for what json.Unmarshal replaces (invalid UTF-8, lone surrogates).
func (d *decoder) str() (string, bool) {
	end, f, err := jsonscan.ScanString(d.b, d.i)
	if err != nil {
		return "", false
	}
	start := d.i + 1
	seg := d.b[start : end-1]
	if f&jsonscan.Escaped != 0 {
		return d.escaped(start, start+bytes.IndexByte(seg, '\\'))
	}
	if f&jsonscan.NonASCII != 0 && !utf8.Valid(seg) {
		return "", false
	}
	d.i = end
	return d.keep(seg), true
}

// escaped reads the rest of a string that starts at start and has its first
// backslash at j.
func (d *decoder) escaped(start, j int) (string, bool) {
	b := d.b
	out := make([]byte, 0, j-start+16)
	out = append(out, b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			d.i = j + 1
			return d.keep(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return "", false
		}
		switch b[j+1] {
		case '"', '\\', '/':
			out = append(out, b[j+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, j+2)
			if !ok {
				return "", false
			}
			j += 6
			if utf16.IsSurrogate(r) {
				// Only a well-formed pair; json.Unmarshal replaces anything else.
				if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' {
					return "", false
				}
				r2, ok := hex4(b, j+2)
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
				j += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skip steps over any valid JSON value, checking it as json.Unmarshal does.
func (d *decoder) skip() bool {
	switch c := d.peek(); {
	case c == '{':
		if !d.enter('{') {
			return false
		}
		if d.peek() == '}' {
			d.i++
			d.depth--
			return true
		}
		for {
			if d.peek() != '"' || !d.skipString() || !d.colon() || !d.skip() {
				return false
			}
			if !d.more() {
				return d.closed('}')
			}
		}
	case c == '[':
		if !d.enter('[') {
			return false
		}
		if d.peek() == ']' {
			d.i++
			d.depth--
			return true
		}
		for {
			if !d.skip() {
				return false
			}
			if !d.more() {
				return d.closed(']')
			}
		}
	case c == '"':
		return d.skipString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.skipNumber()
	}
	return false
}

// skipString steps over a valid JSON string at d.i.
func (d *decoder) skipString() bool {
	end, _, err := jsonscan.ScanString(d.b, d.i)
	if err != nil {
		return false
	}
	d.i = end
	return true
}

func (d *decoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// skipNumber steps over -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) skipNumber() bool {
	if d.peek() == '-' {
		d.i++
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case '1' <= c && c <= '9':
		d.digits()
	default:
		return false
	}
	if d.peek() == '.' {
		d.i++
		if !d.digits() {
			return false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if !d.digits() {
			return false
		}
	}
	return true
}

// integer reads a JSON integer (no fraction, no exponent: json.Unmarshal refuses
// those for an integer type) as its sign and magnitude; false when it is not one or
// its magnitude overflows a uint64.
func (d *decoder) integer() (neg bool, mag uint64, ok bool) {
	if d.peek() == '-' {
		neg = true
		d.i++
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case '1' <= c && c <= '9':
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			x := uint64(d.b[d.i] - '0')
			if mag > (1<<64-1-x)/10 {
				return false, 0, false
			}
			mag = mag*10 + x
			d.i++
		}
	default:
		return false, 0, false
	}
	if c := d.peek(); c == '.' || c == 'e' || c == 'E' {
		return false, 0, false
	}
	return neg, mag, true
}

func decBool(d *decoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 't':
		if !d.literal("true") {
			return false
		}
		*(*bool)(p) = true
		return true
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return false
}

func decIntOfSize(size uintptr) decFunc {
	bits := size * 8
	return func(d *decoder, p unsafe.Pointer) bool {
		if d.peek() == 'n' {
			return d.literal("null")
		}
		neg, mag, ok := d.integer()
		if !ok {
			return false
		}
		limit := uint64(1) << (bits - 1) // |min|; max is limit-1
		var n int64
		switch {
		case neg && mag <= limit:
			n = int64(-mag) // wraps right for mag == 1<<63
		case !neg && mag < limit:
			n = int64(mag)
		default:
			return false // json.Unmarshal: overflow
		}
		switch size {
		case 1:
			*(*int8)(p) = int8(n)
		case 2:
			*(*int16)(p) = int16(n)
		case 4:
			*(*int32)(p) = int32(n)
		case 8:
			*(*int64)(p) = n
		default:
			return false
		}
		return true
	}
}

func decUintOfSize(size uintptr) decFunc {
	bits := size * 8
	return func(d *decoder, p unsafe.Pointer) bool {
		if d.peek() == 'n' {
			return d.literal("null")
		}
		neg, mag, ok := d.integer()
		if !ok || neg { // json.Unmarshal refuses even -0 for an unsigned type
			return false
		}
		if bits < 64 && mag >= uint64(1)<<bits {
			return false
		}
		switch size {
		case 1:
			*(*uint8)(p) = uint8(mag)
		case 2:
			*(*uint16)(p) = uint16(mag)
		case 4:
			*(*uint32)(p) = uint32(mag)
		case 8:
			*(*uint64)(p) = mag
		default:
			return false
		}
		return true
	}
}

func decString(d *decoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
		s, ok := d.str()
		if !ok {
			return false
		}
		*(*string)(p) = s
		return true
	}
	return false
}

// decStringSlice decodes a slice of strings (or of a string type without JSON
// methods, which has the same layout).
func decStringSlice(d *decoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return false
	}
	if !d.enter('[') {
		return false
	}
	out := []string{}
	if d.peek() == ']' {
		d.i++
		d.depth--
		*(*[]string)(p) = out
		return true
	}
	for {
		var s string
		if !decString(d, unsafe.Pointer(&s)) {
			return false
		}
		out = append(out, s)
		if !d.more() {
			if !d.closed(']') {
				return false
			}
			*(*[]string)(p) = out
			return true
		}
	}
}

func decStringMap(d *decoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '{':
	default:
		return false
	}
	if !d.enter('{') {
		return false
	}
	m := make(map[string]string)
	*(*map[string]string)(p) = m
	if d.peek() == '}' {
		d.i++
		d.depth--
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		k, ok := d.str()
		if !ok || !d.colon() {
			return false
		}
		var v string
		if !decString(d, unsafe.Pointer(&v)) {
			return false
		}
		m[k] = v // null sets "", a later duplicate wins, as in json.Unmarshal
		if !d.more() {
			return d.closed('}')
		}
	}
}

// decTime does what resource.Time's UnmarshalJSON does: null and "" leave the zero
// time, anything else must be RFC 3339 within the years 0000-9999 once in UTC, and
// is kept in UTC at whole seconds. Strings with escapes or non-ASCII bytes answer
// false.
func decTime(d *decoder, p unsafe.Pointer) bool {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
	default:
		return false
	}
	b := d.b
	start := d.i + 1
	for j := start; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			d.i = j + 1
			if j == start {
				return true
			}
			if t, ok := parseUTCSeconds(b[start:j]); ok {
				(*resource.Time)(p).Time = t
				return true
			}
			// time.Parse keeps no reference to its input in a Time.
			pt, err := time.Parse(time.RFC3339, unsafe.String(&b[start], j-start))
			if err != nil {
				return false
			}
			pt = pt.UTC()
			if y := pt.Year(); y < 0 || y > 9999 {
				return false
			}
			(*resource.Time)(p).Time = pt.Truncate(time.Second)
			return true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return false
		}
	}
	return false
}

// parseUTCSeconds parses the form every stored time has, "2006-01-02T15:04:05Z",
// to what time.Parse(time.RFC3339, …) gives in UTC; false for anything else (other
// forms, and out-of-range fields, which time.Parse then judges).
func parseUTCSeconds(b []byte) (time.Time, bool) {
	if len(b) != 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(at, n int) (int, bool) {
		v := 0
		for _, c := range b[at : at+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		mo < 1 || mo > 12 || d < 1 || d > 28 && d > daysIn(time.Month(mo), y) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC), true
}

// daysIn is the number of days of month m of year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// decRawMessage does what json.RawMessage's UnmarshalJSON does: it keeps a copy of
// the value's bytes as they are, "null" for null.
func decRawMessage(d *decoder, p unsafe.Pointer) bool {
	start := d.i
	if !d.skip() {
		return false
	}
	*(*[]byte)(p) = append([]byte(nil), d.b[start:d.i]...)
	return true
}
