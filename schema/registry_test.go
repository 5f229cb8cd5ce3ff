package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

var widgetGVK = resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetSchema is a host schema that reuses the shared metadata definitions.
const widgetSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["apiVersion", "kind", "metadata", "spec"],
  "properties": {
    "apiVersion": {"const": "example.com/v1"},
    "kind": {"const": "Widget"},
    "metadata": {"$ref": "https://schemas.management.service/v1/common.json#/$defs/objectMeta"},
    "spec": {
      "type": "object",
      "additionalProperties": false,
      "required": ["size"],
      "properties": {
        "size": {"type": "integer", "minimum": 1},
        "color": {"$ref": "#/$defs/color"},
        "email": {"type": "string", "format": "email"},
        "since": {"type": "string", "format": "date-time"},
        "tree": {"$ref": "#/$defs/tree"}
      }
    }
  },
  "$defs": {
    "color": {"enum": ["red", "green"]},
    "tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/tree"}}}
  }
}`

func TestRegisterHostSchema(t *testing.T) {
	reg := NewRegistry()
	require.NoError(t, reg.Register(widgetGVK, []byte(widgetSchema)))
	v, ok := reg.Validator(widgetGVK)
	require.True(t, ok)
	require.Equal(t, widgetGVK, v.GroupVersionKind())
	require.JSONEq(t, widgetSchema, string(v.Source()))
	require.Contains(t, reg.Kinds(), widgetGVK)

	valid := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"},"spec":{"size":2,"color":"red","email":"a@example.com","since":"2024-01-01T00:00:00Z","tree":{"child":{"child":{}}}}}`
	t.Run("accepts a valid widget", func(t *testing.T) {
		require.NoError(t, v.ValidateJSON([]byte(valid)))
	})
	cases := []struct {
		name, path     string
		value          any
		field, message string
	}{
		{"refuses a value below the minimum", "spec.size", 0, "spec.size", "greater than or equal to 1"},
		{"refuses a value outside the enum", "spec.color", "blue", "spec.color", `supported values: "red", "green"`},
		{"asserts the email format", "spec.email", "not-an-email", "spec.email", "must be a valid email"},
		{"asserts the date-time format", "spec.since", "yesterday", "spec.since", "must be a valid date-time"},
		{"applies the shared metadata rules", "metadata.name", "Bad_Name", "metadata.name", "RFC 1123 subdomain"},
		{"refuses an unknown field", "spec.weight", 1, "spec.weight", "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			causes := causesOf(t, v.ValidateJSON([]byte(with(t, valid, tc.path, tc.value))))
			require.Equal(t, []string{tc.field}, fields(causes))
			require.Contains(t, causes[0].Message, tc.message)
		})
	}
	t.Run("names the host kind in the error", func(t *testing.T) {
		err := v.ValidateJSON([]byte(with(t, valid, "spec.size", 0)))
		require.Contains(t, err.Error(), `Widget.example.com "w" is invalid`)
	})
	t.Run("does not leak the schema to another registry", func(t *testing.T) {
		_, ok := NewRegistry().Validator(widgetGVK)
		require.False(t, ok)
	})
}

func TestRegisterRefuses(t *testing.T) {
	dir := t.TempDir()
	// A readable, valid schema on disk: it must still never be loaded.
	onDisk := filepath.Join(dir, "disk.json")
	require.NoError(t, os.WriteFile(onDisk, []byte(`{"type":"string"}`), 0o600))
	fileURL := "file://" + filepath.ToSlash(onDisk)

	cases := []struct {
		name     string
		schema   string
		external bool   // must also match ErrExternalRef
		mention  string // part of the error message
	}{
		{"a $ref to a readable file:// schema", `{"$ref":"` + fileURL + `"}`, true, "not an in-memory schema document"},
		{"a $ref to /etc/passwd", `{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`, true, "file:///etc/passwd"},
		{"a file:// $ref in an unused $defs entry", `{"$defs":{"x":{"$ref":"` + fileURL + `#/a"}}}`, true, ""},
		{"a $ref to http://", `{"$ref":"http://example.com/schema.json"}`, true, "http://example.com/schema.json"},
		{"a $ref to https://", `{"$ref":"https://example.com/schema.json#/x"}`, true, ""},
		{"a relative $ref to a document that does not exist", `{"$ref":"other.json"}`, true, ""},
		{"a $ref to a built-in-looking document that does not exist", `{"$ref":"https://schemas.management.service/v1/missing.json"}`, true, ""},
		{"a $dynamicRef to another host", `{"$dynamicRef":"https://example.com/s#meta"}`, true, ""},
		{"a $schema naming a file", `{"$schema":"` + fileURL + `"}`, false, "unsupported $schema"},
		{"a $schema naming draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, false, "unsupported $schema"},
		{"a $schema below the root", `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, false, "only at the root"},
		{"an $id", `{"$id":"https://schemas.management.service/v1/common.json"}`, false, `"$id"`},
		{"a $vocabulary", `{"$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true}}`, false, `"$vocabulary"`},
		{"a typo keyword", `{"type":"string","maxLenght":3}`, false, `unknown keyword "maxLenght"`},
		{"a typo keyword deep inside", `{"properties":{"a":{"items":{"tpye":"string"}}}}`, false, `unknown keyword "tpye" at #/properties/a/items`},
		{"a draft-07 keyword", `{"definitions":{"a":{}}}`, false, `unknown keyword "definitions"`},
		{"an OpenAPI keyword", `{"type":"string","nullable":true}`, false, `unknown keyword "nullable"`},
		{"an unknown format", `{"type":"string","format":"date-tme"}`, false, `unknown format "date-tme"`},
		{"a misspelt type", `{"type":"strnig"}`, false, "metaschema"},
		{"a negative minLength", `{"minLength":-1}`, false, "metaschema"},
		{"an invalid pattern", `{"pattern":"("}`, false, "metaschema"},
		{"an invalid patternProperties regex", `{"patternProperties":{"(":{}}}`, false, "metaschema"},
		{"required that is not a list", `{"required":"a"}`, false, "metaschema"},
		{"a $ref loop", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, false, ""},
		{"a $ref to a missing fragment", `{"$ref":"#/$defs/nope"}`, false, ""},
		{"text that is not JSON", `{"type":`, false, "invalid JSON"},
		{"two JSON values", `{} {}`, false, "invalid JSON"},
		{"a schema that is an array", `[]`, false, "JSON object or a boolean"},
		{"a schema nested too deep", strings.Repeat(`{"not":`, 200) + `{}` + strings.Repeat(`}`, 200), false, "nesting depth"},
		{"a schema larger than the limit", `{"description":"` + strings.Repeat("x", MaxSchemaSize) + `"}`, false, "more than the limit"},
	}
	for _, tc := range cases {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			reg := NewRegistry()
			err := reg.Register(widgetGVK, []byte(tc.schema))
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalidSchema)
			if tc.external {
				require.ErrorIs(t, err, ErrExternalRef)
			}
			if tc.mention != "" {
				require.Contains(t, err.Error(), tc.mention)
			}
			_, ok := reg.Validator(widgetGVK)
			require.False(t, ok, "a refused schema must not be registered")
		})
	}
}

func TestRegisterRefusesKinds(t *testing.T) {
	reg := NewRegistry()
	t.Run("refuses a built-in kind", func(t *testing.T) {
		err := reg.Register(gvkOf(resource.KindProject), []byte(`{}`))
		require.ErrorIs(t, err, ErrAlreadyRegistered)
	})
	t.Run("refuses a kind registered twice", func(t *testing.T) {
		require.NoError(t, reg.Register(widgetGVK, []byte(widgetSchema)))
		require.ErrorIs(t, reg.Register(widgetGVK, []byte(widgetSchema)), ErrAlreadyRegistered)
	})
	for _, gvk := range []resource.GroupVersionKind{
		{Group: "example.com", Version: "v1", Kind: ""},
		{Group: "example.com", Version: "", Kind: "A"},
		{Group: "Example.com", Version: "v1", Kind: "A"},
		{Group: "example.com", Version: "v1", Kind: "a/b"},
		{Group: "example.com#x", Version: "v1", Kind: "A"},
	} {
		t.Run("refuses the malformed kind "+gvk.String(), func(t *testing.T) {
			require.Error(t, reg.Register(gvk, []byte(`{}`)))
		})
	}
	t.Run("accepts a core-group kind", func(t *testing.T) {
		require.NoError(t, reg.Register(resource.GroupVersionKind{Version: "v1", Kind: "Thing"}, []byte(`{"type":"object"}`)))
	})
}

// TestCompilerNeverLoads compiles below the linter, straight through the compiler
// setup: the replaced loader refuses, and the library's global loader is never used.
func TestCompilerNeverLoads(t *testing.T) {
	dir := t.TempDir()
	onDisk := filepath.Join(dir, "disk.json")
	require.NoError(t, os.WriteFile(onDisk, []byte(`{"type":"string"}`), 0o600))

	var globalCalls atomic.Int64
	saved := jsonschema.LoadURL
	jsonschema.LoadURL = func(s string) (io.ReadCloser, error) {
		globalCalls.Add(1)
		return saved(s)
	}
	t.Cleanup(func() { jsonschema.LoadURL = saved })

	for _, ref := range []string{
		"file://" + filepath.ToSlash(onDisk),
		"http://127.0.0.1:1/schema.json",
		"https://example.com/schema.json",
		"ftp://example.com/x.json",
		"urn:example:schema",
	} {
		t.Run("refuses "+ref, func(t *testing.T) {
			set, err := builtins()
			require.NoError(t, err)
			u := registeredBaseURL + "test/v1/Raw.json"
			raw := []byte(`{"properties":{"a":{"$ref":"` + ref + `"}}}`)
			d := &document{url: u, raw: raw}
			_, err = compile(append(append([]*document{}, set.docs...), d), u)
			require.ErrorIs(t, err, ErrExternalRef)
		})
	}
	t.Run("a $schema naming a file is refused by the compiler too", func(t *testing.T) {
		u := registeredBaseURL + "test/v1/Raw.json"
		d := &document{url: u, raw: []byte(`{"$schema":"file://` + filepath.ToSlash(onDisk) + `"}`)}
		_, err := compile([]*document{d}, u)
		require.ErrorIs(t, err, ErrExternalRef)
	})
	require.Zero(t, globalCalls.Load(), "the global loader must never be called")
}

func TestDepthIsCapped(t *testing.T) {
	v := validatorOf(t, resource.KindDirectClusterEndpointToken)
	// fieldsV1 is recursive: metadata (2) > managedFields (3) > entry (4) > fieldsV1 (5).
	nested := func(levels int) string {
		return strings.Repeat(`{"f:a":`, levels) + `{}` + strings.Repeat(`}`, levels)
	}
	doc := func(fieldsLevels int) string {
		return `{"metadata":{"name":"t","managedFields":[{"operation":"Update","fieldsType":"FieldsV1","fieldsV1":` + nested(fieldsLevels) + `}]}}`
	}
	t.Run("accepts exactly the maximum depth", func(t *testing.T) {
		require.NoError(t, v.ValidateJSON([]byte(doc(MaxDepth-5))))
	})
	t.Run("refuses one level more, naming the field", func(t *testing.T) {
		causes := causesOf(t, v.ValidateJSON([]byte(doc(MaxDepth-4))))
		require.Len(t, causes, 1)
		require.Equal(t, "metadata.managedFields[0].fieldsV1"+strings.Repeat("[f:a]", MaxDepth-4), causes[0].Field)
		require.Contains(t, causes[0].Message, fmt.Sprintf("nesting depth exceeds the limit of %d", MaxDepth))
	})
	t.Run("refuses a megabyte of brackets without decoding it", func(t *testing.T) {
		causes := causesOf(t, v.ValidateJSON([]byte(`{"spec":`+strings.Repeat("[", 1<<20))))
		require.Len(t, causes, 1)
		require.Equal(t, "spec"+strings.Repeat("[0]", MaxDepth-1), causes[0].Field)
	})
	t.Run("ignores brackets inside strings", func(t *testing.T) {
		require.NoError(t, v.ValidateJSON([]byte(`{"metadata":{"name":"t","annotations":{"a":"`+strings.Repeat(`[{\"`, 200)+`"}}}`)))
	})
	t.Run("caps host schemas too", func(t *testing.T) {
		reg := NewRegistry()
		require.NoError(t, reg.Register(widgetGVK, []byte(widgetSchema)))
		w, _ := reg.Validator(widgetGVK)
		tree := strings.Repeat(`{"child":`, 9999) + `{}` + strings.Repeat(`}`, 9999)
		err := w.ValidateJSON([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"tree":` + tree + `}}`))
		causes := causesOf(t, err)
		require.True(t, strings.HasPrefix(causes[0].Field, "spec.tree.child.child"), causes[0].Field)
	})
}

func TestInvalidErrorShape(t *testing.T) {
	v := validatorOf(t, resource.KindDirectClusterEndpointToken)
	doc := `{"metadata":{"name":"tok","namespace":"x"},"spec":{"ttl":"1h","scope":{"rules":[
	  {"verbs":["get","GET"]},{},{},{},{},{},{},{},{},{},{"verbs":["x*"]},{"verbs":["y*"]}]}},
	  "status":{"token":"secret-that-must-not-leak"},"b":1,"a":1}`
	err := v.ValidateJSON([]byte(doc))
	causes := causesOf(t, err)
	t.Run("lists one cause per violation in a stable order", func(t *testing.T) {
		require.Equal(t, []string{
			"a", "b",
			"metadata.namespace",
			"spec.scope.rules[0].verbs[1]",
			"spec.scope.rules[10].verbs[0]",
			"spec.scope.rules[11].verbs[0]",
			"spec.ttl",
			"status.token",
		}, fields(causes))
	})
	t.Run("gives each cause a reason and a readable message", func(t *testing.T) {
		byField := map[string]resource.StatusCause{}
		for _, c := range causes {
			byField[c.Field] = c
		}
		require.Equal(t, resource.CauseFieldValueForbidden, byField["a"].Type)
		require.Equal(t, "Forbidden: unknown field", byField["a"].Message)
		require.Equal(t, resource.CauseFieldValueTypeInvalid, byField["spec.ttl"].Type)
		require.Equal(t, `Invalid value: "string": must be of type integer`, byField["spec.ttl"].Message)
		require.Equal(t, resource.CauseFieldValueInvalid, byField["spec.scope.rules[0].verbs[1]"].Type)
		require.True(t, strings.HasPrefix(byField["spec.scope.rules[0].verbs[1]"].Message, `Invalid value: "GET": a verb must be`))
	})
	t.Run("never echoes a secret", func(t *testing.T) {
		require.NotContains(t, err.Error(), "secret-that-must-not-leak")
		st := resource.StatusOf(err)
		b, _ := json.Marshal(st)
		require.NotContains(t, string(b), "secret-that-must-not-leak")
	})
	t.Run("names the kind and object", func(t *testing.T) {
		st := resource.StatusOf(err)
		require.Equal(t, "tok", st.Details.Name)
		require.Equal(t, resource.KindDirectClusterEndpointToken, st.Details.Kind)
		require.Equal(t, resource.Group, st.Details.Group)
		require.True(t, strings.HasPrefix(st.Message, `DirectClusterEndpointToken.management.service "tok" is invalid: [`))
	})
	t.Run("deduplicates causes", func(t *testing.T) {
		seen := map[string]bool{}
		for _, c := range causes {
			key := c.Field + "|" + c.Message
			require.False(t, seen[key], "duplicate cause %s", key)
			seen[key] = true
		}
	})
	t.Run("caps the number of causes", func(t *testing.T) {
		var rules []any
		for i := 0; i < 3*maxCauses; i++ {
			rules = append(rules, map[string]any{"verbs": []any{"X"}})
		}
		causes := causesOf(t, v.ValidateJSON([]byte(with(t, tokenMinimal, "spec.scope.rules", rules))))
		require.Len(t, causes, maxCauses+1)
		require.Contains(t, causes[maxCauses].Message, fmt.Sprintf("%d more errors not shown", 2*maxCauses))
	})
	t.Run("refuses text that is not a JSON object with BadRequest", func(t *testing.T) {
		for _, bad := range []string{``, `[]`, `"x"`, `{"a":`, `{} {}`, "\xff"} {
			require.ErrorIs(t, v.ValidateJSON([]byte(bad)), resource.ErrBadRequest, "%q", bad)
		}
	})
	t.Run("refuses an object that cannot be encoded with BadRequest", func(t *testing.T) {
		obj := &resource.DirectClusterEndpointToken{}
		obj.Name = "t"
		obj.ManagedFields = []resource.ManagedFieldsEntry{{Operation: "Update", FieldsType: "FieldsV1", FieldsV1: json.RawMessage(`{`)}}
		require.ErrorIs(t, v.Validate(obj), resource.ErrBadRequest)
	})
}

func TestValidateIsDeterministic(t *testing.T) {
	v := validatorOf(t, resource.KindDirectClusterEndpointToken)
	doc := []byte(`{"metadata":{"name":"A","labels":{"B":"!","c":"?"},"x":1,"y":2,"z":3},"spec":{"ttl":-1,"scope":{"projects":[{}],"spaces":[{}],"virtualClusters":[{}],"q":1}},"status":{"p":1}}`)
	first := resource.StatusOf(v.ValidateJSON(doc))
	for i := 0; i < 50; i++ {
		require.Equal(t, first, resource.StatusOf(v.ValidateJSON(doc)))
	}
}

func TestConcurrentUse(t *testing.T) {
	reg := NewRegistry()
	objs := fullObjects()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: fmt.Sprintf("Kind%d", g)}
			if err := reg.Register(gvk, []byte(`{"type":"object","properties":{"spec":{"type":"object"}}}`)); err != nil {
				errs <- err
				return
			}
			for i := 0; i < 10; i++ {
				for kind, obj := range objs {
					v, ok := reg.Validator(gvkOf(kind))
					if !ok {
						errs <- fmt.Errorf("no validator for %s", kind)
						return
					}
					if err := v.Validate(obj); err != nil {
						errs <- err
						return
					}
					if err := v.ValidateJSON([]byte(`{"metadata":{"name":"BAD"}}`)); !errors.Is(err, resource.ErrInvalid) {
						errs <- fmt.Errorf("want Invalid, got %v", err)
						return
					}
				}
				_ = reg.Kinds()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, reg.Kinds(), 5+8)
}
