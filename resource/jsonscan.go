package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
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

func (w *jsonWalker) skipSpace() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
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
		key, err := w.decodeString(start, escaped)
		if err != nil {
			return err
		}
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

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// str scans a string starting at the opening quote. It returns where the string
// started and whether it holds escapes; w.pos ends after the closing quote.
func (w *jsonWalker) str() (start int, escaped bool, err error) {
	start = w.pos
	w.pos++
	for w.pos < len(w.data) {
		c := w.data[w.pos]
		switch {
		case c == '"':
			w.pos++
			return start, escaped, nil
		case c == '\\':
			escaped = true
			if w.pos+1 >= len(w.data) {
				return start, escaped, w.eof()
			}
			switch w.data[w.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				w.pos += 2
			case 'u':
				if w.pos+6 > len(w.data) {
					return start, escaped, w.eof()
				}
				for i := 2; i < 6; i++ {
					if !isHex(w.data[w.pos+i]) {
						w.pos += i
						return start, escaped, w.syntax("invalid character %s in \\u hexadecimal character escape", describeChar(w.data[w.pos]))
					}
				}
				w.pos += 6
			default:
				w.pos++
				return start, escaped, w.syntax("invalid character %s in string escape code", describeChar(w.data[w.pos]))
			}
		case c < 0x20:
			return start, escaped, w.syntax("invalid character %s in string literal", describeChar(c))
		default:
			w.pos++
		}
	}
	return start, escaped, w.eof()
}

// decodeString returns the string that ends at w.pos and starts at start.
func (w *jsonWalker) decodeString(start int, escaped bool) (string, error) {
	if !escaped {
		return string(w.data[start+1 : w.pos-1]), nil
	}
	var s string
	if err := json.Unmarshal(w.data[start:w.pos], &s); err != nil {
		return "", w.syntax("invalid string: %v", err)
	}
	return s, nil
}

func (w *jsonWalker) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if w.pos >= len(w.data) {
			return w.eof()
		}
		if w.data[w.pos] != lit[i] {
			return w.syntax("invalid character %s in literal %s", describeChar(w.data[w.pos]), lit)
		}
		w.pos++
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and refuses a value out
// of the float64 range.
func (w *jsonWalker) number() error {
	start := w.pos
	digits := func() error {
		if w.pos >= len(w.data) {
			return w.eof()
		}
		if !isDigit(w.data[w.pos]) {
			return w.syntax("invalid character %s in numeric literal", describeChar(w.data[w.pos]))
		}
		for w.pos < len(w.data) && isDigit(w.data[w.pos]) {
			w.pos++
		}
		return nil
	}
	if w.data[w.pos] == '-' {
		w.pos++
	}
	if w.pos < len(w.data) && w.data[w.pos] == '0' {
		w.pos++
	} else if err := digits(); err != nil {
		return err
	}
	if w.pos < len(w.data) && w.data[w.pos] == '.' {
		w.pos++
		if err := digits(); err != nil {
			return err
		}
	}
	if w.pos < len(w.data) && (w.data[w.pos] == 'e' || w.data[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.data) && (w.data[w.pos] == '+' || w.data[w.pos] == '-') {
			w.pos++
		}
		if err := digits(); err != nil {
			return err
		}
	}
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
