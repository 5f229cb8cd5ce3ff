package schema

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// FuzzValidate feeds arbitrary documents to the validator of every kind: it never
// panics, it always answers nil, Invalid (with at least one cause) or BadRequest, and
// the same input always gives the same answer.
func FuzzValidate(f *testing.F) {
	seeds := []string{
		tokenMinimal, tokenFullScope, migrateMinimal, projectMinimal, instanceMinimal, accessKeyMinimal,
		`{}`, `[]`, `null`, `{"metadata":null}`, `{"metadata":{"name":"A"}}`, `{"a":`,
		`{"metadata":{"labels":{"":""},"annotations":{"~/":"x"}},"spec":{"scope":{"rules":[{"resourceNames":["a"]}]}}}`,
		`{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{"f:b":{"x":{}}}}}]}}`,
		`{"spec":` + strings.Repeat("[", 100) + `}`,
		`{"spec":{"ttl":1e400}}`, `{"spec":{"ttl":-0.0}}`, "{\"metadata\":{\"name\":\"\xff\"}}",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	reg := NewRegistry()
	kinds := reg.Kinds()
	validators := make([]*Validator, len(kinds))
	for i, k := range kinds {
		validators[i], _ = reg.Validator(k)
	}
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		v := validators[int(k)%len(validators)]
		err1 := v.ValidateJSON(data)
		err2 := v.ValidateJSON(data)
		require.Equal(t, err1 == nil, err2 == nil, "not deterministic: %v then %v", err1, err2)
		if err1 == nil {
			return
		}
		st1, st2 := resource.StatusOf(err1), resource.StatusOf(err2)
		require.Equal(t, st1, st2, "not deterministic")
		switch st1.Reason {
		case resource.ReasonBadRequest:
		case resource.ReasonInvalid:
			require.True(t, st1.Details != nil && len(st1.Details.Causes) > 0, "Invalid without causes: %+v", st1)
		default:
			require.Failf(t, "unexpected reason", "%q: %v", st1.Reason, err1)
		}
	})
}

// FuzzRegister feeds arbitrary schema documents to Register: it never panics, never
// reaches any loader, and a schema it accepts validates deterministically.
func FuzzRegister(f *testing.F) {
	for _, s := range []string{
		widgetSchema, `{}`, `true`, `false`, `{"type":"string"}`, `{"$ref":"file:///etc/passwd"}`,
		`{"$ref":"https://schemas.management.service/v1/common.json#/$defs/objectMeta"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"pattern":"(?i)a{1000}"}`,
		`{"$dynamicAnchor":"m","items":{"$dynamicRef":"#m"}}`, `{"maxLenght":1}`,
		`{"properties":{"a":{"format":"date-time"}},"required":["a"]}`,
	} {
		f.Add([]byte(s))
	}
	var loads atomic.Int64
	saved := jsonschema.LoadURL
	jsonschema.LoadURL = func(s string) (io.ReadCloser, error) {
		loads.Add(1)
		return nil, errors.New("the global loader must not be used")
	}
	f.Cleanup(func() { jsonschema.LoadURL = saved })
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Fuzz"}
	f.Fuzz(func(t *testing.T, schema []byte) {
		reg := NewRegistry()
		err := reg.Register(gvk, schema)
		require.Zero(t, loads.Load(), "a loader was called")
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidSchema, "refusal does not match ErrInvalidSchema")
			return
		}
		v, _ := reg.Validator(gvk)
		for _, doc := range []string{`{}`, `{"a":"2024-01-01T00:00:00Z"}`, `{"metadata":{"name":"x"}}`, `[1,"a",null]`} {
			e1, e2 := v.ValidateJSON([]byte(doc)), v.ValidateJSON([]byte(doc))
			require.Equal(t, resource.StatusOf(e1), resource.StatusOf(e2), "not deterministic on %s: %v / %v", doc, e1, e2)
		}
	})
}
