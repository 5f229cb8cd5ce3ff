package jsonpatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted in a document or
// patch, and allowed in a result; it matches the limit of encoding/json. Deeper
// input, or an operation that would nest a value deeper, fails with [ErrTooLarge].
const MaxDepth = 10000

// Values are decoded into the generic tree of encoding/json with UseNumber:
// map[string]any, []any, string, json.Number, bool and nil.

// decode parses data as exactly one JSON value (RFC 8259; surrounding whitespace
// allowed). It refuses duplicate keys and nesting deeper than MaxDepth. Strings are
// decoded as encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD).
// what names the input in errors ("document", "patch").
func decode(data []byte, what string) (any, error) {
	p := &parser{data: data, what: what}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.syntax("unexpected %s after the JSON value", p.describe())
	}
	return v, nil
}

// parser is a strict recursive-descent JSON parser. It is hand-written because
// json.Decoder.Token, the only standard way to see duplicate keys, is two orders
// of magnitude slower than json.Valid.
type parser struct {
	data  []byte
	pos   int
	what  string
	stack []string // pointer tokens of the value being parsed, for errors
}

func (p *parser) syntax(format string, args ...any) error {
	return newErr(-1, formatPointer(p.stack), ErrMalformed, nil, "%s is not valid JSON: %s (offset %d)",
		p.what, fmt.Sprintf(format, args...), p.pos)
}

// describe names the byte at pos for error messages.
func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	return "character " + strconv.QuoteRune(rune(p.data[p.pos]))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses one value; depth is the number of containers around it.
func (p *parser) value(depth int) (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.syntax("unexpected end of input, expecting a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return nil, newErr(-1, formatPointer(p.stack), ErrTooLarge, nil, "%s: nesting deeper than %d", p.what, MaxDepth)
		}
		p.pos++
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.syntax("unexpected %s, expecting a value", p.describe())
	}
}

func (p *parser) literal(lit string) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return p.syntax("invalid literal, expecting %s", lit)
	}
	p.pos += len(lit)
	return nil
}

// expect consumes c after optional whitespace.
func (p *parser) expect(c byte, what string) error {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != c {
		return p.syntax("unexpected %s, expecting %s", p.describe(), what)
	}
	p.pos++
	return nil
}

// next consumes, after optional whitespace, either a comma (returning true) or
// the closing delimiter (returning false).
func (p *parser) next(closing byte) (bool, error) {
	p.skipSpace()
	if p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ',':
			p.pos++
			return true, nil
		case closing:
			p.pos++
			return false, nil
		}
	}
	return false, p.syntax("unexpected %s, expecting ',' or %q", p.describe(), rune(closing))
}

func (p *parser) object(depth int) (any, error) {
	m := map[string]any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return m, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.syntax("unexpected %s, expecting a string for an object key", p.describe())
		}
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		p.stack = append(p.stack, key)
		if _, dup := m[key]; dup {
			return nil, newErr(-1, formatPointer(p.stack), ErrMalformed, nil, "%s: duplicate key %q", p.what, key)
		}
		if err := p.expect(':', "':' after an object key"); err != nil {
			return nil, err
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		m[key] = v
		more, err := p.next('}')
		if err != nil || !more {
			return m, err
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	a := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return a, nil
	}
	for {
		p.stack = append(p.stack, strconv.Itoa(len(a)))
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		a = append(a, v)
		more, err := p.next(']')
		if err != nil || !more {
			return a, err
		}
	}
}

// string parses a string starting at the opening quote.
func (p *parser) string() (string, error) {
	start := p.pos
	p.pos++
	plain := true // no escapes and only ASCII: the bytes are the string
	for {
		if p.pos >= len(p.data) {
			return "", p.syntax("unexpected end of input in a string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw := p.data[start:p.pos]
			if plain || (bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)) {
				return string(raw[1 : len(raw)-1]), nil
			}
			// Escapes or invalid UTF-8: let encoding/json decode the (already
			// validated) literal so the result is exactly what it would give.
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				p.pos = start
				return "", p.syntax("invalid string: %v", err)
			}
			return s, nil
		case c < 0x20:
			return "", p.syntax("control character %q in a string", rune(c))
		case c == '\\':
			plain = false
			if p.pos+1 >= len(p.data) {
				return "", p.syntax("unexpected end of input in a string escape")
			}
			switch p.data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					return "", p.syntax("invalid \\u escape in a string")
				}
				p.pos += 6
			default:
				p.pos++
				return "", p.syntax("invalid escape %s in a string", p.describe())
			}
		default:
			if c >= 0x80 {
				plain = false
			}
			p.pos++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number parses -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps its text.
func (p *parser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.syntax("unexpected %s in a number, expecting a digit", p.describe())
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.syntax("unexpected %s after a decimal point, expecting a digit", p.describe())
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.syntax("unexpected %s in an exponent, expecting a digit", p.describe())
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}

// encode writes v as compact JSON with object keys sorted bytewise, escaping
// strings exactly as encoding/json does with SetEscapeHTML(false): the output is
// byte for byte what json.Encoder would write, without its reflection.
func encode(v any) ([]byte, error) {
	var b []byte
	b, err := appendValue(b, v)
	if err != nil {
		// Cannot happen for a tree built by decode; reported rather than hidden.
		return nil, newErr(-1, "", ErrMalformed, err, "result cannot be encoded")
	}
	return b, nil
}

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = appendValue(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, t), nil
	case json.Number: // decode checked the literal
		return append(b, t...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case nil:
		return append(b, "null"...), nil
	default:
		return nil, fmt.Errorf("unsupported type %T", v)
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does without HTML
// escaping: short escapes for " \ \b \f \n \r \t, \u00XX for other control
// characters, \ufffd for invalid UTF-8, and \u2028 and \u2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// clone returns a deep copy of v.
func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = clone(e)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = clone(e)
		}
		return a
	default:
		return v
	}
}

// measure returns the approximate compact JSON size of v in bytes and its nesting
// depth (the number of nested containers: 0 for a scalar, 1 for [], 2 for [[]]).
// It stops early, with over set, once the size passes limit.
func measure(v any, limit int64) (size int64, depth int, over bool) {
	var walk func(v any, d int)
	walk = func(v any, d int) { // d: containers around v
		switch t := v.(type) {
		case map[string]any:
			depth = max(depth, d+1)
			size += 2 + int64(len(t)) // braces, colons and commas, roughly
			for k, e := range t {
				size += stringSize(k)
				if walk(e, d+1); over {
					return
				}
			}
		case []any:
			depth = max(depth, d+1)
			size += 2 + int64(len(t))
			for _, e := range t {
				if walk(e, d+1); over {
					return
				}
			}
		case string:
			size += stringSize(t)
		case json.Number:
			size += int64(len(t))
		case bool:
			if t {
				size += 4
			} else {
				size += 5
			}
		default: // nil
			size += 4
		}
		if size > limit {
			over = true
		}
	}
	walk(v, 0)
	return size, depth, over
}

func stringSize(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// equal reports whether a and b are the same JSON value: numbers compare by value,
// objects regardless of key order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	default:
		return false
	}
}

// numbersEqual compares two JSON number literals exactly, by value: "1", "1.0",
// "10e-1" and "0.1E1" are equal, and so are "0" and "-0". It never converts to
// float64 and never expands the exponent, so "1e1000000000" costs nothing.
func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	na, okA := normalizeNumber(string(a))
	nb, okB := normalizeNumber(string(b))
	if !okA || !okB {
		return false
	}
	return na.neg == nb.neg && na.digits == nb.digits && na.exp.Cmp(nb.exp) == 0
}

// normNumber is a number as ±0.digits × 10^exp with digits free of leading and
// trailing zeros; zero is digits "" (and neg false, exp 0).
type normNumber struct {
	neg    bool
	digits string
	exp    *big.Int
}

func normalizeNumber(s string) (normNumber, bool) {
	var n normNumber
	if strings.HasPrefix(s, "-") {
		n.neg = true
		s = s[1:]
	}
	mant, expStr, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expStr, hasExp = s[:i], s[i+1:], true
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return n, false
	}
	exp := new(big.Int)
	if hasExp {
		digits := strings.TrimPrefix(strings.TrimPrefix(expStr, "+"), "-")
		if digits == "" || !allDigits(digits) {
			return n, false
		}
		if _, ok := exp.SetString(strings.TrimPrefix(expStr, "+"), 10); !ok {
			return n, false
		}
	}
	all := intPart + frac
	trimmed := strings.TrimLeft(all, "0")
	lead := len(all) - len(trimmed)
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return normNumber{exp: new(big.Int)}, true
	}
	// value = all × 10^(exp-len(frac)) = 0.trimmed × 10^(exp-len(frac)+len(all)-lead)
	exp.Add(exp, big.NewInt(int64(len(all)-lead-len(frac))))
	n.digits = trimmed
	n.exp = exp
	return n, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
