package apiserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
)

// TestCommonSchemaCopy checks that the embedded copy of the schema package's
// common.json is identical to it (the schema package does not export that document).
func TestCommonSchemaCopy(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "schema", "schemas", "common.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(orig, commonSchema) {
		t.Fatal("examples/server/internal/apiserver/common.json differs from schema/schemas/common.json: copy it again")
	}
}

// TestOpenAPIDocument checks what kubectl relies on in the generated document: the
// kind of every operation and schema, the fieldValidation parameter on every PATCH,
// and $refs that all resolve.
func TestOpenAPIDocument(t *testing.T) {
	served, err := servedResources(resource.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	docs, err := buildOpenAPI(schema.NewRegistry(), served, DefaultBasePath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(docs.doc, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Project", "VirtualClusterInstance", "AccessKey", "DirectClusterEndpointToken", "ProjectMigrateVirtualClusterInstance"} {
		s := doc.Components.Schemas["service.management.v1."+k]
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		if len(gvks) != 1 || gvks[0].(map[string]any)["kind"] != k {
			t.Errorf("schema of %s: x-kubernetes-group-version-kind %v", k, s["x-kubernetes-group-version-kind"])
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
			if !has {
				t.Errorf("PATCH %s has no fieldValidation parameter", path)
			}
		}
		if !found {
			t.Errorf("no PATCH operation for %s: kubectl create -f would fail validation", kind)
		}
	}
	// Every $ref resolves.
	for _, ref := range regexpRefs(string(docs.doc)) {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("unresolved $ref %s", ref)
		}
	}
	// No JSON Schema keyword OpenAPI 3.0 lacks.
	for _, kw := range []string{`"const"`, `"$defs"`, `"if"`, `"then"`, `"propertyNames"`, `"$schema"`, `"$id"`} {
		if strings.Contains(string(docs.doc), kw+":") {
			t.Errorf("the document still has %s", kw)
		}
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
