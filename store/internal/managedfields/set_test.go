package managedfields

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, s string) Set {
	t.Helper()
	set, err := ParseFieldsV1(json.RawMessage(s))
	require.NoError(t, err)
	return set
}

func TestFieldsV1Encoding(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		w    Write
		want string
	}{
		{
			name: "nested object: labels map, spec fields, lists atomic",
			obj: `{"apiVersion":"management.service/v1","kind":"DirectClusterEndpointToken",
				"metadata":{"name":"t","namespace":"ns","uid":"u1","resourceVersion":"7","generation":2,
					"creationTimestamp":"2024-01-01T00:00:00Z","labels":{"app":"web","tier":"front"},
					"finalizers":["a","b"]},
				"spec":{"ttl":3600,"scope":{"allowServiceCli":true,
					"projects":[{"project":"p1"},{"project":"*"}]}}}`,
			want: `{"f:metadata":{"f:finalizers":{},"f:labels":{".":{},"f:app":{},"f:tier":{}}},` +
				`"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{},"f:projects":{}},"f:ttl":{}}}`,
		},
		{
			name: "server-owned metadata, apiVersion, kind and managedFields are never tracked",
			obj: `{"apiVersion":"v1","kind":"K","metadata":{"name":"a","generateName":"a-","namespace":"n",
				"uid":"u","resourceVersion":"1","generation":1,"creationTimestamp":null,
				"deletionTimestamp":"2024-01-01T00:00:00Z","deletionGracePeriodSeconds":30,
				"managedFields":[{"manager":"m","operation":"Update"}]}}`,
			want: `{"f:metadata":{"f:generateName":{}}}`,
		},
		{
			name: "empty objects, null and scalars of every kind are leaves",
			obj:  `{"spec":{"e":{},"n":null,"b":false,"s":"","f":1.5,"l":[]}}`,
			want: `{"f:spec":{".":{},"f:b":{},"f:e":{},"f:f":{},"f:l":{},"f:n":{},"f:s":{}}}`,
		},
		{
			name: "status is tracked on a kind without a status subresource",
			obj:  `{"spec":{"a":1},"status":{"phase":"Ready"}}`,
			want: `{"f:spec":{".":{},"f:a":{}},"f:status":{".":{},"f:phase":{}}}`,
		},
		{
			name: "status is not tracked on the main resource of a kind with a status subresource",
			obj:  `{"spec":{"a":1},"status":{"phase":"Ready"}}`,
			w:    Write{StatusSubresource: true},
			want: `{"f:spec":{".":{},"f:a":{}}}`,
		},
		{
			name: "a status write tracks status only",
			obj:  `{"metadata":{"labels":{"a":"b"}},"spec":{"a":1},"status":{"phase":"Ready"}}`,
			w:    Write{Subresource: "status", StatusSubresource: true},
			want: `{"f:status":{".":{},"f:phase":{}}}`,
		},
		{
			name: "keys needing JSON escapes",
			obj:  `{"metadata":{"annotations":{"a\"b":"1","<x>":"2","ü":"3"}}}`,
			want: `{"f:metadata":{"f:annotations":{".":{},"f:\u003cx\u003e":{},"f:a\"b":{},"f:ü":{}}}}`,
		},
		{
			name: "an empty object tracks nothing",
			obj:  `{}`,
			want: `{}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromObject([]byte(tc.obj), tc.w)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(s.FieldsV1()))
			back, err := ParseFieldsV1(s.FieldsV1())
			require.NoError(t, err)
			assert.True(t, back.Equal(s), "round trip: %s", back)
		})
	}
}

func TestFromObjectRejectsNonObjects(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"a":1} {}`, `{"a":`} {
		t.Run(in, func(t *testing.T) {
			_, err := FromObject([]byte(in), Write{})
			assert.Error(t, err)
		})
	}
}

func TestParseFieldsV1(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical encoding
	}{
		{name: "empty input is the empty set", in: ``, want: `{}`},
		{name: "null is the empty set", in: `null`, want: `{}`},
		{name: "empty object is the empty set", in: ` {} `, want: `{}`},
		{name: "a dot at the top level is ignored", in: `{".":{}}`, want: `{}`},
		{name: "leaf", in: `{"f:spec":{"f:ttl":{}}}`, want: `{"f:spec":{"f:ttl":{}}}`},
		{name: "dot alone is a plain member", in: `{"f:a":{".":{}}}`, want: `{"f:a":{}}`},
		{name: "dot with children", in: `{"f:a":{"f:b":{},".":{}}}`, want: `{"f:a":{".":{},"f:b":{}}}`},
		{
			name: "whitespace and key order are normalised",
			in:   "{ \"f:z\" : {}, \"f:a\" : { \"f:c\":{}, \"f:b\":{} } }",
			want: `{"f:a":{"f:b":{},"f:c":{}},"f:z":{}}`,
		},
		{
			name: "element kinds are ordered f, k, v, i and indexes numerically",
			in:   `{"i:10":{},"i:9":{},"v:\"x\"":{},"k:{\"name\":\"a\"}":{},"f:z":{}}`,
			want: `{"f:z":{},"k:{\"name\":\"a\"}":{},"v:\"x\"":{},"i:9":{},"i:10":{}}`,
		},
		{
			name: "k, v and i keys are canonicalised and merged",
			in:   `{"i:007":{"f:a":{}},"i:7":{"f:b":{}},"k:{ \"b\":1, \"a\":2 }":{},"v:[1, 2]":{}}`,
			want: `{"k:{\"a\":2,\"b\":1}":{},"v:[1,2]":{},"i:7":{"f:a":{},"f:b":{}}}`,
		},
		{
			name: "kubernetes-style entry",
			in: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":` +
				`{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}`,
			want: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":` +
				`{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.in)
			assert.Equal(t, tc.want, string(s.FieldsV1()))
			assert.True(t, mustParse(t, tc.want).Equal(s))
		})
	}
}

func TestParseFieldsV1Errors(t *testing.T) {
	tests := []struct {
		name, in, msg string
	}{
		{name: "not JSON", in: `{"f:a":`, msg: "invalid JSON"},
		{name: "trailing data", in: `{} {}`, msg: "invalid JSON"},
		{name: "not an object", in: `["f:a"]`, msg: "must be a JSON object, not an array"},
		{name: "a value that is not an object", in: `{"f:spec":{"f:ttl":1}}`, msg: `at f:spec: the value of "f:ttl" must be a JSON object, not a number`},
		{name: "dot with content", in: `{"f:a":{".":{"f:b":{}}}}`, msg: `at f:a: "." must map to {}`},
		{name: "unknown prefix", in: `{"x:a":{}}`, msg: `unknown path element "x:a"`},
		{name: "short key", in: `{"f":{}}`, msg: `unknown path element "f"`},
		{name: "bad index", in: `{"f:a":{"i:one":{}}}`, msg: `at f:a: path element "i:one": the index is not an integer`},
		{name: "bad key JSON", in: `{"k:{":{}}`, msg: `path element "k:{": invalid JSON`},
		{name: "key that is not an object", in: `{"k:1":{}}`, msg: `the key must be a JSON object`},
		{name: "bad value JSON", in: `{"v:1 2":{}}`, msg: `path element "v:1 2": invalid JSON`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFieldsV1(json.RawMessage(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestSetOperations(t *testing.T) {
	a := mustParse(t, `{"f:spec":{".":{},"f:a":{},"f:b":{"f:c":{}}},"f:x":{}}`)
	b := mustParse(t, `{"f:spec":{"f:b":{},"f:d":{}}}`)

	t.Run("union holds the paths of both", func(t *testing.T) {
		assert.Equal(t, `{"f:spec":{".":{},"f:a":{},"f:b":{".":{},"f:c":{}},"f:d":{}},"f:x":{}}`, a.Union(b).String())
		assert.True(t, a.Union(b).Equal(b.Union(a)))
	})
	t.Run("difference removes exact members only", func(t *testing.T) {
		assert.Equal(t, `{"f:spec":{".":{},"f:a":{},"f:b":{"f:c":{}}},"f:x":{}}`, a.Difference(b).String())
		assert.Equal(t, `{"f:spec":{"f:b":{},"f:d":{}}}`, b.Difference(a).String())
	})
	t.Run("recursive difference removes subtrees", func(t *testing.T) {
		assert.Equal(t, `{"f:spec":{".":{},"f:a":{}},"f:x":{}}`, a.RecursiveDifference(b).String())
		spec := mustParse(t, `{"f:spec":{}}`)
		assert.Equal(t, `{"f:x":{}}`, a.RecursiveDifference(spec).String())
		assert.True(t, a.RecursiveDifference(a).Empty())
	})
	t.Run("has reports members only", func(t *testing.T) {
		assert.True(t, a.Has("f:spec"))
		assert.True(t, a.Has("f:spec", "f:b", "f:c"))
		assert.False(t, a.Has("f:spec", "f:b"))
		assert.False(t, a.Has("f:nope"))
		assert.False(t, a.Has())
	})
	t.Run("operations leave their operands alone", func(t *testing.T) {
		before := a.String()
		_ = a.Union(b)
		_ = a.Difference(b)
		_ = a.RecursiveDifference(b)
		assert.Equal(t, before, a.String())
	})
	t.Run("zero set is empty", func(t *testing.T) {
		var z Set
		assert.True(t, z.Empty())
		assert.Equal(t, `{}`, z.String())
		assert.True(t, z.Equal(mustParse(t, `{}`)))
		assert.True(t, a.Union(z).Equal(a))
		assert.True(t, z.Difference(a).Empty())
	})
}
