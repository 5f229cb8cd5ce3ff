package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// TestDryRunUpdate_keeps_resourceVersion checks that a dry-run update, patch and
// status update answer with the stored object's resourceVersion, as kube-apiserver
// does, and store nothing.
func TestDryRunUpdate_keeps_resourceVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
	vci := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Name: "v", Namespace: "p-a"}}
	require.NoError(t, s.Create(ctx, vci, store.CreateOptions{}))
	dry := store.WriteOptions{DryRun: true}
	tests := []struct {
		name  string
		rv    string
		write func(rv string) (resource.Object, error)
	}{
		{"update", p.ResourceVersion, func(rv string) (resource.Object, error) {
			u := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", ResourceVersion: rv}}
			u.Spec.DisplayName = "changed"
			return u, s.Update(ctx, u, store.UpdateOptions{WriteOptions: dry})
		}},
		{"merge patch", p.ResourceVersion, func(string) (resource.Object, error) {
			u := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
			return u, s.Patch(ctx, u, store.PatchTypeMerge, []byte(`{"spec":{"displayName":"patched"}}`), store.PatchOptions{WriteOptions: dry})
		}},
		{"status update", vci.ResourceVersion, func(rv string) (resource.Object, error) {
			u := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Name: "v", Namespace: "p-a", ResourceVersion: rv}}
			u.Status.Phase = "Ready"
			return u, s.UpdateStatus(ctx, u, store.UpdateOptions{WriteOptions: dry})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.write(tt.rv)
			require.NoError(t, err)
			assert.Equal(t, tt.rv, got.GetObjectMeta().ResourceVersion)
		})
	}
	again := &resource.Project{}
	require.NoError(t, s.Get(ctx, "", "a", again, store.GetOptions{}))
	assert.Equal(t, p.ResourceVersion, again.ResourceVersion, "nothing was stored")
	assert.Empty(t, again.Spec.DisplayName)

	t.Run("a dry-run create has none", func(t *testing.T) {
		c := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "new"}}
		require.NoError(t, s.Create(ctx, c, store.CreateOptions{WriteOptions: dry}))
		assert.Empty(t, c.ResourceVersion)
	})
}

// TestDelete_again_sets_the_propagation_finalizer checks that deleting an object
// already marked for deletion (held by a finalizer) sets the finalizer of the
// propagation policy it names, as kube-apiserver does: Foreground adds
// foregroundDeletion, Orphan orphan, Background removes both, none changes nothing.
func TestDelete_again_sets_the_propagation_finalizer(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	tests := []struct {
		policy string
		want   []string
	}{
		{store.DeletePropagationForeground, []string{"example.com/hold", store.FinalizerForegroundDeletion}},
		{store.DeletePropagationOrphan, []string{"example.com/hold", store.FinalizerOrphan}},
		{store.DeletePropagationBackground, []string{"example.com/hold"}},
		{"", []string{"example.com/hold"}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("policy %q", tt.policy), func(t *testing.T) {
			name := fmt.Sprintf("p%d", i)
			fin := []string{"example.com/hold"}
			if tt.policy == store.DeletePropagationBackground {
				fin = append(fin, store.FinalizerOrphan)
			}
			p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name, Finalizers: fin}}
			require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
			first := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
			removed, err := s.Delete(ctx, first, store.DeleteOptions{})
			require.NoError(t, err)
			require.False(t, removed)
			require.ElementsMatch(t, fin, first.Finalizers)

			again := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
			removed, err = s.Delete(ctx, again, store.DeleteOptions{PropagationPolicy: tt.policy})
			require.NoError(t, err)
			require.False(t, removed)
			assert.ElementsMatch(t, tt.want, again.Finalizers)
			// A change is a write; none is not.
			assert.Equal(t, tt.policy == "", again.ResourceVersion == first.ResourceVersion)
		})
	}
}

// TestList_remainingItemCount checks that a page of a list without a selector says
// how many items follow it, as kube-apiserver does, and that a list with a selector or
// the last page does not.
func TestList_remainingItemCount(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	for i := range 5 {
		require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%d", i),
			Labels: map[string]string{"n": fmt.Sprint(i)}}}, store.CreateOptions{}))
	}
	// The count comes from the label index, which a new store builds in the background.
	require.NoError(t, s.Settle(ctx))
	count := func(l *resource.ProjectList) *int64 { return l.RemainingItemCount }
	var page resource.ProjectList
	require.NoError(t, s.List(ctx, &page, store.ListOptions{Limit: 2}))
	require.Len(t, page.Items, 2)
	require.NotNil(t, count(&page))
	assert.Equal(t, int64(3), *count(&page))

	var page2 resource.ProjectList
	require.NoError(t, s.List(ctx, &page2, store.ListOptions{Limit: 2, Continue: page.Continue}))
	require.NotNil(t, count(&page2))
	assert.Equal(t, int64(1), *count(&page2))

	var last resource.ProjectList
	require.NoError(t, s.List(ctx, &last, store.ListOptions{Limit: 2, Continue: page2.Continue}))
	assert.Len(t, last.Items, 1)
	assert.Nil(t, count(&last), "the last page has none")

	var sel resource.ProjectList
	require.NoError(t, s.List(ctx, &sel, store.ListOptions{Limit: 1, LabelSelector: "n>0"}))
	require.Len(t, sel.Items, 1)
	assert.NotEmpty(t, sel.Continue)
	assert.Nil(t, count(&sel), "a list with a selector has none")
}
