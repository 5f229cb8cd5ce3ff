package managedfields

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads and writes JSON text directly, without decoding it into Go
// values. Everything here accepts and produces exactly what encoding/json does:
// the same grammar and nesting limit, strings decoded the way encoding/json decodes
// them (invalid UTF-8 and lone surrogates become U+FFFD) and encoded the way
// json.Marshal encodes them (HTML characters, U+2028 and U+2029 escaped).

// maxNestingDepth is encoding/json's limit on nested arrays and objects.
const maxNestingDepth = 10000

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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // compact JSON: no space at all
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// String flags reported by scanString.
const (
	strEscaped = 1 << iota // the string has a backslash escape
	strHigh                // the string has a byte >= 0x80
)

// scanString validates the JSON string starting at b[i] == '"' and returns the index
// after its closing quote and what it contains.
func scanString(b []byte, i int) (end int, flags uint8, ok bool) {
	i++
	for {
		// Skip 8 bytes at a time to the next byte that needs a look.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			m := specialBytes(x)
			if m == 0 {
				if x&msb != 0 {
					flags |= strHigh
				}
				i += 8
				continue
			}
			k := bits.TrailingZeros64(m) &^ 7 // bit offset of the special byte
			if x&msb&(1<<k-1) != 0 {
				flags |= strHigh
			}
			i += k >> 3
			break
		}
		if i >= len(b) {
			return 0, 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, flags, true
		case c == '\\':
			flags |= strEscaped
			if i+1 >= len(b) {
				return 0, 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					return 0, 0, false
				}
				i += 6
			default:
				return 0, 0, false
			}
		case c < 0x20:
			return 0, 0, false
		default:
			if c >= utf8.RuneSelf {
				flags |= strHigh
			}
			i++
		}
	}
}

// hex4 decodes 4 hex digits, or returns -1.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// scanNumber validates the JSON number starting at b[i].
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipValue validates the JSON value starting at b[i] (not white space), nested in
// depth-1 arrays and objects, and returns the index after it.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '{':
		return skipObject(b, i, depth)
	case '[':
		return skipArray(b, i, depth)
	case '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		return scanNumber(b, i)
	}
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// skipObject validates the object at b[i] == '{' at nesting depth depth.
func skipObject(b []byte, i, depth int) (int, bool) {
	if depth > maxNestingDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		var ok bool
		if i, _, ok = scanString(b, i); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		if i, ok = skipValue(b, i, depth+1); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipArray validates the array at b[i] == '[' at nesting depth depth.
func skipArray(b []byte, i, depth int) (int, bool) {
	if depth > maxNestingDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = skipValue(b, i, depth+1); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// needsUnquote reports whether the content s of a valid JSON string (without its
// quotes) decodes to something other than s itself.
func needsUnquote(s []byte) bool {
	return bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s)
}

// appendUnquoted appends the decoded content s of a valid JSON string (without its
// quotes), exactly as encoding/json decodes it.
func appendUnquoted(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := rune(-1)
					if len(s)-r >= 6 && s[r] == '\\' && s[r+1] == 'u' {
						rr1 = hex4(s[r+2:])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						dst = utf8.AppendRune(dst, dec)
						continue
					}
					rr = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// unquoted returns the decoded content of a valid JSON string (without its quotes):
// s itself when decoding would not change it.
func unquoted(s []byte) []byte {
	if !needsUnquote(s) {
		return s
	}
	return appendUnquoted(make([]byte, 0, len(s)), s)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as json.Marshal writes it.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped appends s escaped as in a JSON string written by json.Marshal,
// without the quotes.
func appendEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// numbersEqualBytes is numbersEqual for number literals as written.
func numbersEqualBytes(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if x, ok := smallInt(a); ok {
		if y, ok := smallInt(b); ok {
			return x == y
		}
	}
	return numbersEqual(json.Number(a), json.Number(b))
}

// smallInt parses an integer literal of at most 18 digits, which always fits an
// int64.
func smallInt(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
