package jsonpatch

import (
	"strconv"
	"strings"
)

// parsePointer splits an RFC 6901 JSON pointer into its unescaped reference tokens.
// "" is the whole document; every other pointer starts with "/". In a token "~0"
// stands for "~" and "~1" for "/"; any other "~" is an error.
func parsePointer(s string) ([]string, bool) {
	if s == "" {
		return nil, true
	}
	if s[0] != '/' {
		return nil, false
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(p); j++ {
			if p[j] != '~' {
				b.WriteByte(p[j])
				continue
			}
			if j+1 >= len(p) {
				return nil, false
			}
			switch p[j+1] {
			case '0':
				b.WriteByte('~')
			case '1':
				b.WriteByte('/')
			default:
				return nil, false
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, true
}

// formatPointer is the inverse of parsePointer.
func formatPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		if strings.ContainsAny(t, "~/") {
			t = strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
		}
		b.WriteString(t)
	}
	return b.String()
}

// isProperPrefix reports whether pointer a is a proper prefix of pointer b.
func isProperPrefix(a, b []string) bool {
	if len(a) >= len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func itoa(i int) string { return strconv.Itoa(i) }

// arrayIndex resolves a reference token against an array of length n. A token is an
// index if it is "0" or digits without a leading zero; "-" is the index just past
// the end and is accepted only with end set (add). With end set, n itself is in
// range (insert at the end). The error text explains why the token does not work.
func arrayIndex(tok string, n int, end bool) (int, string) {
	if tok == "-" {
		if end {
			return n, ""
		}
		return 0, `index "-" refers to the element after the last one, which does not exist`
	}
	if tok == "" || !allDigits(tok) || (len(tok) > 1 && tok[0] == '0') {
		return 0, "array index " + strconv.Quote(tok) + " is not a non-negative integer without leading zeros"
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > n || (i == n && !end) {
		return 0, "array index " + tok + " is out of range (length " + strconv.Itoa(n) + ")"
	}
	return i, ""
}
