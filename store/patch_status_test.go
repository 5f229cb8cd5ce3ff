package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// TestPatch_status checks the status patch: merge and JSON patches change only the
// status (a change of spec or labels in the same patch is dropped, generation stays),
// the manager's managedFields entry names the status subresource, and a kind without
// a status subresource answers 404.
func TestPatch_status(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	v := vci("p-a", "dev")
	v.Spec.DisplayName = "Dev"
	require.NoError(t, s.Create(ctx, v, store.CreateOptions{}))

	tests := []struct {
		name, patchType, patch string
		phase                  string
	}{
		{"merge patch", store.PatchTypeMerge,
			`{"status":{"phase":"Ready"},"spec":{"displayName":"ignored"},"metadata":{"labels":{"x":"ignored"}}}`, "Ready"},
		{"JSON patch", store.PatchTypeJSON,
			`[{"op":"replace","path":"/status/phase","value":"Sleeping"},{"op":"replace","path":"/spec/displayName","value":"ignored"}]`, "Sleeping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := vci("p-a", "dev")
			require.NoError(t, s.Patch(ctx, out, tt.patchType, []byte(tt.patch),
				store.PatchOptions{Subresource: "status", WriteOptions: store.WriteOptions{FieldManager: "ctl"}}))
			assert.Equal(t, tt.phase, out.Status.Phase)
			assert.Equal(t, "Dev", out.Spec.DisplayName, "only the status is written")
			assert.Empty(t, out.Labels)
			assert.Equal(t, int64(1), out.Generation)
			got := &resource.VirtualClusterInstance{}
			require.NoError(t, s.Get(ctx, "p-a", "dev", got, store.GetOptions{}))
			assert.Equal(t, out, got)
			var sub string
			for _, e := range got.ManagedFields {
				if e.Manager == "ctl" {
					sub = e.Subresource
				}
			}
			assert.Equal(t, "status", sub)
		})
	}
	t.Run("a main-resource patch keeps the status", func(t *testing.T) {
		out := vci("p-a", "dev")
		require.NoError(t, s.Patch(ctx, out, store.PatchTypeMerge, []byte(`{"status":{"phase":"Failed"},"spec":{"displayName":"D2"}}`), store.PatchOptions{}))
		assert.Equal(t, "Sleeping", out.Status.Phase)
		assert.Equal(t, "D2", out.Spec.DisplayName)
	})
	t.Run("a kind without status", func(t *testing.T) {
		require.NoError(t, s.Create(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "k"}}, store.CreateOptions{}))
		err := s.Patch(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "k"}}, store.PatchTypeMerge, []byte(`{}`),
			store.PatchOptions{Subresource: "status"})
		assert.Equal(t, resource.ReasonNotFound, resource.ReasonOf(err), "%v", err)
		err = s.Patch(ctx, vci("p-a", "dev"), store.PatchTypeMerge, []byte(`{}`), store.PatchOptions{Subresource: "scale"})
		assert.Equal(t, resource.ReasonBadRequest, resource.ReasonOf(err), "%v", err)
	})
}
