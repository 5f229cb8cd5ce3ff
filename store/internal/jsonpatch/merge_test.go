package jsonpatch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type mergeCase struct {
	name       string
	doc, patch string
	want       string // compact, sorted keys; empty when an error is expected
	err        error
}

func runMergeCases(t *testing.T, cases []mergeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, patch := []byte(tc.doc), []byte(tc.patch)
			got, err := MergePatch(doc, patch)
			assert.Equal(t, tc.doc, string(doc), "MergePatch changed its doc argument")
			assert.Equal(t, tc.patch, string(patch), "MergePatch changed its patch argument")
			if tc.err != nil {
				e := requireClass(t, err, tc.err)
				assert.Equal(t, -1, e.Op)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			again, err := MergePatch(got, patch)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "applying the merge patch twice differs from once")
		})
	}
}

// The examples of RFC 7386 Appendix A, in order. Four of them have a target or a
// patch that is not an object; the RFC gives a result, MergePatch refuses them on
// purpose (see its doc comment).
func TestMergePatchRFC7386AppendixA(t *testing.T) {
	runMergeCases(t, []mergeCase{
		{name: "1 replaces a member", doc: `{"a":"b"}`, patch: `{"a":"c"}`, want: `{"a":"c"}`},
		{name: "2 adds a member", doc: `{"a":"b"}`, patch: `{"b":"c"}`, want: `{"a":"b","b":"c"}`},
		{name: "3 null removes a member", doc: `{"a":"b"}`, patch: `{"a":null}`, want: `{}`},
		{name: "4 null removes only that member", doc: `{"a":"b","b":"c"}`, patch: `{"a":null}`, want: `{"b":"c"}`},
		{name: "5 a string replaces an array", doc: `{"a":["b"]}`, patch: `{"a":"c"}`, want: `{"a":"c"}`},
		{name: "6 an array replaces a string", doc: `{"a":"c"}`, patch: `{"a":["b"]}`, want: `{"a":["b"]}`},
		{name: "7 objects merge recursively", doc: `{"a":{"b":"c"}}`, patch: `{"a":{"b":"d","c":null}}`, want: `{"a":{"b":"d"}}`},
		{name: "8 arrays replace whole", doc: `{"a":[{"b":"c"}]}`, patch: `{"a":[1]}`, want: `{"a":[1]}`},
		{name: "9 array target and patch are refused", doc: `["a","b"]`, patch: `["c","d"]`, err: ErrMalformed},
		{name: "10 array patch is refused", doc: `{"a":"b"}`, patch: `["c"]`, err: ErrMalformed},
		{name: "11 null patch is refused", doc: `{"a":"foo"}`, patch: `null`, err: ErrMalformed},
		{name: "12 string patch is refused", doc: `{"a":"foo"}`, patch: `"bar"`, err: ErrMalformed},
		{name: "13 nulls in the target are kept", doc: `{"e":null}`, patch: `{"a":1}`, want: `{"a":1,"e":null}`},
		{name: "14 array target is refused", doc: `[1,2]`, patch: `{"a":"b","c":null}`, err: ErrMalformed},
		{name: "15 nulls in a new nested object are dropped", doc: `{}`, patch: `{"a":{"bb":{"ccc":null}}}`, want: `{"a":{"bb":{}}}`},
	})
}

// The example of RFC 7386 section 3.
func TestMergePatchRFC7386Section3(t *testing.T) {
	runMergeCases(t, []mergeCase{{
		name: "changes title, removes the family name, adds a phone number, replaces tags",
		doc: `{"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},` +
			`"tags":["example","sample"],"content":"This will be unchanged"}`,
		patch: `{"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},"tags":["example"]}`,
		want: `{"author":{"givenName":"John"},"content":"This will be unchanged",` +
			`"phoneNumber":"+01-123-456-7890","tags":["example"],"title":"Hello!"}`,
	}})
}

func TestMergePatchSemantics(t *testing.T) {
	runMergeCases(t, []mergeCase{
		{name: "empty patch re-encodes the document", doc: ` {"b":1, "a":{ "d":[1 ,2], "c":null}} `, patch: `{}`,
			want: `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{name: "null for a missing member does nothing", doc: `{"a":1}`, patch: `{"b":null}`, want: `{"a":1}`},
		{name: "an object replaces a scalar and loses its nulls", doc: `{"a":1}`, patch: `{"a":{"b":null,"c":{"d":null,"e":1}}}`,
			want: `{"a":{"c":{"e":1}}}`},
		{name: "nulls inside arrays are kept", doc: `{}`, patch: `{"a":[null,{"b":null}]}`, want: `{"a":[null,{"b":null}]}`},
		{name: "deep merge keeps untouched siblings", doc: `{"m":{"labels":{"x":"1","y":"2"},"name":"n"}}`,
			patch: `{"m":{"labels":{"x":null,"z":"3"}}}`, want: `{"m":{"labels":{"y":"2","z":"3"},"name":"n"}}`},
		{name: "numbers round-trip exactly", doc: `{"a":12345678901234567890123,"b":1.50}`, patch: `{"c":1e400,"d":-0}`,
			want: `{"a":12345678901234567890123,"b":1.50,"c":1e400,"d":-0}`},
		{name: "empty key", doc: `{"":1}`, patch: `{"":{"":2}}`, want: `{"":{"":2}}`},
		{name: "HTML characters are not escaped", doc: `{}`, patch: `{"a":"<&>"}`, want: `{"a":"<&>"}`},
	})
}

func TestMergePatchErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	runMergeCases(t, []mergeCase{
		{name: "malformed: patch is not JSON", doc: `{}`, patch: `{"a":`, err: ErrMalformed},
		{name: "malformed: patch is empty", doc: `{}`, patch: ``, err: ErrMalformed},
		{name: "malformed: patch has trailing data", doc: `{}`, patch: `{} {}`, err: ErrMalformed},
		{name: "malformed: patch has a duplicate key", doc: `{}`, patch: `{"a":1,"a":null}`, err: ErrMalformed},
		{name: "malformed: patch has a nested duplicate key", doc: `{}`, patch: `{"a":{"b":1,"b":1}}`, err: ErrMalformed},
		{name: "malformed: patch is a number", doc: `{}`, patch: `1`, err: ErrMalformed},
		{name: "malformed: document is not JSON", doc: `{`, patch: `{}`, err: ErrMalformed},
		{name: "malformed: document has a duplicate key", doc: `{"a":1,"a":2}`, patch: `{}`, err: ErrMalformed},
		{name: "malformed: document is null", doc: `null`, patch: `{}`, err: ErrMalformed},
		{name: "malformed: document is a string", doc: `"x"`, patch: `{}`, err: ErrMalformed},
		{name: "too large: patch nested deeper than MaxDepth", doc: `{}`, patch: deep, err: ErrTooLarge},
		{name: "too large: document nested deeper than MaxDepth", doc: deep, patch: `{}`, err: ErrTooLarge},
	})
	t.Run("the pointer of a duplicate key is reported", func(t *testing.T) {
		_, err := MergePatch([]byte(`{}`), []byte(`{"a":[0,{"b":1,"b":2}]}`))
		e := requireClass(t, err, ErrMalformed)
		assert.Equal(t, "/a/1/b", e.Path)
	})
}
