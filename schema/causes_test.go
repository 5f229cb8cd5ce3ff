package schema

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// keywordSchema exercises the keywords the built-in schemas do not use, so that every
// kind of failure is turned into a cause with the right path, reason and message.
const keywordSchema = `{
  "type": "object",
  "properties": {
    "apiVersion": {}, "kind": {},
    "list": {"type": "array", "uniqueItems": true, "minItems": 1, "maxItems": 3},
    "tuple": {"type": "array", "prefixItems": [{"type": "string"}], "items": false},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "must be a string or an integer"},
    "one": {"oneOf": [{"minimum": 0}, {"maximum": 10}]},
    "never": {"not": {"const": "x"}},
    "map": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false,
            "propertyNames": {"maxLength": 5}, "minProperties": 1, "maxProperties": 2},
    "deps": {"type": "object", "dependentRequired": {"a": ["b"]}},
    "num": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
    "short": {"type": "string", "minLength": 3},
    "closed": {"type": "object", "unevaluatedProperties": false, "properties": {"a": {}}},
    "nothing": false,
    "closed2": {"type": "object", "additionalProperties": {"not": {}}},
    "has": {"type": "array", "contains": {"const": 1}},
    "uuid": {"type": "string", "format": "uuid"},
    "off": {"const": false}
  }
}`

func TestCausesOfEveryKeyword(t *testing.T) {
	reg := NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Keywords"}
	require.NoError(t, reg.Register(gvk, []byte(keywordSchema)))
	v, _ := reg.Validator(gvk)
	cases := []struct {
		name   string
		doc    string
		field  string
		reason resource.CauseType
		msg    string
	}{
		{"uniqueItems names the repeated item", `{"list":[1,2,1]}`, "list[2]", resource.CauseFieldValueDuplicate, "Duplicate value: 1"},
		{"uniqueItems compares numbers by value", `{"list":[1,2,1.0]}`, "list[2]", resource.CauseFieldValueDuplicate, "Duplicate value: 1.0"},
		{"uniqueItems on a long list", `{"list":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,3.0]}`, "list[25]", resource.CauseFieldValueDuplicate, "Duplicate value: 3.0"},
		{"minItems on an empty list is Required", `{"list":[]}`, "list", resource.CauseFieldValueRequired, "Required value: must have at least 1 items"},
		{"maxItems is TooMany", `{"list":[1,2,3,4]}`, "list", resource.CauseFieldValueTooMany, "Too many: 4: must have at most 3 items"},
		{"items false after prefixItems", `{"tuple":["a","b"]}`, "tuple[1]", resource.CauseFieldValueForbidden, "Forbidden: must not be set"},
		{"prefixItems", `{"tuple":[1]}`, "tuple[0]", resource.CauseFieldValueTypeInvalid, `Invalid value: "integer": must be of type string`},
		{"anyOf is one cause with the description", `{"either":true}`, "either", resource.CauseFieldValueInvalid, "Invalid value: true: must be a string or an integer"},
		{"oneOf matching both", `{"one":5}`, "one", resource.CauseFieldValueInvalid, "Invalid value: 5: must match exactly one of the allowed forms"},
		{"not", `{"never":"x"}`, "never", resource.CauseFieldValueInvalid, `Invalid value: "x": is not allowed by the schema`},
		{"additionalProperties false with patternProperties", `{"map":{"x-a":"1","y":"2"}}`, "map.y", resource.CauseFieldValueForbidden, "Forbidden: unknown field"},
		{"patternProperties values", `{"map":{"x-a":1}}`, "map[x-a]", resource.CauseFieldValueTypeInvalid, "must be of type string"},
		{"propertyNames shows the name", `{"map":{"x-toolong":"a"}}`, "map[x-toolong]", resource.CauseFieldValueTooLong, "Too long: must have at most 5 characters"},
		{"minProperties", `{"map":{}}`, "map", resource.CauseFieldValueInvalid, "must have at least 1 entries"},
		{"maxProperties", `{"map":{"x-a":"","x-b":"","x-c":""}}`, "map", resource.CauseFieldValueTooMany, "must have at most 2 entries"},
		{"dependentRequired names the missing field", `{"deps":{"a":1}}`, "deps.b", resource.CauseFieldValueRequired, "Required value: a is set"},
		{"exclusiveMinimum", `{"num":0}`, "num", resource.CauseFieldValueInvalid, "must be greater than 0"},
		{"exclusiveMaximum", `{"num":1}`, "num", resource.CauseFieldValueInvalid, "must be less than 1"},
		{"multipleOf", `{"num":0.3}`, "num", resource.CauseFieldValueInvalid, "Invalid value: 0.3: must be a multiple of 0.25"},
		{"minLength", `{"short":"ab"}`, "short", resource.CauseFieldValueInvalid, `Invalid value: "ab": must have at least 3 characters`},
		{"unevaluatedProperties false", `{"closed":{"a":1,"b":2}}`, "closed.b", resource.CauseFieldValueForbidden, "Forbidden: unknown field"},
		{"const false is a keyword, not a false schema", `{"off":true}`, "off", resource.CauseFieldValueInvalid, "Invalid value: true: must be false"},
		{"a false schema", `{"nothing":1}`, "nothing", resource.CauseFieldValueForbidden, "Forbidden: must not be set"},
		{"additionalProperties with a schema names the entry", `{"closed2":{"a":1}}`, "closed2[a]", resource.CauseFieldValueInvalid, "Invalid value: 1: is not allowed by the schema"},
		{"contains", `{"has":[2,3]}`, "has", resource.CauseFieldValueInvalid, "at least 1 items must match"},
		{"format uuid", `{"uuid":"nope"}`, "uuid", resource.CauseFieldValueInvalid, `Invalid value: "nope": must be a valid uuid`},
		{"a long value is cut", `{"short":1,"never":"x","uuid":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`, "uuid", resource.CauseFieldValueInvalid, `aaaaaaaa..."`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			causes := causesOf(t, v.ValidateJSON([]byte(tc.doc)))
			var got *resource.StatusCause
			for i := range causes {
				if causes[i].Field == tc.field {
					got = &causes[i]
				}
			}
			require.NotNil(t, got, "no cause at %s: %+v", tc.field, causes)
			require.Equal(t, tc.reason, got.Type, "%+v", got)
			require.Contains(t, got.Message, tc.msg)
		})
	}
}

func TestEmbeddedSchemas(t *testing.T) {
	reg := NewRegistry()
	require.Len(t, reg.Kinds(), len(builtinKinds))
	for _, k := range builtinKinds {
		t.Run(k.kind+" has a compiled draft 2020-12 schema", func(t *testing.T) {
			v, ok := reg.Validator(gvkOf(k.kind))
			require.True(t, ok)
			doc, err := decodeJSON(v.Source())
			require.NoError(t, err)
			require.Equal(t, DraftURL, doc.(map[string]any)["$schema"])
			require.Equal(t, BaseURL+k.file, doc.(map[string]any)["$id"])
		})
	}
	t.Run("every embedded document passes the keyword lint", func(t *testing.T) {
		docs, err := embeddedDocuments()
		require.NoError(t, err)
		require.Len(t, docs, len(builtinKinds)+1)
	})
}

func TestNaturalCompare(t *testing.T) {
	require.Negative(t, naturalCompare("rules[2]", "rules[10]"))
	require.Positive(t, naturalCompare("rules[10]", "rules[2]"))
	require.Zero(t, naturalCompare("a[01]", "a[1]"))
	require.Negative(t, naturalCompare("a", "a.b"))
}
