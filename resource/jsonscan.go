package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// errStrictLimit stops a walk once enough strict errors are collected.
var errStrictLimit = errors.New("too many strict decoding errors")

// pathSeg is one step of the location of a JSON value: an object key, or an array
// index when index >= 0.
type pathSeg struct {
	key   string
	index int
}

// jsonWalker checks a JSON document byte by byte before it is decoded: syntax, nesting
// depth, duplicate keys (dups), keys no field of the target Go type has (when walking
// with a type), numbers out of the float64 range, and, at the top level (top), the
// apiVersion and kind strings. It allocates little: paths are rendered only for
// messages.
type jsonWalker struct {
	data     []byte
	pos      int
	maxDepth int
	dups     bool
	top      bool
	strict   strictErrors
	path     []pathSeg

	apiVersion string
	kind       string
}

func (w *jsonWalker) pathString() string {
	var p Path
	for _, s := range w.path {
		if s.index >= 0 {
			p = p.Index(s.index)
		} else {
			p = p.Child(s.key)
		}
	}
	return p.String()
}

func (w *jsonWalker) where() string {
	if p := w.pathString(); p != "" {
		return p + ": "
	}
	return ""
}

func (w *jsonWalker) syntax(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return NewBadRequest(fmt.Sprintf("the request body is not valid JSON: %s at byte %d", msg, w.pos))
}

func (w *jsonWalker) eof() error {
	err := fmt.Errorf("unexpected end of JSON input: %w", io.ErrUnexpectedEOF)
	return NewBadRequest("the request body is not valid JSON: " + err.Error()).WithCause(err)
}

func (w *jsonWalker) skipSpace() { w.pos = jsonscan.SkipSpace(w.data, w.pos) }

// scanError reports err, from a jsonscan scanner that stopped at the offset at, in
// the decoder's words.
func (w *jsonWalker) scanError(at int, err error) error {
	var se *jsonscan.SyntaxError
	if !errors.As(err, &se) {
		return w.eof() // jsonscan.ErrEOF
	}
	w.pos = at
	return w.syntax("invalid character %s %s", describeChar(w.data[at]), se.Context)
}

func describeChar(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

// document walks the whole body, which must be one object, as a value of type t (nil:
// no field checks).
func (w *jsonWalker) document(t reflect.Type) error {
	w.skipSpace()
	if w.pos >= len(w.data) {
		return NewBadRequest("the request body is empty")
	}
	var got string
	switch c := w.data[w.pos]; {
	case c == '{':
	case c == '[':
		got = "an array"
	case c == '"':
		got = "a string"
	case c == 't' || c == 'f':
		got = "a boolean"
	case c == 'n':
		got = "null"
	case c == '-' || c >= '0' && c <= '9':
		got = "a number"
	default:
		return w.syntax("invalid character %s looking for beginning of value", describeChar(c))
	}
	if got != "" {
		return NewBadRequest("the request body must be an object, got " + got)
	}
	if err := w.value(t, 0); err != nil {
		return err
	}
	w.skipSpace()
	if w.pos < len(w.data) {
		return w.syntax("unexpected data after the top-level object")
	}
	return nil
}

// fieldType resolves the Go type a value decodes into for field checks: nil when the
// type decodes itself, is an interface, or is unknown.
func fieldType(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || opaque(t) {
		return nil
	}
	return t
}

// value walks one value; depth is the number of objects and arrays around it.
func (w *jsonWalker) value(t reflect.Type, depth int) error {
	w.skipSpace()
	if w.pos >= len(w.data) {
		return w.eof()
	}
	switch c := w.data[w.pos]; {
	case c == '{':
		return w.object(fieldType(t), depth+1)
	case c == '[':
		return w.array(fieldType(t), depth+1)
	case c == '"':
		_, _, err := w.str()
		return err
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return w.number()
	default:
		return w.syntax("invalid character %s looking for beginning of value", describeChar(c))
	}
}

func (w *jsonWalker) depthError() error {
	return NewBadRequest(fmt.Sprintf("the request body exceeded the max depth of %d nested objects and arrays", w.maxDepth))
}

func (w *jsonWalker) object(t reflect.Type, depth int) error {
	if depth > w.maxDepth {
		return w.depthError()
	}
	w.pos++ // '{'
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	var seen map[string]struct{}
	w.skipSpace()
	if w.pos < len(w.data) && w.data[w.pos] == '}' {
		w.pos++
		return nil
	}
	for {
		w.skipSpace()
		if w.pos >= len(w.data) {
			return w.eof()
		}
		if w.data[w.pos] != '"' {
			return w.syntax("invalid character %s looking for beginning of object key string", describeChar(w.data[w.pos]))
		}
		start, escaped, err := w.str()
		if err != nil {
			return err
		}
		key := w.decodeString(start, escaped)
		w.path = append(w.path, pathSeg{key: key, index: -1})
		if w.dups {
			if seen == nil {
				seen = map[string]struct{}{}
			}
			if _, dup := seen[key]; dup {
				if !w.strict.add("duplicate", w.pathString()) {
					return errStrictLimit
				}
			}
			seen[key] = struct{}{}
		}
		var vt reflect.Type
		switch {
		case fields != nil:
			ft, ok := fields[key]
			if !ok {
				if !w.strict.add("unknown", w.pathString()) {
					return errStrictLimit
				}
			}
			vt = ft
		case elem != nil:
			vt = elem
		}
		w.skipSpace()
		if w.pos >= len(w.data) {
			return w.eof()
		}
		if w.data[w.pos] != ':' {
			return w.syntax("invalid character %s after object key", describeChar(w.data[w.pos]))
		}
		w.pos++
		w.skipSpace()
		vstart := w.pos
		if err := w.value(vt, depth); err != nil {
			return err
		}
		if w.top && depth == 1 && (key == "apiVersion" || key == "kind") {
			if err := w.recordTypeMeta(key, vstart); err != nil {
				return err
			}
		}
		w.path = w.path[:len(w.path)-1]
		w.skipSpace()
		if w.pos >= len(w.data) {
			return w.eof()
		}
		switch w.data[w.pos] {
		case ',':
			w.pos++
		case '}':
			w.pos++
			return nil
		default:
			return w.syntax("invalid character %s after object key:value pair", describeChar(w.data[w.pos]))
		}
	}
}

// recordTypeMeta keeps the top-level apiVersion or kind, which must be a string (or
// null, meaning absent).
func (w *jsonWalker) recordTypeMeta(key string, vstart int) error {
	raw := w.data[vstart:w.pos]
	if string(raw) == "null" {
		return nil
	}
	if raw[0] != '"' {
		return NewBadRequest(key + " must be a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return NewBadRequest(key + " must be a string").WithCause(err)
	}
	if key == "apiVersion" {
		w.apiVersion = s
	} else {
		w.kind = s
	}
	return nil
}

func (w *jsonWalker) array(t reflect.Type, depth int) error {
	if depth > w.maxDepth {
		return w.depthError()
	}
	w.pos++ // '['
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8 {
		elem = t.Elem()
	}
	w.skipSpace()
	if w.pos < len(w.data) && w.data[w.pos] == ']' {
		w.pos++
		return nil
	}
	for i := 0; ; i++ {
		w.path = append(w.path, pathSeg{index: i})
		if err := w.value(elem, depth); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
		w.skipSpace()
		if w.pos >= len(w.data) {
			return w.eof()
		}
		switch w.data[w.pos] {
		case ',':
			w.pos++
		case ']':
			w.pos++
			return nil
		default:
			return w.syntax("invalid character %s after array element", describeChar(w.data[w.pos]))
		}
	}
}

// str scans a string starting at the opening quote. It returns where the string
// started and whether it holds escapes; w.pos ends after the closing quote.
func (w *jsonWalker) str() (start int, escaped bool, err error) {
	start = w.pos
	end, f, err := jsonscan.ScanString(w.data, w.pos)
	if err != nil {
		return start, false, w.scanError(end, err)
	}
	w.pos = end
	return start, f&jsonscan.Escaped != 0, nil
}

// decodeString returns the string that ends at w.pos and starts at start.
func (w *jsonWalker) decodeString(start int, escaped bool) string {
	raw := w.data[start+1 : w.pos-1]
	if !escaped {
		return string(raw)
	}
	return string(jsonscan.AppendUnquoted(make([]byte, 0, len(raw)), raw))
}

func (w *jsonWalker) literal(lit string) error {
	end, err := jsonscan.ScanLiteral(w.data, w.pos, lit)
	if err != nil {
		return w.scanError(end, err)
	}
	w.pos = end
	return nil
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and refuses a value out
// of the float64 range.
func (w *jsonWalker) number() error {
	start := w.pos
	end, err := jsonscan.ScanNumber(w.data, w.pos)
	if err != nil {
		return w.scanError(end, err)
	}
	w.pos = end
	raw := w.data[start:w.pos]
	if len(raw) <= 15 && !bytes.ContainsAny(raw, "eE") {
		return nil // cannot overflow a float64
	}
	num := string(raw)
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		return NewBadRequest(fmt.Sprintf("%sthe number %s is out of range", w.where(), truncForMsg(num))).WithCause(err)
	}
	return nil
}
