package schema_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

func gvkOf(kind string) resource.GroupVersionKind {
	return resource.GroupVersionKind{Group: resource.Group, Version: resource.Version, Kind: kind}
}

// TestFieldTypeOfBuiltinKinds checks what server-side apply reads from the built-in
// schemas: fields through $ref and allOf, map lists with their keys, atomic lists
// where no list type is declared.
func TestFieldTypeOfBuiltinKinds(t *testing.T) {
	r := schema.NewRegistry()
	for _, gvk := range r.Kinds() {
		ft := r.FieldType(gvk)
		require.NotNil(t, ft, gvk.Kind)
		assert.Equal(t, store.FieldObject, ft.Kind, gvk.Kind)
		assert.Contains(t, ft.Fields, "metadata", gvk.Kind)
	}
	p := r.FieldType(gvkOf(resource.KindProject))
	spec := p.Fields["spec"]
	require.NotNil(t, spec)
	assert.Equal(t, store.FieldScalar, spec.Fields["displayName"].Kind)
	owner := spec.Fields["owner"]
	require.NotNil(t, owner, "a $ref is followed")
	assert.Equal(t, store.FieldScalar, owner.Fields["user"].Kind)
	ac := spec.Fields["allowedClusters"]
	assert.Equal(t, store.FieldList, ac.Kind)
	assert.Equal(t, store.ListMap, ac.ListType)
	assert.Equal(t, []string{"name"}, ac.ListMapKeys)
	assert.Equal(t, store.FieldScalar, ac.Elem.Fields["name"].Kind)
	meta := p.Fields["metadata"]
	assert.Equal(t, store.FieldObject, meta.Fields["labels"].Kind, "labels through $ref")
	assert.Equal(t, store.FieldScalar, meta.Fields["labels"].Elem.Kind, "additionalProperties is the type of the other members")
	conds := p.Fields["status"].Fields["conditions"]
	assert.Equal(t, store.ListMap, conds.ListType)
	assert.Equal(t, []string{"type"}, conds.ListMapKeys)
	scope := r.FieldType(gvkOf(resource.KindAccessKey)).Fields["spec"].Fields["scope"]
	require.NotNil(t, scope, "a $ref through common.json")
	assert.Equal(t, []string{"project", "space"}, scope.Fields["spaces"].ListMapKeys)
	rule := scope.Fields["rules"].Elem
	require.NotNil(t, rule)
	assert.Equal(t, store.ListAtomic, rule.Fields["verbs"].ListType)
	assert.Same(t, p, r.FieldType(gvkOf(resource.KindProject)), "cached")
	assert.Nil(t, r.FieldType(gvkOf("Nope")))
}

// TestFieldTypeOfRegisteredKinds checks the list and map types of a host schema,
// invalid combinations falling back to atomic, and recursive references.
func TestFieldTypeOfRegisteredKinds(t *testing.T) {
	r := schema.NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	require.NoError(t, r.Register(gvk, []byte(`{
	  "type": "object",
	  "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}}}},
	  "properties": {
	    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
	    "metadata": {"$ref": "https://schemas.management.service/v1/common.json#/$defs/objectMeta"},
	    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
	    "badSet": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "set"},
	    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
	      "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}}},
	    "noKeys": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}},
	    "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
	    "chain": {"$ref": "#/$defs/node"}
	  }}`)))
	ft := r.FieldType(gvk)
	require.NotNil(t, ft)
	assert.Equal(t, store.ListSet, ft.Fields["tags"].ListType)
	assert.Equal(t, store.ListAtomic, ft.Fields["badSet"].ListType, "a set of objects is atomic")
	assert.Equal(t, store.ListMap, ft.Fields["ports"].ListType)
	assert.Equal(t, []string{"port", "protocol"}, ft.Fields["ports"].ListMapKeys)
	assert.Equal(t, store.ListAtomic, ft.Fields["noKeys"].ListType, "a map list without keys is atomic")
	assert.True(t, ft.Fields["sel"].AtomicMap)
	chain := ft.Fields["chain"]
	assert.Equal(t, store.FieldObject, chain.Kind)
	assert.Equal(t, store.FieldAny, chain.Fields["next"].Kind, "a reference cycle stops at FieldAny")
}

// TestApplyMergesByTheSchema wires the registry into a store: two appliers of a
// Project's allowedClusters (a map list keyed by name) each own their item.
func TestApplyMergesByTheSchema(t *testing.T) {
	r := schema.NewRegistry()
	f := storetest.NewFixture(t, &store.Options{FieldTypes: r, Validating: []store.ValidatingAdmitter{schema.NewAdmitter(r)}})
	ctx := context.Background()
	for _, c := range []struct{ manager, cluster string }{{"alice", "c1"}, {"bob", "c2"}} {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
		_, err := f.Apply(ctx, p, []byte(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a"},
			"spec":{"allowedClusters":[{"name":"`+c.cluster+`"}]}}`), store.ApplyOptions{WriteOptions: store.WriteOptions{FieldManager: c.manager}})
		require.NoError(t, err)
	}
	p := &resource.Project{}
	require.NoError(t, f.Get(ctx, "", "a", p, store.GetOptions{}))
	assert.Equal(t, []resource.AllowedCluster{{Name: "c1"}, {Name: "c2"}}, p.Spec.AllowedClusters)
}

// TestManagedFieldsResetPassesTheSchema checks that managedFields a write resets
// ([{}]) or ignores ([] and invalid entries) never reach the schema, which would
// refuse them: kube-apiserver answers such writes with 200.
func TestManagedFieldsResetPassesTheSchema(t *testing.T) {
	r := schema.NewRegistry()
	f := storetest.NewFixture(t, &store.Options{FieldTypes: r, Validating: []store.ValidatingAdmitter{schema.NewAdmitter(r)}})
	ctx := context.Background()
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", Finalizers: []string{"example.com/f"}}}
	require.NoError(t, f.Create(ctx, p, store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: "alice"}}))
	require.Len(t, p.ManagedFields, 1)
	assert.JSONEq(t, `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/f\"":{}}}}`, string(p.ManagedFields[0].FieldsV1))
	for _, sent := range [][]resource.ManagedFieldsEntry{{}, {{Manager: "x", Operation: "Sideways"}}} {
		p.ManagedFields = sent
		p.Spec.Description += "x"
		require.NoError(t, f.Update(ctx, p, store.UpdateOptions{WriteOptions: store.WriteOptions{FieldManager: "bob"}}))
		assert.Len(t, p.ManagedFields, 2, "alice is kept")
	}
	p.ManagedFields = []resource.ManagedFieldsEntry{{}}
	p.Spec.Description += "x"
	require.NoError(t, f.Update(ctx, p, store.UpdateOptions{WriteOptions: store.WriteOptions{FieldManager: "bob"}}))
	assert.Empty(t, p.ManagedFields, "[{}] resets")
	p.Finalizers = nil
	require.NoError(t, f.Update(ctx, p, store.UpdateOptions{}))
}
