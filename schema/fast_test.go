package schema

import (
	"encoding/json"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// checkFast checks the fast path of v on the JSON document data against the
// library: when it answers, it answers as the library does.
func checkFast(t testing.TB, v *Validator, data []byte) (answered, valid bool) {
	f := v.fastPath()
	require.NotNil(t, f, "no fast path for %v", v.gvk)
	doc, err := decodeJSON(data)
	if err != nil {
		return false, false
	}
	libErr := v.schema.Validate(doc)
	var run fastRun
	fast := f.valid(&run, doc, 0)
	if run.aborted {
		return false, false
	}
	require.Equal(t, libErr == nil, fast, "fast path and library disagree on %s (library: %v)", data, libErr)
	return true, fast
}

// mutate changes one value of doc, chosen at random, into another, or removes or
// adds a member.
func mutate(r *rand.Rand, doc any) any {
	values := []any{"", "a", "A", "a/b", "-x", "x-", "example.com/a", "a..b", strings.Repeat("a", 64), strings.Repeat("b", 254),
		"\u00e9", "2024-05-01T10:00:00Z", "not a time", "*", "get", "Update", json.Number("0"), json.Number("-1"),
		json.Number("1.5"), json.Number("3600"), json.Number("1e3"), nil, true, false, map[string]any{}, []any{},
		[]any{"a"}, map[string]any{"a": "b"}}
	pick := func() any { return values[r.Intn(len(values))] }
	var walk func(v any, depth int) any
	walk = func(v any, depth int) any {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			switch c := r.Intn(10); {
			case len(keys) == 0 || c == 0:
				x[[]string{"zz", "a", "name", "labels", "A/b", "rules"}[r.Intn(6)]] = pick()
			case c == 1:
				delete(x, keys[r.Intn(len(keys))])
			default:
				k := keys[r.Intn(len(keys))]
				x[k] = walk(x[k], depth+1)
			}
			return x
		case []any:
			if len(x) == 0 || r.Intn(6) == 0 {
				return append(x, pick())
			}
			i := r.Intn(len(x))
			x[i] = walk(x[i], depth+1)
			return x
		}
		if r.Intn(3) == 0 && depth > 0 {
			return pick()
		}
		return pick()
	}
	return walk(doc, 0)
}

// TestFast_agrees_with_the_library mutates valid documents of every built-in kind
// at random and checks that the fast path answers each as the library does, and
// that it answers most of them.
func TestFast_agrees_with_the_library(t *testing.T) {
	seeds := map[string]string{
		resource.KindDirectClusterEndpointToken:           tokenFullScope,
		resource.KindProjectMigrateVirtualClusterInstance: migrateMinimal,
		resource.KindProject:                              projectMinimal,
		resource.KindVirtualClusterInstance:               instanceMinimal,
		resource.KindAccessKey:                            accessKeyMinimal,
	}
	tok, err := json.Marshal(typicalToken())
	require.NoError(t, err)
	r := rand.New(rand.NewSource(5))
	for kind, seed := range seeds {
		t.Run(kind, func(t *testing.T) {
			v := validatorOf(t, kind)
			docs := []string{seed}
			if kind == resource.KindDirectClusterEndpointToken {
				docs = append(docs, string(tok))
			}
			answered, valid, invalid := 0, 0, 0
			for _, d := range docs {
				ok, isValid := checkFast(t, v, []byte(d))
				require.True(t, ok && isValid, "the seed is valid and answered")
				for range 1500 {
					doc, err := decodeJSON([]byte(d))
					require.NoError(t, err)
					for range 1 + r.Intn(3) {
						doc = mutate(r, doc)
					}
					b, err := json.Marshal(doc)
					require.NoError(t, err)
					ok, isValid := checkFast(t, v, b)
					if ok {
						answered++
						if isValid {
							valid++
						} else {
							invalid++
						}
					}
				}
			}
			assert.Greater(t, answered, 1400, "the fast path answers most documents")
			assert.Greater(t, valid, 3, "some mutations stay valid")
			assert.Greater(t, invalid, 50, "some mutations make it invalid")
		})
	}
}

// hostKeywords is a host schema that uses every keyword the fast path applies
// itself, and some it hands to the library.
const hostKeywords = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["spec"],
  "properties": {
    "apiVersion": {"const": "example.com/v1"},
    "kind": {"enum": ["Thing", "Other", null, true]},
    "metadata": {"type": "object"},
    "spec": {
      "type": "object",
      "minProperties": 1,
      "maxProperties": 12,
      "dependentRequired": {"a": ["b"]},
      "propertyNames": {"maxLength": 3},
      "patternProperties": {"^x": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2}},
      "properties": {
        "a": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
        "b": {"oneOf": [{"type": "number", "maximum": 5}, {"type": "number", "exclusiveMinimum": 3}]},
        "c": {"not": {"const": "no"}},
        "d": {"type": "array", "minItems": 1, "maxItems": 3, "prefixItems": [{"type": "string"}], "items": {"type": "boolean"},
              "contains": {"const": true}, "minContains": 1, "maxContains": 1},
        "e": {"if": {"type": "string"}, "then": {"pattern": "^[a-z]+$"}, "else": {"type": "array", "uniqueItems": true}},
        "f": {"type": "string", "format": "date-time"},
        "g": {"$ref": "#/$defs/g"},
        "h": true,
        "i": false
      },
      "additionalProperties": {"type": ["string", "boolean"]}
    },
    "status": {"allOf": [{"type": "object"}, {"additionalProperties": false}]}
  },
  "$defs": {"g": {"type": "object", "properties": {"g": {"$ref": "#/$defs/g"}}, "additionalProperties": false}}
}`

func TestFast_host_schema_keywords(t *testing.T) {
	reg := NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Thing"}
	require.NoError(t, reg.Register(gvk, []byte(hostKeywords)))
	v, ok := reg.Validator(gvk)
	require.True(t, ok)
	seed := `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{},"spec":{"a":"ab","b":2,"c":"x","d":["s",true,false],` +
		`"e":"abc","f":"2024-05-01T10:00:00Z","g":{"g":{}},"h":1,"x1":4,"zz":"s"},"status":{}}`
	ok, valid := checkFast(t, v, []byte(seed))
	require.True(t, ok && valid)
	r := rand.New(rand.NewSource(7))
	answered, nValid := 0, 0
	for range 5000 {
		doc, err := decodeJSON([]byte(seed))
		require.NoError(t, err)
		for range 1 + r.Intn(2) {
			doc = mutate(r, doc)
		}
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		if ok, valid := checkFast(t, v, b); ok {
			answered++
			if valid {
				nValid++
			}
		}
	}
	assert.Greater(t, answered, 4500)
	assert.Greater(t, nValid, 100)
}

func TestFast_dynamic_references_get_no_fast_path(t *testing.T) {
	reg := NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Tree"}
	require.NoError(t, reg.Register(gvk, []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema",
		"$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}`)))
	v, ok := reg.Validator(gvk)
	require.True(t, ok)
	assert.Nil(t, v.fastPath())
	require.NoError(t, v.ValidateJSON([]byte(`{"kids":[{"kids":[]}]}`)))
	require.Error(t, v.ValidateJSON([]byte(`{"kids":[1]}`)))
}

// FuzzFastValidate checks the fast path against the library on arbitrary documents,
// for every built-in kind and the host schema of hostKeywords.
func FuzzFastValidate(f *testing.F) {
	for i, s := range []string{tokenMinimal, tokenFullScope, migrateMinimal, projectMinimal, instanceMinimal, accessKeyMinimal,
		`{"spec":{"a":"ab","b":4,"d":["s",true],"x2":2}}`, `{"metadata":{"labels":{"a/b":"c","x":""}}}`} {
		f.Add([]byte(s), uint8(i))
	}
	reg := NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Thing"}
	require.NoError(f, reg.Register(gvk, []byte(hostKeywords)))
	var validators []*Validator
	for _, k := range reg.Kinds() {
		v, _ := reg.Validator(k)
		validators = append(validators, v)
	}
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		if depthExceeds(data, MaxDepth) {
			return
		}
		checkFast(t, validators[int(k)%len(validators)], data)
	})
}
