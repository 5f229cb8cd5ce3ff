package store

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergeSeeds are documents and patches for the merge tests and the fuzz corpus.
var mergeSeeds = []struct{ name, doc, patch string }{
	{"set a label", `{"kind":"K","metadata":{"name":"a","labels":{"a":"1","b":"2"}},"spec":{"x":1}}`, `{"metadata":{"labels":{"b":"3"}}}`},
	{"add a label", `{"metadata":{"labels":{"a":"1"}}}`, `{"metadata":{"labels":{"c":"3"}}}`},
	{"remove a label", `{"metadata":{"labels":{"a":"1","b":"2"}}}`, `{"metadata":{"labels":{"a":null}}}`},
	{"remove a missing key", `{"a":1}`, `{"b":null}`},
	{"empty patch", `{"a":{"b":[1,2]},"c":"d"}`, `{}`},
	{"object into a scalar", `{"a":1}`, `{"a":{"b":null,"c":{"d":null,"e":2}}}`},
	{"object into null", `{"a":null}`, `{"a":{"b":null,"c":1}}`},
	{"new object with nulls", `{}`, `{"a":{"b":null,"c":[{"d":null},null,3]}}`},
	{"array replaces an object", `{"a":{"x":1}}`, `{"a":[{"b":null},null]}`},
	{"array replaces an array", `{"a":[1]}`, `{"a":[{"b":null},null]}`},
	{"scalar replaces an object", `{"a":{"x":1}}`, `{"a":"s"}`},
	{"nested merge", `{"a":{"b":{"c":1,"d":2},"e":3}}`, `{"a":{"b":{"c":null,"f":{"g":null}},"e":null}}`},
	{"white space in the patch", `{"a":{"b":1}}`, " { \"a\" : { \"c\" : [ 1 , 2 ] } } "},
	{"numbers as written", `{"a":1.50,"c":{}}`, `{"b":1e5,"c":{"d":-0}}`},
	{"empty values", `{"a":{},"b":[]}`, `{"a":{},"b":{}}`},
	{"unicode document", `{"é":"ü"}`, `{"a":"b"}`},
	{"escapes fall back", `{"a":"\u00e9"}`, `{"a":"b"}`},
	{"html falls back", `{"a":"<"}`, `{"b":"c"}`},
	{"white space in the document falls back", `{"a": 1}`, `{"b":2}`},
	{"duplicate patch keys fall back", `{"a":1}`, `{"b":1,"b":2}`},
	{"not an object", `{"a":1}`, `[1]`},
	{"invalid patch", `{"a":1}`, `{"a":`},
}

// canonicalJSON decodes a JSON document for comparison without regard to order.
func canonicalJSON(t testing.TB, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// TestMergePatchBytes checks the byte-level merge against jsonpatch.MergePatch and
// that it leaves the cases it does not handle to the library.
func TestMergePatchBytes(t *testing.T) {
	fallback := map[string]bool{"escapes fall back": true, "html falls back": true,
		"white space in the document falls back": true, "duplicate patch keys fall back": true,
		"not an object": true, "invalid patch": true}
	for _, tc := range mergeSeeds {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := mergePatchBytes([]byte(tc.doc), []byte(tc.patch))
			if fallback[tc.name] {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			want, err := jsonpatch.MergePatch([]byte(tc.doc), []byte(tc.patch))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestMergePatchBytes_appends checks the order of added members: after the
// object's own, in the patch's order.
func TestMergePatchBytes_appends(t *testing.T) {
	got, added, ok := mergePatchBytes([]byte(`{"a":1,"z":{"y":1}}`), []byte(`{"c":3,"b":2,"z":{"x":0}}`))
	require.True(t, ok)
	assert.Equal(t, `{"a":1,"z":{"y":1,"x":0},"c":3,"b":2}`, string(got))
	assert.Equal(t, 2, added)
}

// hasDuplicateKeys reports whether a valid JSON document has an object with a key
// twice.
func hasDuplicateKeys(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return true
				}
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		case json.Delim('['):
			for d.More() {
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		}
		return false
	}
	return walk()
}

// FuzzMergePatchBytes holds the byte-level merge to jsonpatch.MergePatch: for every
// document the store could hold (a valid JSON object without duplicate keys) and
// every patch, where it answers, its answer is jsonpatch's, byte for byte (the same
// value when jsonpatch's order of several added members is not fixed).
func FuzzMergePatchBytes(f *testing.F) {
	for _, s := range mergeSeeds {
		f.Add([]byte(s.doc), []byte(s.patch))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		got, added, ok := mergePatchBytes(doc, patch)
		if !ok {
			return
		}
		if !json.Valid(doc) || hasDuplicateKeys(doc) {
			return // not a document the store writes
		}
		want, err := jsonpatch.MergePatch(doc, patch)
		require.NoError(t, err, "the byte-level merge answered where the library fails")
		if added <= 1 {
			require.Equal(t, string(want), string(got))
			return
		}
		if !reflect.DeepEqual(canonicalJSON(t, want), canonicalJSON(t, got)) {
			require.Equal(t, string(want), string(got))
		}
	})
}
