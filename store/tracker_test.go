package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// TestTracker_sees_the_writes_of_other_stores checks the index of a store (served by
// label-selector lists) over writes of its own, whose summaries it takes from the
// write, and of another store on the same backend, whose values it decodes, also
// when both write the same key.
func TestTracker_sees_the_writes_of_other_stores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := newMemStore(t, store.Options{})
	other, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer other.Close()

	names := func(s *store.Store, selector string) []string {
		t.Helper()
		require.NoError(t, s.Settle(ctx))
		l := &resource.ProjectList{}
		require.NoError(t, s.List(ctx, l, store.ListOptions{LabelSelector: selector}))
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		return out
	}
	pa := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", Labels: map[string]string{"team": "red"}}}
	require.NoError(t, a.Create(ctx, pa, store.CreateOptions{}))
	pb := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b", Labels: map[string]string{"team": "red"}}}
	require.NoError(t, other.Create(ctx, pb, store.CreateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"a", "b"}, names(s, "team=red"))
	}
	// The other store changes a's object, then a changes it back and again.
	got := &resource.Project{}
	require.NoError(t, other.Get(ctx, "", "a", got, store.GetOptions{}))
	got.Labels["team"] = "blue"
	require.NoError(t, other.Update(ctx, got, store.UpdateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"b"}, names(s, "team=red"))
		assert.Equal(t, []string{"a"}, names(s, "team=blue"))
	}
	require.NoError(t, a.Get(ctx, "", "a", pa, store.GetOptions{}))
	pa.Labels["team"] = "red"
	require.NoError(t, a.Update(ctx, pa, store.UpdateOptions{}))
	pa.Labels["team"] = "green"
	require.NoError(t, a.Update(ctx, pa, store.UpdateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"b"}, names(s, "team=red"))
		assert.Equal(t, []string{"a"}, names(s, "team=green"))
		assert.Empty(t, names(s, "team=blue"))
	}
	assert.Empty(t, store.ResultProblems())
}
