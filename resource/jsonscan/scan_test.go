package jsonscan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource/jsonscan"
)

func TestScanners_name_the_offending_byte(t *testing.T) {
	for _, tc := range []struct {
		in      string
		scan    func([]byte) (int, error)
		offset  int
		context string // "" for ErrEOF
	}{
		{`"a\qb"`, scanString, 3, "in string escape code"},
		{`"a\u12x4"`, scanString, 6, `in \u hexadecimal character escape`},
		{`"a\u12"`, scanString, 7, ""}, // fewer than 4 bytes after \u: the end
		{"\"a\nb\"", scanString, 2, "in string literal"},
		{`"abc`, scanString, 4, ""},
		{`"ab\`, scanString, 4, ""},
		{`-x`, scanNumber, 1, "in numeric literal"},
		{`1.e5`, scanNumber, 2, "in numeric literal"},
		{`1e+`, scanNumber, 3, ""},
		{`tru`, scanLiteral("true"), 3, ""},
		{`trUe`, scanLiteral("true"), 2, "in literal true"},
		{`nul!`, scanLiteral("null"), 3, "in literal null"},
	} {
		off, err := tc.scan([]byte(tc.in))
		assert.Equal(t, tc.offset, off, "%s: offset", tc.in)
		if tc.context == "" {
			assert.ErrorIs(t, err, jsonscan.ErrEOF, tc.in)
			continue
		}
		var se *jsonscan.SyntaxError
		if assert.ErrorAs(t, err, &se, tc.in) {
			assert.Equal(t, tc.context, se.Context, "%s: context", tc.in)
		}
	}
}

func scanString(b []byte) (int, error) { end, _, err := jsonscan.ScanString(b, 0); return end, err }
func scanNumber(b []byte) (int, error) { return jsonscan.ScanNumber(b, 0) }
func scanLiteral(lit string) func([]byte) (int, error) {
	return func(b []byte) (int, error) { return jsonscan.ScanLiteral(b, 0, lit) }
}

func TestScanString_reports_escapes_and_non_ASCII(t *testing.T) {
	for in, want := range map[string]jsonscan.Flags{
		`"plain and long enough to take the 8-byte path"`: 0,
		`"tab\t"`:                           jsonscan.Escaped,
		`"café, served in the 8-byte path"`: jsonscan.NonASCII,
		`"é\n"`:                             jsonscan.Escaped | jsonscan.NonASCII,
	} {
		end, f, err := jsonscan.ScanString([]byte(in+" "), 0)
		require.NoError(t, err, in)
		assert.Equal(t, len(in), end, in)
		assert.Equal(t, want, f, in)
	}
}

func TestSkipValue_stops_at_MaxDepth(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	end, ok := jsonscan.SkipValue(deep(jsonscan.MaxDepth), 0, 1)
	assert.True(t, ok)
	assert.Equal(t, 2*jsonscan.MaxDepth, end)
	_, ok = jsonscan.SkipValue(deep(jsonscan.MaxDepth+1), 0, 1)
	assert.False(t, ok)
}

func TestEachMember_keys_as_written_and_early_stop(t *testing.T) {
	var keys []string
	ok := jsonscan.EachMember([]byte(` {"a\"b" : 1, "c":{"d":[]} ,"e":null} `), func(key, value []byte) bool {
		keys = append(keys, string(key)+"="+string(value))
		return string(key) != "c"
	})
	assert.True(t, ok)
	assert.Equal(t, []string{`a\"b=1`, `c={"d":[]}`}, keys)
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a":1,}`, `{"a":}`, `{a:1}`, `{"a":1} x`, `{"a":"b`, `{"a":[1}`} {
		assert.False(t, jsonscan.EachMember([]byte(bad), func(_, _ []byte) bool { return true }), "%q", bad)
	}
}

func TestSkip_finds_the_end_of_valid_values(t *testing.T) {
	for in, want := range map[string]int{
		`"a\"b\\" x`:                    8,
		`{"a":["}",{"b":"]"}],"c":1} x`: 27,
		`-1.5e3, 2`:                     6,
		`true]`:                         4,
		`[[]`:                           -1,
		`"abc`:                          -1,
	} {
		assert.Equal(t, want, jsonscan.SkipTrusted([]byte(in), 0), "%s", in)
	}
}
