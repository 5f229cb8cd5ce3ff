package httpapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
)

// TestCommonSchemaCopy checks that the embedded copy of the schema package's
// common.json is identical to it (the schema package does not export that document).
func TestCommonSchemaCopy(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "..", "schema", "schemas", "common.json"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(orig, commonSchema),
		"store/httpapi/common.json differs from schema/schemas/common.json: copy it again")
}

// TestOpenAPIDocument checks what kubectl relies on in the generated document: the
// kind of every operation and schema, the fieldValidation parameter on every PATCH,
// and $refs that all resolve.
func TestOpenAPIDocument(t *testing.T) {
	_, groups, err := servedResources(resource.NewScheme(), testResources())
	require.NoError(t, err)
	require.Len(t, groups, 1)
	docs, err := buildOpenAPI(schema.NewRegistry(), groups[0], "/base", "")
	require.NoError(t, err)
	var doc struct {
		OpenAPI    string
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]map[string]any }
	}
	require.NoError(t, json.Unmarshal(docs.body, &doc))
	for _, k := range []string{"Project", "VirtualClusterInstance", "AccessKey", "DirectClusterEndpointToken", "ProjectMigrateVirtualClusterInstance"} {
		s := doc.Components.Schemas["service.management.v1."+k]
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		if assert.Len(t, gvks, 1, "schema of %s", k) {
			assert.Equal(t, k, gvks[0].(map[string]any)["kind"], "schema of %s", k)
		}
	}
	for _, kind := range []string{"Project", "VirtualClusterInstance", "AccessKey", "DirectClusterEndpointToken"} {
		found := false
		for path, item := range doc.Paths {
			var op struct {
				GVK        map[string]string `json:"x-kubernetes-group-version-kind"`
				Parameters []struct{ Name, In string }
			}
			raw, ok := item["patch"]
			if !ok || json.Unmarshal(raw, &op) != nil || op.GVK["kind"] != kind {
				continue
			}
			found = true
			has := false
			for _, p := range op.Parameters {
				has = has || (p.Name == "fieldValidation" && p.In == "query")
			}
			assert.True(t, has, "PATCH %s has no fieldValidation parameter", path)
		}
		assert.True(t, found, "no PATCH operation for %s: kubectl create -f would fail validation", kind)
	}
	// Every $ref resolves.
	for _, ref := range regexpRefs(string(docs.body)) {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		assert.Contains(t, doc.Components.Schemas, name, "unresolved $ref %s", ref)
	}
	// No JSON Schema keyword OpenAPI 3.0 lacks.
	for _, kw := range []string{`"const"`, `"$defs"`, `"if"`, `"then"`, `"propertyNames"`, `"$schema"`, `"$id"`} {
		assert.NotContains(t, string(docs.body), kw+":", "the document still has %s", kw)
	}
}

func regexpRefs(s string) []string {
	var out []string
	for {
		i := strings.Index(s, `"$ref":"`)
		if i < 0 {
			return out
		}
		s = s[i+8:]
		j := strings.IndexByte(s, '"')
		out = append(out, s[:j])
		s = s[j:]
	}
}

// TestOpenAPIExplain checks what kubectl explain prints from the document of the
// management kinds: every field has a description; apiVersion, kind and enums are
// strings; metadata is meta.k8s.io's ObjectMeta; maps and string rules are written in
// place (map[string]string, string), objects named in UpperCamelCase; lists carry
// their merge keys.
func TestOpenAPIExplain(t *testing.T) {
	_, groups, err := servedResources(resource.NewScheme(), testResources())
	require.NoError(t, err)
	docs, err := buildOpenAPI(schema.NewRegistry(), groups[0], "", "")
	require.NoError(t, err)
	var doc struct {
		Components struct{ Schemas map[string]map[string]any }
	}
	require.NoError(t, json.Unmarshal(docs.body, &doc))
	schemas := doc.Components.Schemas

	var missing []string
	var walk func(name string, s map[string]any)
	walk = func(name string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for p, v := range props {
			pm, _ := v.(map[string]any)
			if d, _ := pm["description"].(string); d == "" {
				missing = append(missing, name+"."+p)
			}
			walk(name+"."+p, pm)
			if items, ok := pm["items"].(map[string]any); ok {
				walk(name+"."+p+"[]", items)
			}
		}
	}
	for name, s := range schemas {
		if strings.HasPrefix(name, "service.management.v1.") && !strings.HasSuffix(name, "List") {
			walk(name, s)
		}
	}
	assert.Empty(t, missing, "fields without a description")

	project := schemas["service.management.v1.Project"]
	prop := func(s map[string]any, path ...string) map[string]any {
		for _, p := range path {
			s = s["properties"].(map[string]any)[p].(map[string]any)
		}
		return s
	}
	assert.Equal(t, "string", prop(project, "apiVersion")["type"])
	assert.Equal(t, "string", prop(project, "kind")["type"])
	assert.Equal(t, "string", prop(schemas["service.management.v1.VirtualClusterInstance"], "status", "phase")["type"])
	meta := prop(project, "metadata")
	require.Contains(t, meta, "allOf")
	assert.Equal(t, "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		meta["allOf"].([]any)[0].(map[string]any)["$ref"])
	objectMeta := schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
	require.NotNil(t, objectMeta)
	labels := prop(objectMeta, "labels")
	assert.Equal(t, "object", labels["type"])
	assert.Equal(t, "string", labels["additionalProperties"].(map[string]any)["type"], "labels are map[string]string")
	assert.Equal(t, "string", prop(objectMeta, "namespace")["type"])
	owners := prop(objectMeta, "ownerReferences")
	assert.Equal(t, "uid", owners["x-kubernetes-patch-merge-key"])
	assert.Equal(t, "map", owners["x-kubernetes-list-type"])
	assert.Contains(t, schemas, "service.management.v1.common.Owner")
	assert.NotContains(t, schemas, "service.management.v1.common.labels")
	assert.Contains(t, prop(schemas["service.management.v1.AccessKey"], "spec", "scope")["allOf"].([]any)[0], "$ref")
}
