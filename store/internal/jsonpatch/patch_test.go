package jsonpatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type applyCase struct {
	name  string
	doc   string
	patch string
	want  string // compact, sorted keys; empty when an error is expected
	err   error  // ErrMalformed, ErrFailed or ErrTooLarge
	op    int    // expected Error.Op when err is set
}

func runApplyCases(t *testing.T, cases []applyCase, opts Options) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, patch := []byte(tc.doc), []byte(tc.patch)
			got, err := Apply(doc, patch, opts)
			assert.Equal(t, tc.doc, string(doc), "Apply changed its doc argument")
			assert.Equal(t, tc.patch, string(patch), "Apply changed its patch argument")
			if tc.err != nil {
				e := requireClass(t, err, tc.err)
				assert.Equal(t, tc.op, e.Op, "Error.Op of %v", err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// The examples of RFC 6902 Appendix A, in order. The expected documents are
// written compact with sorted keys, which is what Apply produces.
func TestApplyRFC6902AppendixA(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "A.1 adding an object member",
			doc:   `{"foo":"bar"}`,
			patch: `[{"op":"add","path":"/baz","value":"qux"}]`,
			want:  `{"baz":"qux","foo":"bar"}`},
		{name: "A.2 adding an array element",
			doc:   `{"foo":["bar","baz"]}`,
			patch: `[{"op":"add","path":"/foo/1","value":"qux"}]`,
			want:  `{"foo":["bar","qux","baz"]}`},
		{name: "A.3 removing an object member",
			doc:   `{"baz":"qux","foo":"bar"}`,
			patch: `[{"op":"remove","path":"/baz"}]`,
			want:  `{"foo":"bar"}`},
		{name: "A.4 removing an array element",
			doc:   `{"foo":["bar","qux","baz"]}`,
			patch: `[{"op":"remove","path":"/foo/1"}]`,
			want:  `{"foo":["bar","baz"]}`},
		{name: "A.5 replacing a value",
			doc:   `{"baz":"qux","foo":"bar"}`,
			patch: `[{"op":"replace","path":"/baz","value":"boo"}]`,
			want:  `{"baz":"boo","foo":"bar"}`},
		{name: "A.6 moving a value",
			doc:   `{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`,
			patch: `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`,
			want:  `{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`},
		{name: "A.7 moving an array element",
			doc:   `{"foo":["all","grass","cows","eat"]}`,
			patch: `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`,
			want:  `{"foo":["all","cows","eat","grass"]}`},
		{name: "A.8 testing a value: success",
			doc:   `{"baz":"qux","foo":["a",2,"c"]}`,
			patch: `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`,
			want:  `{"baz":"qux","foo":["a",2,"c"]}`},
		{name: "A.9 testing a value: error",
			doc:   `{"baz":"qux"}`,
			patch: `[{"op":"test","path":"/baz","value":"bar"}]`,
			err:   ErrFailed, op: 0},
		{name: "A.10 adding a nested member object",
			doc:   `{"foo":"bar"}`,
			patch: `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`,
			want:  `{"child":{"grandchild":{}},"foo":"bar"}`},
		{name: "A.11 ignoring unrecognized elements",
			doc:   `{"foo":"bar"}`,
			patch: `[{"op":"add","path":"/baz","value":"qux","xyz":123}]`,
			want:  `{"baz":"qux","foo":"bar"}`},
		{name: "A.12 adding to a nonexistent target",
			doc:   `{"foo":"bar"}`,
			patch: `[{"op":"add","path":"/baz/bat","value":"qux"}]`,
			err:   ErrFailed, op: 0},
		{name: "A.13 invalid JSON patch document (duplicate op)",
			doc:   `{"foo":"bar"}`,
			patch: `[{"op":"add","path":"/baz","value":"qux","op":"remove"}]`,
			err:   ErrMalformed, op: -1},
		{name: "A.14 tilde escape ordering",
			doc:   `{"/":9,"~1":10}`,
			patch: `[{"op":"test","path":"/~01","value":10}]`,
			want:  `{"/":9,"~1":10}`},
		{name: "A.15 comparing strings and numbers",
			doc:   `{"/":9,"~1":10}`,
			patch: `[{"op":"test","path":"/~01","value":"10"}]`,
			err:   ErrFailed, op: 0},
		{name: "A.16 adding an array value",
			doc:   `{"foo":["bar"]}`,
			patch: `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`,
			want:  `{"foo":["bar",["abc","def"]]}`},
	}, Options{})
}

// The pointer examples of RFC 6901 section 5, each checked with a test operation
// against the value the RFC says the pointer refers to.
func TestApplyRFC6901Pointers(t *testing.T) {
	const doc = `{"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,"i\\j":5,"k\"l":6," ":7,"m~n":8}`
	cases := []struct{ ptr, value string }{
		{"", doc},
		{"/foo", `["bar","baz"]`},
		{"/foo/0", `"bar"`},
		{"/", `0`},
		{"/a~1b", `1`},
		{"/c%d", `2`},
		{"/e^f", `3`},
		{"/g|h", `4`},
		{`/i\\j`, `5`},
		{`/k\"l`, `6`},
		{"/ ", `7`},
		{"/m~0n", `8`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("pointer %s refers to %s", tc.ptr, tc.value), func(t *testing.T) {
			patch := fmt.Sprintf(`[{"op":"test","path":"%s","value":%s}]`, tc.ptr, tc.value)
			_, err := Apply([]byte(doc), []byte(patch), Options{})
			require.NoError(t, err)
		})
	}
}

func TestApplySemantics(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "empty patch re-encodes the document compact and sorted",
			doc: ` { "b" : 1 , "a" : [ 1 , 2 ] } `, patch: `[]`, want: `{"a":[1,2],"b":1}`},
		{name: "add replaces an existing member",
			doc: `{"a":1}`, patch: `[{"op":"add","path":"/a","value":2}]`, want: `{"a":2}`},
		{name: "add dash appends",
			doc: `{"a":[1]}`, patch: `[{"op":"add","path":"/a/-","value":2}]`, want: `{"a":[1,2]}`},
		{name: "add at index equal to the length appends",
			doc: `{"a":[1]}`, patch: `[{"op":"add","path":"/a/1","value":2}]`, want: `{"a":[1,2]}`},
		{name: "add at index 0 prepends",
			doc: `{"a":[1]}`, patch: `[{"op":"add","path":"/a/0","value":0}]`, want: `{"a":[0,1]}`},
		{name: "add a null value",
			doc: `{}`, patch: `[{"op":"add","path":"/a","value":null}]`, want: `{"a":null}`},
		{name: "add with empty key",
			doc: `{}`, patch: `[{"op":"add","path":"/","value":1}]`, want: `{"":1}`},
		{name: "add to the root replaces the document",
			doc: `{"a":1}`, patch: `[{"op":"add","path":"","value":{"b":2}}]`, want: `{"b":2}`},
		{name: "replace the root",
			doc: `{"a":1}`, patch: `[{"op":"replace","path":"","value":[1]}]`, want: `[1]`},
		{name: "replace an array element",
			doc: `[1,2,3]`, patch: `[{"op":"replace","path":"/1","value":"x"}]`, want: `[1,"x",3]`},
		{name: "remove from the front half of an array",
			doc: `[0,1,2,3,4,5]`, patch: `[{"op":"remove","path":"/2"},{"op":"remove","path":"/0"},{"op":"add","path":"/0","value":9}]`,
			want: `[9,1,3,4,5]`},
		{name: "remove from the back half of an array",
			doc: `[0,1,2,3,4,5]`, patch: `[{"op":"remove","path":"/3"},{"op":"remove","path":"/4"},{"op":"add","path":"/-","value":9}]`,
			want: `[0,1,2,4,9]`},
		{name: "remove the only element",
			doc: `[0]`, patch: `[{"op":"remove","path":"/0"},{"op":"add","path":"/-","value":1}]`, want: `[1]`},
		{name: "remove the last array element",
			doc: `[1,2,3]`, patch: `[{"op":"remove","path":"/2"}]`, want: `[1,2]`},
		{name: "move to the root",
			doc: `{"a":{"b":1}}`, patch: `[{"op":"move","from":"/a","path":""}]`, want: `{"b":1}`},
		{name: "move onto itself does nothing",
			doc: `{"a":{"b":1}}`, patch: `[{"op":"move","from":"/a","path":"/a"}]`, want: `{"a":{"b":1}}`},
		{name: "move root onto itself does nothing",
			doc: `{"a":1}`, patch: `[{"op":"move","from":"","path":""}]`, want: `{"a":1}`},
		{name: "move array element to the end with dash",
			doc: `[1,2,3]`, patch: `[{"op":"move","from":"/0","path":"/-"}]`, want: `[2,3,1]`},
		{name: "move into a sibling with a common prefix",
			doc: `{"a":1,"ab":{}}`, patch: `[{"op":"move","from":"/a","path":"/ab/a"}]`, want: `{"ab":{"a":1}}`},
		{name: "copy the root into a child",
			doc: `{"a":1}`, patch: `[{"op":"copy","from":"","path":"/b"}]`, want: `{"a":1,"b":{"a":1}}`},
		{name: "copy is deep: changing the copy keeps the original",
			doc: `{"a":{"x":[1]}}`,
			patch: `[{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/x/-","value":2},` +
				`{"op":"replace","path":"/b/y","value":0,"comment":"fails"}]`,
			err: ErrFailed, op: 2},
		{name: "copy then change the copy",
			doc:   `{"a":{"x":[1]}}`,
			patch: `[{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/x/-","value":2}]`,
			want:  `{"a":{"x":[1]},"b":{"x":[1,2]}}`},
		{name: "copy an array element into the same array",
			doc: `[[1],2]`, patch: `[{"op":"copy","from":"/0","path":"/-"},{"op":"add","path":"/2/-","value":3}]`,
			want: `[[1],2,[1,3]]`},
		{name: "operations apply in order",
			doc: `{}`, patch: `[{"op":"add","path":"/a","value":[]},{"op":"add","path":"/a/-","value":1},` +
				`{"op":"test","path":"/a","value":[1]},{"op":"remove","path":"/a/0"}]`,
			want: `{"a":[]}`},
		{name: "numbers round-trip exactly",
			doc:   `{"big":123456789012345678901234567890,"dec":1.10,"exp":1E400,"neg":-0}`,
			patch: `[{"op":"add","path":"/max","value":18446744073709551617}]`,
			want:  `{"big":123456789012345678901234567890,"dec":1.10,"exp":1E400,"max":18446744073709551617,"neg":-0}`},
		{name: "HTML characters are not escaped",
			doc: `{}`, patch: `[{"op":"add","path":"/a","value":"<b>&amp;</b>"}]`, want: `{"a":"<b>&amp;</b>"}`},
		{name: "string escapes are decoded and re-encoded",
			doc: `{"a":"\u00e9\n\"\\\/"}`, patch: `[]`, want: `{"a":"é\n\"\\/"}`},
		{name: "keys sort bytewise",
			doc: `{"é":1,"z":2,"A":3,"a":4}`, patch: `[]`, want: `{"A":3,"a":4,"z":2,"é":1}`},
		{name: "the document may be an array",
			doc: `[1,2]`, patch: `[{"op":"add","path":"/-","value":3}]`, want: `[1,2,3]`},
		{name: "the document may be a scalar",
			doc: `"x"`, patch: `[{"op":"test","path":"","value":"x"}]`, want: `"x"`},
		{name: "a numeric key addresses an object member",
			doc: `{"0":"a"}`, patch: `[{"op":"replace","path":"/0","value":"b"}]`, want: `{"0":"b"}`},
		{name: "a leading-zero key addresses an object member",
			doc: `{"01":"a"}`, patch: `[{"op":"remove","path":"/01"}]`, want: `{}`},
		{name: "unknown members are ignored, even from on add",
			doc: `{}`, patch: `[{"op":"add","path":"/a","value":1,"from":7}]`, want: `{"a":1}`},
	}, Options{})
}

func TestApplyTestOperationComparesSemantically(t *testing.T) {
	cases := []struct {
		name      string
		doc, want string
		equal     bool
	}{
		{"integer equals decimal with zero fraction", `1`, `1.0`, true},
		{"integer equals exponent form", `100`, `1e2`, true},
		{"upper-case and signed exponents", `0.1E+1`, `10e-1`, true},
		{"zero equals negative zero", `0`, `-0.0e5`, true},
		{"different numbers differ", `1`, `1.0000000000000000000001`, false},
		{"large integers compare exactly", `9007199254740993`, `9007199254740992`, false},
		{"huge exponents compare without expanding", `1e1000000000`, `10e999999999`, true},
		{"huge exponents that differ", `1e1000000000`, `1e1000000001`, false},
		{"negative differs from positive", `-1`, `1`, false},
		{"objects ignore member order", `{"a":1,"b":[1,{"c":2}]}`, `{"b":[1,{"c":2.0}],"a":1}`, true},
		{"objects with an extra member differ", `{"a":1}`, `{"a":1,"b":null}`, false},
		{"arrays keep order", `[1,2]`, `[2,1]`, false},
		{"arrays of different length differ", `[1]`, `[1,1]`, false},
		{"string differs from number", `"1"`, `1`, false},
		{"null equals null", `null`, `null`, true},
		{"null differs from false", `null`, `false`, false},
		{"true differs from false", `true`, `false`, false},
		{"strings compare after unescaping", `"\u0041"`, `"A"`, true},
		{"empty object differs from empty array", `{}`, `[]`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"v":` + tc.doc + `}`
			patch := `[{"op":"test","path":"/v","value":` + tc.want + `}]`
			_, err := Apply([]byte(doc), []byte(patch), Options{})
			if tc.equal {
				require.NoError(t, err)
			} else {
				requireClass(t, err, ErrFailed)
			}
		})
	}
}

func TestApplyErrorClasses(t *testing.T) {
	const doc = `{"foo":["bar"],"s":"str","o":{"k":1}}`
	malformed := func(name, patch string, op int) applyCase {
		return applyCase{name: "malformed: " + name, doc: doc, patch: patch, err: ErrMalformed, op: op}
	}
	failed := func(name, patch string, op int) applyCase {
		return applyCase{name: "failed: " + name, doc: doc, patch: patch, err: ErrFailed, op: op}
	}
	runApplyCases(t, []applyCase{
		malformed("patch is empty", ``, -1),
		malformed("patch is not JSON", `[{`, -1),
		malformed("patch has trailing data", `[] []`, -1),
		malformed("patch has trailing garbage", `[]x`, -1),
		malformed("patch has a trailing comma", `[{"op":"remove","path":"/s"},]`, -1),
		malformed("patch is an object", `{"op":"remove","path":"/s"}`, -1),
		malformed("patch is null", `null`, -1),
		malformed("operation is not an object", `[{"op":"remove","path":"/s"},1]`, 1),
		malformed("missing op", `[{"path":"/s"}]`, 0),
		malformed("op is not a string", `[{"op":1,"path":"/s"}]`, 0),
		malformed("unknown op", `[{"op":"merge","path":"/s"}]`, 0),
		malformed("op is case-sensitive", `[{"op":"Add","path":"/s","value":1}]`, 0),
		malformed("missing path", `[{"op":"remove"}]`, 0),
		malformed("path is not a string", `[{"op":"remove","path":["s"]}]`, 0),
		malformed("path is null", `[{"op":"remove","path":null}]`, 0),
		malformed("path without leading slash", `[{"op":"remove","path":"s"}]`, 0),
		malformed("path with a bad escape", `[{"op":"remove","path":"/s~2"}]`, 0),
		malformed("path with a trailing tilde", `[{"op":"remove","path":"/s~"}]`, 0),
		malformed("add without value", `[{"op":"add","path":"/x"}]`, 0),
		malformed("replace without value", `[{"op":"replace","path":"/s"}]`, 0),
		malformed("test without value", `[{"op":"test","path":"/s"}]`, 0),
		malformed("move without from", `[{"op":"move","path":"/x"}]`, 0),
		malformed("copy without from", `[{"op":"copy","path":"/x"}]`, 0),
		malformed("from is not a string", `[{"op":"copy","from":1,"path":"/x"}]`, 0),
		malformed("from is not a pointer", `[{"op":"copy","from":"s","path":"/x"}]`, 0),
		malformed("move into its own child", `[{"op":"move","from":"/o","path":"/o/k2"}]`, 0),
		malformed("move the root into a child", `[{"op":"move","from":"","path":"/x"}]`, 0),
		malformed("duplicate key in a value", `[{"op":"add","path":"/x","value":{"a":1,"a":2}}]`, -1),
		malformed("duplicate key spelled with an escape", `[{"op":"add","path":"/x","value":{"a":1,"\u0061":2}}]`, -1),
		malformed("duplicate path", `[{"op":"remove","path":"/s","path":"/o"}]`, -1),
		malformed("a later malformed operation wins over an earlier failing one",
			`[{"op":"test","path":"/s","value":0},{"op":"bogus","path":""}]`, 1),
		{name: "malformed: document is not JSON", doc: `{"a":`, patch: `[]`, err: ErrMalformed, op: -1},
		{name: "malformed: document is empty", doc: ``, patch: `[]`, err: ErrMalformed, op: -1},
		{name: "malformed: document has duplicate keys", doc: `{"a":1,"a":1}`, patch: `[]`, err: ErrMalformed, op: -1},
		{name: "malformed: document has trailing data", doc: `{}{}`, patch: `[]`, err: ErrMalformed, op: -1},

		failed("remove a missing member", `[{"op":"remove","path":"/x"}]`, 0),
		failed("replace a missing member", `[{"op":"replace","path":"/x","value":1}]`, 0),
		failed("add under a missing parent", `[{"op":"add","path":"/x/y","value":1}]`, 0),
		failed("add under a string", `[{"op":"add","path":"/s/y","value":1}]`, 0),
		failed("look up inside a string", `[{"op":"test","path":"/s/0","value":1}]`, 0),
		failed("add beyond the end of an array", `[{"op":"add","path":"/foo/2","value":1}]`, 0),
		failed("add at a leading-zero index", `[{"op":"add","path":"/foo/01","value":1}]`, 0),
		failed("add at a negative index", `[{"op":"add","path":"/foo/-1","value":1}]`, 0),
		failed("add at a non-numeric index", `[{"op":"add","path":"/foo/x","value":1}]`, 0),
		failed("add at an empty index", `[{"op":"add","path":"/foo/","value":1}]`, 0),
		failed("add at a huge index", `[{"op":"add","path":"/foo/99999999999999999999999","value":1}]`, 0),
		failed("remove at index equal to the length", `[{"op":"remove","path":"/foo/1"}]`, 0),
		failed("remove dash", `[{"op":"remove","path":"/foo/-"}]`, 0),
		failed("replace dash", `[{"op":"replace","path":"/foo/-","value":1}]`, 0),
		failed("test dash", `[{"op":"test","path":"/foo/-","value":1}]`, 0),
		failed("copy from dash", `[{"op":"copy","from":"/foo/-","path":"/x"}]`, 0),
		failed("remove the whole document", `[{"op":"remove","path":""}]`, 0),
		failed("move from a missing member", `[{"op":"move","from":"/x","path":"/y"}]`, 0),
		failed("move a missing member onto itself", `[{"op":"move","from":"/x","path":"/x"}]`, 0),
		failed("move to a missing parent", `[{"op":"move","from":"/s","path":"/x/y"}]`, 0),
		failed("copy from a missing member", `[{"op":"copy","from":"/x","path":"/y"}]`, 0),
		failed("test a missing member", `[{"op":"test","path":"/x","value":null}]`, 0),
		failed("the index of the failing operation is reported",
			`[{"op":"test","path":"/s","value":"str"},{"op":"remove","path":"/s"},{"op":"remove","path":"/s"}]`, 2),
	}, Options{})
}

func TestApplyLimits(t *testing.T) {
	t.Run("at most MaxOperations operations", func(t *testing.T) {
		op := `{"op":"test","path":"","value":{}}`
		_, err := Apply([]byte(`{}`), []byte("["+op+","+op+"]"), Options{MaxOperations: 2})
		require.NoError(t, err)
		_, err = Apply([]byte(`{}`), []byte("["+op+","+op+","+op+"]"), Options{MaxOperations: 2})
		e := requireClass(t, err, ErrTooLarge)
		assert.Equal(t, -1, e.Op)
	})
	t.Run("default is 10000 operations", func(t *testing.T) {
		ops := func(n int) []byte {
			return []byte("[" + strings.Repeat(`{"op":"test","path":"","value":{}},`, n-1) + `{"op":"test","path":"","value":{}}]`)
		}
		_, err := Apply([]byte(`{}`), ops(DefaultMaxOperations), Options{})
		require.NoError(t, err)
		_, err = Apply([]byte(`{}`), ops(DefaultMaxOperations+1), Options{})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("too many operations wins over malformed operations", func(t *testing.T) {
		_, err := Apply([]byte(`{}`), []byte(`[1,2,3]`), Options{MaxOperations: 2})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("copy budget counts copied bytes", func(t *testing.T) {
		// "0123456789" encodes to 12 bytes.
		doc := []byte(`{"a":"0123456789"}`)
		patch := []byte(`[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"}]`)
		got, err := Apply(doc, patch, Options{MaxCopyBytes: 24})
		require.NoError(t, err)
		assert.Equal(t, `{"a":"0123456789","b":"0123456789","c":"0123456789"}`, string(got))
		_, err = Apply(doc, patch, Options{MaxCopyBytes: 23})
		e := requireClass(t, err, ErrTooLarge)
		assert.Equal(t, 1, e.Op)
		assert.Equal(t, "/c", e.Path)
	})
	t.Run("copy budget counts added values", func(t *testing.T) {
		patch := []byte(`[{"op":"add","path":"/a","value":"0123456789"}]`)
		_, err := Apply([]byte(`{}`), patch, Options{MaxCopyBytes: 12})
		require.NoError(t, err)
		_, err = Apply([]byte(`{}`), patch, Options{MaxCopyBytes: 11})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("copy budget counts moved values", func(t *testing.T) {
		patch := []byte(`[{"op":"move","from":"/a","path":"/b"},{"op":"move","from":"/b","path":"/a"}]`)
		doc := []byte(`{"a":"0123456789"}`)
		_, err := Apply(doc, patch, Options{MaxCopyBytes: 24})
		require.NoError(t, err)
		_, err = Apply(doc, patch, Options{MaxCopyBytes: 23})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("replace and test do not use the copy budget", func(t *testing.T) {
		patch := []byte(`[{"op":"replace","path":"/a","value":"0123456789"},{"op":"test","path":"/a","value":"0123456789"}]`)
		_, err := Apply([]byte(`{"a":1}`), patch, Options{MaxCopyBytes: 1})
		require.NoError(t, err)
	})
	t.Run("doubling a document by copies stops at the default 3 MiB", func(t *testing.T) {
		// Each copy doubles /a; 40 copies would make 2^40 elements.
		var b strings.Builder
		b.WriteString(`[{"op":"add","path":"/a","value":["` + strings.Repeat("x", 1000) + `"]}`)
		for range 40 {
			b.WriteString(`,{"op":"copy","from":"/a","path":"/a/-"}`)
		}
		b.WriteString(`]`)
		_, err := Apply([]byte(`{}`), []byte(b.String()), Options{})
		e := requireClass(t, err, ErrTooLarge)
		assert.Greater(t, e.Op, 10)
		assert.Less(t, e.Op, 20)
	})
	t.Run("array inserts and removals may shift at most maxArrayShift elements", func(t *testing.T) {
		lowerMaxArrayShift(t, 100)
		doc := []byte(`[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`)
		// On 21 elements, removing /10 shifts the 10 after it; on the 20 left,
		// inserting at /10 shifts 10 again.
		var pairs []string
		for range 5 {
			pairs = append(pairs, `{"op":"remove","path":"/10"}`, `{"op":"add","path":"/10","value":0}`)
		}
		_, err := Apply(doc, opList(pairs...), Options{})
		require.NoError(t, err, "exactly at the limit")
		_, err = Apply(doc, opList(append(pairs, `{"op":"remove","path":"/10"}`)...), Options{})
		e := requireClass(t, err, ErrTooLarge)
		assert.Equal(t, 10, e.Op)
		assert.Equal(t, "/10", e.Path)
		// 80 + 10 shifts, then a move: its removal at the front shifts nothing, its
		// insertion at /5 of 19 elements shifts 14.
		_, err = Apply(doc, opList(append(pairs[:8:8], `{"op":"remove","path":"/10"}`,
			`{"op":"move","from":"/0","path":"/5"}`)...), Options{})
		e = requireClass(t, err, ErrTooLarge)
		assert.Equal(t, 9, e.Op, "a move counts its insertion")
	})
	t.Run("removals at the front of a large array shift nothing", func(t *testing.T) {
		lowerMaxArrayShift(t, 0)
		doc := []byte("[" + strings.Repeat("0,", 19_999) + "1]")
		patch := []byte("[" + strings.Repeat(`{"op":"remove","path":"/0"},`, DefaultMaxOperations) + `{"op":"test","path":"/9999","value":1}]`)
		_, err := Apply(doc, patch, Options{MaxOperations: DefaultMaxOperations + 1})
		require.NoError(t, err)
	})
	t.Run("the default shift limit allows ordinary patches on large arrays", func(t *testing.T) {
		doc := []byte("[" + strings.Repeat("0,", 9_999) + "0]")
		patch := []byte("[" + strings.Repeat(`{"op":"add","path":"/0","value":1},`, 999) + `{"op":"add","path":"/0","value":1}]`)
		_, err := Apply(doc, patch, Options{})
		require.NoError(t, err)
	})
	t.Run("nesting deeper than MaxDepth in the patch", func(t *testing.T) {
		deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
		_, err := Apply([]byte(`{}`), []byte(`[{"op":"add","path":"/a","value":`+deep+`}]`), Options{})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("nesting deeper than MaxDepth in the document", func(t *testing.T) {
		deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
		_, err := Apply([]byte(deep), []byte(`[]`), Options{})
		requireClass(t, err, ErrTooLarge)
	})
	t.Run("nesting exactly MaxDepth is accepted", func(t *testing.T) {
		deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
		got, err := Apply([]byte(deep), []byte(`[]`), Options{})
		require.NoError(t, err)
		assert.Equal(t, deep, string(got))
	})
	t.Run("an operation may not nest the result deeper than MaxDepth", func(t *testing.T) {
		half := MaxDepth/2 + 1
		nested := strings.Repeat("[", half) + strings.Repeat("]", half)
		ptr := strings.Repeat("/0", half-1)
		// doc is half deep; copying it into its innermost array doubles the depth.
		patch := `[{"op":"copy","from":"","path":"` + ptr + `/-"}]`
		_, err := Apply([]byte(nested), []byte(patch), Options{})
		requireClass(t, err, ErrTooLarge)
		patch = `[{"op":"add","path":"` + ptr + `/-","value":` + nested + `}]`
		_, err = Apply([]byte(nested), []byte(patch), Options{})
		requireClass(t, err, ErrTooLarge)
		patch = `[{"op":"replace","path":"` + ptr + `","value":[` + nested + `]}]`
		_, err = Apply([]byte(nested), []byte(patch), Options{})
		requireClass(t, err, ErrTooLarge)
	})
}

func opList(ops ...string) []byte { return []byte("[" + strings.Join(ops, ",") + "]") }

func lowerMaxArrayShift(t *testing.T, n int64) {
	old := maxArrayShift
	maxArrayShift = n
	t.Cleanup(func() { maxArrayShift = old })
}

func TestApplyIsDeterministic(t *testing.T) {
	doc := []byte(`{"z":{"b":1,"a":2,"c":{"y":1,"x":[3,{"q":1,"p":2}]}},"m":null,"a":true}`)
	patch := []byte(`[{"op":"copy","from":"/z","path":"/k"},{"op":"add","path":"/k/d","value":{"s":1,"r":2}}]`)
	first, err := Apply(doc, patch, Options{})
	require.NoError(t, err)
	for range 50 {
		got, err := Apply(doc, patch, Options{})
		require.NoError(t, err)
		require.Equal(t, string(first), string(got))
	}
	assert.True(t, json.Valid(first))
}

func TestErrorText(t *testing.T) {
	t.Run("names the operation, the path and the class", func(t *testing.T) {
		_, err := Apply([]byte(`{"a":{}}`), []byte(`[{"op":"test","path":"/a","value":{}},{"op":"remove","path":"/a/b"}]`), Options{})
		require.EqualError(t, err, `jsonpatch: operation 1 (path "/a/b"): cannot apply: remove: member "b" not found`)
	})
	t.Run("names the pointer of a duplicate key", func(t *testing.T) {
		_, err := MergePatch([]byte(`{}`), []byte(`{"a":{"b~/":{"c":1,"c":2}}}`))
		require.EqualError(t, err, `jsonpatch: at "/a/b~0~1/c": malformed: merge patch: duplicate key "c"`)
	})
	t.Run("reports invalid JSON with its offset", func(t *testing.T) {
		_, err := Apply([]byte(`{}`), []byte(`[1,`), Options{})
		e := requireClass(t, err, ErrMalformed)
		assert.Equal(t, `jsonpatch: at "/1": malformed: patch is not valid JSON: unexpected end of input, expecting a value (offset 3)`, e.Error())
		assert.Equal(t, -1, e.Op)
	})
	t.Run("a zero Error still prints", func(t *testing.T) {
		assert.Equal(t, "jsonpatch: unknown error", (&Error{Op: -1}).Error())
		assert.Nil(t, (&Error{}).Unwrap())
	})
	t.Run("from failures report the from pointer", func(t *testing.T) {
		_, err := Apply([]byte(`{}`), []byte(`[{"op":"copy","from":"/x","path":"/y"}]`), Options{})
		e := requireClass(t, err, ErrFailed)
		assert.Equal(t, "/x", e.Path)
		assert.Contains(t, e.Error(), `"from"`)
	})
}

func TestNumbersEqual(t *testing.T) {
	cases := []struct {
		a, b  string
		equal bool
	}{
		{"0", "0.000", true},
		{"-0", "0", true},
		{"12.5", "125e-1", true},
		{"12.5", "1.25E+1", true},
		{"0.001", "1e-3", true},
		{"100", "1e2", true},
		{"100", "1e3", false},
		{"1", "-1", false},
		{"123", "132", false},
	}
	for _, tc := range cases {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			assert.Equal(t, tc.equal, numbersEqual(json.Number(tc.a), json.Number(tc.b)))
			assert.Equal(t, tc.equal, numbersEqual(json.Number(tc.b), json.Number(tc.a)))
		})
	}
	t.Run("text that is not a number is never equal to a different text", func(t *testing.T) {
		assert.False(t, numbersEqual("x", "1"))
		assert.False(t, numbersEqual("1e", "1"))
	})
}

func TestPointers(t *testing.T) {
	for _, ptr := range []string{"", "/", "//", "/a~0b~1c", "/~01", "/a/0/-"} {
		t.Run("round-trips "+ptr, func(t *testing.T) {
			toks, ok := parsePointer(ptr)
			require.True(t, ok)
			assert.Equal(t, ptr, formatPointer(toks))
		})
	}
	t.Run("~01 is ~1, not /", func(t *testing.T) {
		toks, ok := parsePointer("/~01")
		require.True(t, ok)
		assert.Equal(t, []string{"~1"}, toks)
	})
	for _, bad := range []string{"a", "#/a", "/~", "/~2", "/a~b"} {
		t.Run("refuses "+bad, func(t *testing.T) {
			_, ok := parsePointer(bad)
			assert.False(t, ok)
		})
	}
}

func TestMeasureIsCompactEncodingSize(t *testing.T) {
	for _, v := range []string{`"a\"b\\c\n"`, `12.50`, `true`, `false`, `null`, `[]`, `{}`, `[1,"x",null]`, `{"a":1,"b":[true]}`} {
		t.Run(v, func(t *testing.T) {
			x, err := decode([]byte(v), "value")
			require.NoError(t, err)
			size, _, over := measure(x, 1<<20)
			require.False(t, over)
			enc, err := encode(x)
			require.NoError(t, err)
			// Exact for these; the separators of objects are approximate in general.
			assert.InDelta(t, len(enc), size, 1)
		})
	}
	t.Run("depth counts containers", func(t *testing.T) {
		for v, want := range map[string]int{`1`: 0, `[]`: 1, `[[1]]`: 2, `{"a":[{}]}`: 3} {
			x, err := decode([]byte(v), "value")
			require.NoError(t, err)
			_, depth, _ := measure(x, 1<<20)
			assert.Equal(t, want, depth, v)
		}
	})
}

func TestApplyDoesNotAliasPatchValues(t *testing.T) {
	// The same patch bytes applied twice must give independent results.
	patch := []byte(`[{"op":"add","path":"/a","value":{"x":[1]}},{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/a/x/-","value":2}]`)
	got, err := Apply([]byte(`{}`), patch, Options{})
	require.NoError(t, err)
	assert.Equal(t, `{"a":{"x":[1,2]},"b":{"x":[1]}}`, string(got))
	again, err := Apply([]byte(`{}`), patch, Options{})
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, again))
}
