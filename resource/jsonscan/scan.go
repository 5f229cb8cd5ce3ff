package jsonscan

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode/utf8"
)

// MaxDepth is encoding/json's limit on nested arrays and objects.
const MaxDepth = 10000

// ErrEOF is the error of a scanner that reaches the end of the text inside a token.
var ErrEOF = errors.New("unexpected end of JSON input")

// A SyntaxError is the error of a scanner that meets a byte that makes the text
// invalid; the scanner returns the byte's offset with it. The scanners return shared
// values: compare them by Context, never change them.
type SyntaxError struct {
	// Context says what was being read, as in "in string literal".
	Context string
}

func (e *SyntaxError) Error() string { return "invalid character " + e.Context }

// The errors the scanners return: static, so that a scanner never allocates or calls
// out, which keeps the valid path fast.
var (
	errStringByte = &SyntaxError{Context: "in string literal"}
	errEscape     = &SyntaxError{Context: "in string escape code"}
	errHex        = &SyntaxError{Context: `in \u hexadecimal character escape`}
	errNumber     = &SyntaxError{Context: "in numeric literal"}
	errTrue       = &SyntaxError{Context: "in literal true"}
	errFalse      = &SyntaxError{Context: "in literal false"}
	errNull       = &SyntaxError{Context: "in literal null"}
)

// Flags say what a string holds; see [ScanString].
type Flags uint8

const (
	// Escaped: the string has a backslash escape.
	Escaped Flags = 1 << iota
	// NonASCII: the string has a byte >= 0x80.
	NonASCII
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// SkipSpace returns the offset of the first byte at or after i that is not JSON white
// space (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // compact JSON: no space at all
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialBytes returns, for the 8 bytes in x, a mask whose lowest set bit is the top
// bit of the first byte that ends or escapes a JSON string ('"', '\\' or a control
// character), or 0 when there is none. (Bits above the lowest may be spurious.)
func specialBytes(x uint64) uint64 {
	ctl := (x - lsb*0x20) &^ x // a byte below 0x20
	q := x ^ (lsb * '"')       // zero where '"'
	bs := x ^ (lsb * '\\')     // zero where '\\'
	return (ctl | (q-lsb)&^q | (bs-lsb)&^bs) & msb
}

// ScanString validates the JSON string whose opening quote is b[i] and returns the
// offset after its closing quote and what it holds. Its content, b[i+1:end-1], needs
// decoding ([Unquote]) only when f is not 0. When the string is not valid, end is
// the offset of the offending byte (len(b) when b ends first) and err says why.
func ScanString(b []byte, i int) (end int, f Flags, err error) {
	i++
	for {
		// Skip 8 bytes at a time to the next byte that needs a look.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			m := specialBytes(x)
			if m == 0 {
				if x&msb != 0 {
					f |= NonASCII
				}
				i += 8
				continue
			}
			k := bits.TrailingZeros64(m) &^ 7 // bit offset of the special byte
			if x&msb&(1<<k-1) != 0 {
				f |= NonASCII
			}
			i += k >> 3
			break
		}
		if i >= len(b) {
			return len(b), 0, ErrEOF
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, f, nil
		case c == '\\':
			f |= Escaped
			if i+1 >= len(b) {
				return len(b), 0, ErrEOF
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return len(b), 0, ErrEOF
				}
				for k := i + 2; k < i+6; k++ {
					if unhex(b[k]) < 0 {
						return k, 0, errHex
					}
				}
				i += 6
			default:
				return i + 1, 0, errEscape
			}
		case c < 0x20:
			return i, 0, errStringByte
		default:
			if c >= utf8.RuneSelf {
				f |= NonASCII
			}
			i++
		}
	}
}

// unhex is the value of the hex digit c, or -1.
func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 decodes the 4 hex digits that s starts with, or returns -1.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		d := unhex(c)
		if d < 0 {
			return -1
		}
		r = r*16 + d
	}
	return r
}

// ScanNumber validates the JSON number -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// that starts at b[i] and returns the offset after it. When it is not valid, end is
// the offset of the offending byte (len(b) when b ends first) and err says why.
func ScanNumber(b []byte, i int) (end int, err error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i, err = digits(b, i); err != nil {
		return i, err
	}
	if i < len(b) && b[i] == '.' {
		if i, err = digits(b, i+1); err != nil {
			return i, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, err = digits(b, i); err != nil {
			return i, err
		}
	}
	return i, nil
}

// digits skips one or more decimal digits.
func digits(b []byte, i int) (int, error) {
	if i >= len(b) {
		return len(b), ErrEOF
	}
	if !isDigit(b[i]) {
		return i, errNumber
	}
	for i++; i < len(b) && isDigit(b[i]); i++ {
	}
	return i, nil
}

// ScanLiteral validates the literal lit ("true", "false" or "null") that starts at
// b[i] and returns the offset after it. When it is not there, end is the offset of
// the first byte that differs (len(b) when b ends first) and err says why.
func ScanLiteral(b []byte, i int, lit string) (end int, err error) {
	k := 0
	for ; k < len(lit); k++ {
		if i+k >= len(b) {
			return len(b), ErrEOF
		}
		if b[i+k] != lit[k] {
			switch lit {
			case "true":
				err = errTrue
			case "false":
				err = errFalse
			default:
				err = errNull
			}
			return i + k, err
		}
	}
	return i + k, nil
}

// SkipValue validates the JSON value that starts at b[i] (not white space), nested in
// depth-1 arrays and objects, and returns the offset after it; ok is false when it is
// not valid or nests deeper than [MaxDepth].
func SkipValue(b []byte, i, depth int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	var err error
	switch b[i] {
	case '{':
		return skipObject(b, i, depth)
	case '[':
		return skipArray(b, i, depth)
	case '"':
		end, _, err = ScanString(b, i)
	case 't':
		end, err = ScanLiteral(b, i, "true")
	case 'f':
		end, err = ScanLiteral(b, i, "false")
	case 'n':
		end, err = ScanLiteral(b, i, "null")
	default:
		end, err = ScanNumber(b, i)
	}
	return end, err == nil
}

// skipObject validates the object at b[i] == '{' at nesting depth depth.
func skipObject(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return 0, false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		var err error
		if i, _, err = ScanString(b, i); err != nil {
			return 0, false
		}
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		var ok bool
		if i, ok = SkipValue(b, SkipSpace(b, i+1), depth+1); !ok {
			return 0, false
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipArray validates the array at b[i] == '[' at nesting depth depth.
func skipArray(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return 0, false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = SkipValue(b, i, depth+1); !ok {
			return 0, false
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skip returns the offset after the JSON value that starts at b[i] (not white
// space), trusting that it is valid, as what encoding/json writes is: it looks only
// for where strings, arrays and objects end, which makes it faster than [SkipValue].
// It returns -1 when b ends first. On text that is not valid JSON its result is
// unspecified, but it stays within b.
func skip(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j); j < 0 {
					return -1
				}
				j-- // the loop steps over the closing quote
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // a number or a literal: up to the next delimiter
		j := i + 1
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
			j++
		}
		return j
	}
}

// skipString returns the offset after the valid string whose opening quote is b[i],
// or -1.
func skipString(b []byte, i int) int {
	i++
	for {
		// Skip 8 bytes at a time to the next '"' or '\\'.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q, bs := x^(lsb*'"'), x^(lsb*'\\')
			if m := ((q-lsb)&^q | (bs-lsb)&^bs) & msb; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] != '"' && b[i] != '\\' {
			i++
		}
		switch {
		case i >= len(b):
			return -1
		case b[i] == '"':
			return i + 1
		}
		i += 2 // an escape: '\\' and the byte after it
	}
}

// EachMember calls fn with the members of the JSON object b (white space around it
// allowed) in order, until fn returns false: each member's key as written (without
// its quotes, escapes not decoded) and its value. It trusts that b is valid JSON,
// as what encoding/json writes is, and only looks for where values end, which makes
// it faster than validating them; ok is false when b, as far as it was read, is not
// one object.
func EachMember(b []byte, fn func(key, value []byte) bool) (ok bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return SkipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ke := skipString(b, i)
		if ke < 0 {
			return false
		}
		vs := SkipSpace(b, ke)
		if vs >= len(b) || b[vs] != ':' {
			return false
		}
		vs = SkipSpace(b, vs+1)
		ve := skip(b, vs)
		if ve < 0 {
			return false
		}
		if !fn(b[i+1:ke-1], b[vs:ve]) {
			return true
		}
		i = SkipSpace(b, ve)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return SkipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}
