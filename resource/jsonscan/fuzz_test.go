package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// FuzzScan checks the scanners, the member walk and the string reader and writer
// against encoding/json on arbitrary bytes.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\u0062\n\"\\\/"`, `"\ud800\udc00\ud800x\udc00"`, "\"\xff\xfe\"", `"\u00"`,
		`"` + strings.Repeat("12345678", 5) + `\t"`, "\"\x01\"", `"<>&` + "\u2028\"", `"\uD83D\ude00"`, `"\uZZZZ"`, `"\q"`,
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` { "a" : -1.5e+3 , "\u0061" : "x" } `, `{"a":1,}`, `{"a" 1}`, `{}`,
		`[1,2,[3,{"x":[]}]]`, `-0.0E-0`, `01`, `1.`, `-`, `1e`, `tru`, `nul`, `falsy`, `{"a":{"b":{"c":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		enc, _ := json.Marshal(string(data))
		if got := jsonscan.AppendQuote(nil, data); !bytes.Equal(got, enc) {
			require.Failf(t, "AppendQuote differs from json.Marshal", "AppendQuote(%q) = %s, json.Marshal %s", data, got, enc)
		}
		i := jsonscan.SkipSpace(data, 0)
		end, ok := jsonscan.SkipValue(data, i, 1)
		valid := ok && jsonscan.SkipSpace(data, end) == len(data)
		if valid != json.Valid(data) {
			require.Failf(t, "SkipValue differs from json.Valid", "SkipValue(%q) valid %v", data, valid)
		}
		checkMembers(t, data, valid, valid && data[i] == '{')
		if i < len(data) {
			if end := jsonscan.SkipTrusted(data, i); end < -1 || end > len(data) || valid && end != len(bytes.TrimRight(data, " \t\r\n")) {
				require.Failf(t, "skip is wrong", "skip(%q) = %d", data, end)
			}
		}
		if i < len(data) && (data[i] == '-' || '0' <= data[i] && data[i] <= '9') {
			end, err := jsonscan.ScanNumber(data, i)
			checkError(t, data, end, err)
			if got := err == nil && jsonscan.SkipSpace(data, end) == len(data); got != valid {
				require.Failf(t, "ScanNumber differs from json.Valid", "ScanNumber(%q) valid %v", data, got)
			}
		}
		if len(data) > 0 && data[0] == '"' {
			checkString(t, data)
		}
	})
}

// checkMembers checks EachMember on data, valid JSON when valid and an object when
// isObject. On invalid text it must only stay within data.
func checkMembers(t *testing.T, data []byte, valid, isObject bool) {
	var rebuilt bytes.Buffer
	rebuilt.WriteByte('{')
	ok := jsonscan.EachMember(data, func(key, value []byte) bool {
		if rebuilt.Len() > 1 {
			rebuilt.WriteByte(',')
		}
		rebuilt.WriteString(`"` + string(key) + `":`)
		if valid {
			require.NoError(t, json.Compact(&rebuilt, value), "EachMember(%q) value %q", data, value)
		}
		return true
	})
	if !valid {
		return
	}
	if ok != isObject {
		require.Failf(t, "EachMember is wrong about the object", "EachMember(%q) = %v", data, ok)
	}
	if !ok {
		return
	}
	rebuilt.WriteByte('}')
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, data))
	require.Equal(t, want.String(), rebuilt.String(), "EachMember(%q) members", data)
}

// checkString checks ScanString and the string reader on data, which starts with a
// quote.
func checkString(t *testing.T, data []byte) {
	var want string
	werr := json.Unmarshal(data, &want)
	padded := append(bytes.Clone(data), ' ')
	end, flags, err := jsonscan.ScanString(padded, 0)
	checkError(t, padded, end, err)
	valid := err == nil && end <= len(data) && jsonscan.SkipSpace(data, end) == len(data)
	if valid != (werr == nil) {
		require.Failf(t, "ScanString differs from encoding/json", "ScanString(%q) valid %v, encoding/json: %v", data, valid, werr)
	}
	var se *jsonscan.SyntaxError
	var jse *json.SyntaxError
	if errors.As(err, &se) && end < len(data) && errors.As(werr, &jse) {
		// encoding/json counts the offending byte in its offset.
		if jse.Offset != int64(end)+1 || !strings.HasSuffix(jse.Error(), se.Context) {
			require.Failf(t, "ScanString's error differs from encoding/json", "ScanString(%q): %v, encoding/json: %v (offset %d)", data, err, werr, jse.Offset)
		}
	}
	if !valid {
		return
	}
	in := data[1 : end-1]
	if got := jsonscan.AppendUnquoted(nil, in); string(got) != want {
		require.Failf(t, "AppendUnquoted differs from encoding/json", "AppendUnquoted(%q) = %q, want %q", data, got, want)
	}
	if !jsonscan.NeedsUnquote(in) && string(in) != want {
		require.Failf(t, "NeedsUnquote is wrong", "NeedsUnquote(%q) is false, but it decodes to %q", data, want)
	}
	if flags == 0 && string(in) != want {
		require.Failf(t, "ScanString's flags are wrong", "ScanString(%q) flags 0, but it decodes to %q", data, want)
	}
	if got := string(jsonscan.Unquote(in)); got != want {
		require.Failf(t, "Unquote differs from encoding/json", "Unquote(%q) = %q, want %q", data, got, want)
	}
}

// checkError checks that a scanner of b that failed with err at offset at names a
// byte of b, or its end.
func checkError(t *testing.T, b []byte, at int, err error) {
	if err == nil {
		return
	}
	var se *jsonscan.SyntaxError
	if errors.Is(err, jsonscan.ErrEOF) && at == len(b) || errors.As(err, &se) && at >= 0 && at < len(b) {
		return
	}
	require.Failf(t, "bad error", "%q: %v at %d", b, err, at)
}
