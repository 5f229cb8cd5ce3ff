package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// TestGenericKind runs a kind registered at run time with the generic representation
// (resource.RawObject) through every write: it gets the store's semantics as a kind
// with a Go type of its own does, status subresource included.
func TestGenericKind(t *testing.T) {
	sch := resource.NewScheme()
	require.NoError(t, sch.Register(resource.RawKind(resource.KindInfo{
		Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true, HasStatus: true})))
	require.NoError(t, sch.Register(resource.RawKind(resource.KindInfo{
		Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespaced: true})))
	f := storetest.NewFixture(t, &store.Options{Scheme: sch})
	ctx := context.Background()
	k, _ := sch.KindFor("example.com/v1", "Widget")
	decode := func(s string) *resource.RawObject {
		o := k.New().(*resource.RawObject)
		require.NoError(t, json.Unmarshal([]byte(s), o))
		return o
	}

	w := decode(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"},"spec":{"size":1},"status":{"ready":true}}`)
	require.NoError(t, f.Create(ctx, w, store.CreateOptions{}))
	assert.Nil(t, w.Status, "status is written only through the status path")
	assert.Equal(t, int64(1), w.Generation)
	assert.NotEmpty(t, w.UID)

	t.Run("status update keeps the spec, update keeps the status", func(t *testing.T) {
		st := w.DeepCopyResource().(*resource.RawObject)
		st.Status = json.RawMessage(`{"ready":true}`)
		st.Fields["spec"] = json.RawMessage(`{"size":99}`)
		require.NoError(t, f.UpdateStatus(ctx, st, store.UpdateOptions{}))
		assert.JSONEq(t, `{"size":1}`, string(st.Fields["spec"]))
		assert.JSONEq(t, `{"ready":true}`, string(st.Status))
		assert.Equal(t, int64(1), st.Generation, "a status write is not a spec change")

		up := st.DeepCopyResource().(*resource.RawObject)
		up.Fields["spec"] = json.RawMessage(`{"size":2}`)
		up.Status = nil
		require.NoError(t, f.Update(ctx, up, store.UpdateOptions{}))
		assert.JSONEq(t, `{"ready":true}`, string(up.Status))
		assert.Equal(t, int64(2), up.Generation)

		require.ErrorIs(t, f.Update(ctx, w, store.UpdateOptions{}), resource.ErrConflict, "stale resourceVersion")
	})

	t.Run("get, list, patch, delete", func(t *testing.T) {
		got := k.New()
		require.NoError(t, f.Get(ctx, "ns", "w", got, store.GetOptions{}))
		assert.JSONEq(t, `{"size":2}`, string(got.(*resource.RawObject).Fields["spec"]))

		cm, _ := sch.KindFor("v1", "ConfigMap")
		c := cm.New().(*resource.RawObject)
		c.Name, c.Namespace = "c", "ns"
		c.Fields = map[string]json.RawMessage{"data": json.RawMessage(`{"a":"b"}`)}
		require.NoError(t, f.Create(ctx, c, store.CreateOptions{}))

		list := k.NewList()
		require.NoError(t, f.List(ctx, list, store.ListOptions{Namespace: "ns"}))
		require.Equal(t, 1, list.Len(), "the ConfigMap is another kind")
		assert.Equal(t, "Widget", list.Item(0).GetTypeMeta().Kind)

		p := k.New()
		p.GetObjectMeta().Name, p.GetObjectMeta().Namespace = "w", "ns"
		require.NoError(t, f.Patch(ctx, p, store.PatchTypeMerge, []byte(`{"spec":{"color":"red"}}`), store.PatchOptions{}))
		assert.JSONEq(t, `{"size":2,"color":"red"}`, string(p.(*resource.RawObject).Fields["spec"]))

		_, err := f.Delete(ctx, p, store.DeleteOptions{})
		require.NoError(t, err)
		require.ErrorIs(t, f.Get(ctx, "ns", "w", k.New(), store.GetOptions{}), resource.ErrNotFound)
	})
	assert.Empty(t, store.ResultProblems())
}
