package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
)

var projectGVK = resource.GroupVersionKind{Group: resource.Group, Version: resource.Version, Kind: "Project"}

const smpProject = `{"apiVersion":"management.service/v1","kind":"Project",
 "metadata":{"name":"a","labels":{"x":"1","y":"2"},"finalizers":["a.io/f"],
  "ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o1","uid":"u1"},{"apiVersion":"v1","kind":"K","name":"o2","uid":"u2"}]},
 "spec":{"displayName":"A","owner":{"user":"u","team":"t"},"allowedClusters":[{"name":"c1"},{"name":"c2"}]},
 "status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Busy","status":"False"}]}}`

// TestStrategicMergePatch checks the strategic merge patch of a built-in kind: lists
// whose schema names a merge key merge item by item, scalar sets merge as sets, other
// lists are replaced, and the directives of Kubernetes apply.
func TestStrategicMergePatch(t *testing.T) {
	reg := schema.NewRegistry()
	tests := []struct {
		name, patch string
		want        map[string]any // JSON values at dotted paths
		err         resource.StatusReason
	}{
		{"a field is set, others kept", `{"spec":{"displayName":"B"}}`,
			map[string]any{"spec.displayName": "B", "spec.owner": map[string]any{"user": "u", "team": "t"}}, ""},
		{"null deletes a field", `{"spec":{"owner":{"team":null}},"metadata":{"labels":{"x":null}}}`,
			map[string]any{"spec.owner": map[string]any{"user": "u"}, "metadata.labels": map[string]any{"y": "2"}}, ""},
		{"a list with a merge key merges by it", `{"spec":{"allowedClusters":[{"name":"c3"},{"name":"c1"}]}}`,
			map[string]any{"spec.allowedClusters": []any{map[string]any{"name": "c1"}, map[string]any{"name": "c2"}, map[string]any{"name": "c3"}}}, ""},
		{"an item merges with the one of its key", `{"status":{"conditions":[{"type":"Busy","status":"True","reason":"Work"}]}}`,
			map[string]any{"status.conditions": []any{
				map[string]any{"type": "Ready", "status": "True"},
				map[string]any{"type": "Busy", "status": "True", "reason": "Work"}}}, ""},
		{"$patch delete removes an item", `{"spec":{"allowedClusters":[{"name":"c1","$patch":"delete"}]}}`,
			map[string]any{"spec.allowedClusters": []any{map[string]any{"name": "c2"}}}, ""},
		{"$patch replace replaces a list", `{"spec":{"allowedClusters":[{"name":"c9"},{"$patch":"replace"}]}}`,
			map[string]any{"spec.allowedClusters": []any{map[string]any{"name": "c9"}}}, ""},
		{"$patch replace replaces an object", `{"spec":{"owner":{"user":"v","$patch":"replace"}}}`,
			map[string]any{"spec.owner": map[string]any{"user": "v"}}, ""},
		{"$patch delete deletes an object", `{"spec":{"owner":{"$patch":"delete"}}}`,
			map[string]any{"spec.owner": nil}, ""},
		{"finalizers merge as a set", `{"metadata":{"finalizers":["b.io/f","a.io/f"]}}`,
			map[string]any{"metadata.finalizers": []any{"a.io/f", "b.io/f"}}, ""},
		{"$deleteFromPrimitiveList removes a finalizer", `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/f"]}}`,
			map[string]any{"metadata.finalizers": nil}, ""},
		{"ownerReferences merge by uid", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o3","uid":"u3"},{"uid":"u1","name":"renamed"}]}}`,
			map[string]any{"metadata.ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "kind": "K", "name": "renamed", "uid": "u1"},
				map[string]any{"apiVersion": "v1", "kind": "K", "name": "o2", "uid": "u2"},
				map[string]any{"apiVersion": "v1", "kind": "K", "name": "o3", "uid": "u3"}}}, ""},
		{"$setElementOrder orders a merged list", `{"spec":{"$setElementOrder/allowedClusters":[{"name":"c2"},{"name":"c1"}]}}`,
			map[string]any{"spec.allowedClusters": []any{map[string]any{"name": "c2"}, map[string]any{"name": "c1"}}}, ""},
		{"$retainKeys keeps only the named fields", `{"spec":{"$retainKeys":["displayName","owner"],"displayName":"R"}}`,
			map[string]any{"spec.displayName": "R", "spec.allowedClusters": nil}, ""},
		{"a list without a merge strategy is replaced", `{"metadata":{"managedFields":[{"operation":"Update","manager":"m"}]}}`,
			map[string]any{"metadata.managedFields": []any{map[string]any{"operation": "Update", "manager": "m"}}}, ""},
		{"an item without its merge key is 400", `{"spec":{"allowedClusters":[{"nom":"x"}]}}`, nil, resource.ReasonBadRequest},
		{"a patch that is not an object is 400", `[1]`, nil, resource.ReasonBadRequest},
		{"an unknown $patch is 400", `{"spec":{"$patch":"merge-please"}}`, nil, resource.ReasonBadRequest},
		{"an unknown directive is 400", `{"spec":{"$frobnicate":1}}`, nil, resource.ReasonBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := reg.StrategicMergePatch(projectGVK, []byte(smpProject), []byte(tt.patch))
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, tt.err, resource.ReasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(out, &got))
			for path, want := range tt.want {
				assert.Equal(t, want, at(got, path), "%s in %s", path, out)
			}
		})
	}

	t.Run("ListInfo", func(t *testing.T) {
		v, ok := reg.Validator(projectGVK)
		require.True(t, ok)
		li, ok := v.ListInfo("spec", "allowedClusters")
		require.True(t, ok)
		assert.Equal(t, schema.ListInfo{Type: "map", MapKeys: []string{"name"}, MergeKey: "name", Strategy: "merge"}, li)
		li, ok = v.ListInfo("metadata", "finalizers")
		require.True(t, ok)
		assert.Equal(t, schema.ListInfo{Type: "set", Strategy: "merge"}, li)
		_, ok = v.ListInfo("spec", "nothing")
		assert.False(t, ok)
	})
}

// at reads a dotted path of a decoded JSON object; nil when it is absent.
func at(m map[string]any, path string) any {
	var cur any = m
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			mm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = mm[path[start:i]]
			start = i + 1
		}
	}
	return cur
}

// FuzzStrategicMergePatch checks that any patch applies or is refused with a Status,
// never panics, and that a successful result is a JSON object.
func FuzzStrategicMergePatch(f *testing.F) {
	for _, p := range []string{`{}`, `{"spec":{"allowedClusters":[{"name":"x"},{"$patch":"replace"}]}}`,
		`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/f"],"$setElementOrder/finalizers":["a.io/f"]}}`,
		`{"spec":{"$retainKeys":["owner"],"owner":{"$patch":"delete"}}}`, `{"status":{"conditions":[{"type":"X","$patch":"delete"}]}}`} {
		f.Add([]byte(p))
	}
	reg := schema.NewRegistry()
	f.Fuzz(func(t *testing.T, patch []byte) {
		out, err := reg.StrategicMergePatch(projectGVK, []byte(smpProject), patch)
		if err != nil {
			var se *resource.StatusError
			require.ErrorAs(t, err, &se)
			return
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(out, &m))
		require.NotNil(t, m)
	})
}
