package jsonpatch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdEncode encodes v with encoding/json, the way encode claims to.
func stdEncode(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// stdDecode decodes data the way encoding/json does with UseNumber.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	valid := []string{
		`0`, `-0`, `1.5e+10`, `-12.0E-3`, `123456789012345678901234567890`, `true`, `false`, `null`,
		`""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u2028\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"é"`,
		"\"\xff\xfe\"", "\"a\x7fb\"", `[]`, `{}`, ` [ 1 , [ ] , { } ] `, "\t{\"a\"\n:\r1}\n",
		`{"a":{"b":[1,{"c":null}]}}`, `{"":""}`,
	}
	for _, in := range valid {
		t.Run("accepts "+in, func(t *testing.T) {
			got, err := decode([]byte(in), "value")
			require.NoError(t, err)
			want, err := stdDecode([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	invalid := []string{
		``, ` `, `01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `NaN`, `Infinity`, `tru`, `nul`, `True`,
		`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", "\"\x00\"", `'a'`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`,
		`{"a":}`, `{"a":1,}`, `{a:1}`, `{1:1}`, `{"a" 1}`, `{"a":1 "b":2}`, `[`, `{`, `]`, `}`, `[}`, `{]`,
		`1 2`, `[] x`, "\xef\xbb\xbf{}", `/* c */ 1`,
	}
	for _, in := range invalid {
		t.Run("refuses "+in, func(t *testing.T) {
			_, err := decode([]byte(in), "value")
			requireClass(t, err, ErrMalformed)
			assert.False(t, json.Valid([]byte(in)), "encoding/json accepts it")
		})
	}
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	strs := []string{all.String(), "é\u2028\u2029\U0001F600", "\xff\xfe a \xc3", "<>&", "\ufffd", ""}
	for _, s := range strs {
		v := map[string]any{s: []any{s, json.Number("1.50"), true, false, nil, map[string]any{}}}
		assert.Equal(t, string(stdEncode(t, v)), mustEncode(t, v), "%q", s)
	}
}

func mustEncode(t testing.TB, v any) string {
	out, err := encode(v)
	require.NoError(t, err)
	return string(out)
}

func TestEncodeIsCanonical(t *testing.T) {
	v, err := decode([]byte(` {"b" : [ 1.50, "x<y>&\u2028" ], "a" : { } , "é":null} `), "value")
	require.NoError(t, err)
	out, err := encode(v)
	require.NoError(t, err)
	assert.Equal(t, `{"a":{},"b":[1.50,"x<y>&\u2028"],"é":null}`, string(out))
}

func TestDecodeLargeInputIsFast(t *testing.T) {
	// About 3 MiB of mixed values must decode well within a second even on a
	// loaded machine; json.Decoder.Token took several seconds.
	doc := []byte("[" + strings.Repeat(`0,"abc",{"k":true,"\u00e9":[1.5]},`, 80000) + "0]")
	v, err := decode(doc, "document")
	require.NoError(t, err)
	assert.Len(t, v, 80000*3+1)
}

// FuzzDecode checks the hand-written parser and encoder against encoding/json: the
// same inputs are accepted (except duplicate keys, which decode refuses), they give
// the same values, and encoding gives the same bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0.5e3,"\u00e9",true,null]}`, `"\ud800"`, "\"\xff\"", `{"a":1,"a":2}`, `01`, `[1,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := appendString(nil, string(data)), stdEncode(t, string(data)); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %q, encoding/json gives %q", data, got, want)
		}
		got, err := decode(data, "value")
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("decode accepts invalid JSON %q", data)
			}
			return
		}
		if err != nil {
			if classOf(err) == ErrMalformed && strings.Contains(err.Error(), "duplicate key") {
				return
			}
			t.Fatalf("decode refuses valid JSON %q: %v", data, err)
		}
		want, err := stdDecode(data)
		if err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("decode(%q) = %#v, encoding/json gives %#v", data, got, want)
		}
		out, err := encode(got)
		if err != nil || !json.Valid(out) {
			t.Fatalf("encode: %q, %v", out, err)
		}
		if std := stdEncode(t, got); !bytes.Equal(out, std) {
			t.Fatalf("encode gives %q, encoding/json %q", out, std)
		}
	})
}
