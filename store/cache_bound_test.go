package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// TestObjectCacheBytes checks that the decoded-object cache stays within its byte
// bound, and that lists of more objects than it holds (which decode the objects it
// misses without caching them) answer exactly as a store without a cache does.
func TestObjectCacheBytes(t *testing.T) {
	ctx := context.Background()
	const n = 120
	open := func(t *testing.T, opts store.Options) *store.Store {
		s, _ := newMemStore(t, opts)
		for i := range n {
			o := storetest.BenchInstance(i)
			if i%10 == 0 {
				// Fields the objects around it lack: a list must not carry them over.
				o.Labels["rare"] = "yes"
				o.Spec.Parameters = ""
			}
			require.NoError(t, s.Create(ctx, o, store.CreateOptions{}))
		}
		require.NoError(t, s.Settle(ctx))
		return s
	}
	const bound = 40 << 10 // about 20 objects of 1 KB
	small := open(t, store.Options{ObjectCacheBytes: bound})
	none := open(t, store.Options{ObjectCache: -1})
	objects, bytes := small.CacheStats()
	assert.LessOrEqual(t, bytes, int64(bound), "the writes stay within the bound")
	assert.Positive(t, objects)
	tests := []struct {
		name string
		opts store.ListOptions
	}{
		{name: "everything", opts: store.ListOptions{}},
		{name: "paged", opts: store.ListOptions{Limit: 7}},
		{name: "label selector", opts: store.ListOptions{LabelSelector: "team=team-3"}},
		{name: "paged set selector", opts: store.ListOptions{Limit: 5, LabelSelector: "team in (team-1,team-2)"}},
		{name: "field selector", opts: store.ListOptions{FieldSelector: "metadata.name!=vci-000004"}},
	}
	all := func(s *store.Store, opts store.ListOptions) []resource.VirtualClusterInstance {
		var items []resource.VirtualClusterInstance
		for {
			var l resource.VirtualClusterInstanceList
			require.NoError(t, s.List(ctx, &l, opts))
			items = append(items, l.Items...)
			if opts.Continue = l.Continue; opts.Continue == "" {
				return items
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := small.CacheStats()
			got, want := all(small, tt.opts), all(none, tt.opts)
			require.NotEmpty(t, want)
			require.Len(t, got, len(want))
			for i := range want {
				// The stores differ in uids, timestamps and revisions only.
				g, w := got[i], want[i]
				assert.Equal(t, w.Name, g.Name)
				assert.NotEmpty(t, g.ResourceVersion)
				g.UID, g.CreationTimestamp, g.ResourceVersion, g.ManagedFields = "", resource.Time{}, "", nil
				w.UID, w.CreationTimestamp, w.ResourceVersion, w.ManagedFields = "", resource.Time{}, "", nil
				assert.Equal(t, w, g, fmt.Sprint("item ", i))
			}
			after, bytes := small.CacheStats()
			assert.LessOrEqual(t, bytes, int64(bound))
			assert.GreaterOrEqual(t, after, before, "a list evicts nothing")
		})
	}
	// Each item is the list's own: changing one changes no later answer.
	var l resource.VirtualClusterInstanceList
	require.NoError(t, small.List(ctx, &l, store.ListOptions{}))
	for i := range l.Items {
		l.Items[i].Labels["team"] = "changed"
	}
	var again resource.VirtualClusterInstanceList
	require.NoError(t, small.List(ctx, &again, store.ListOptions{LabelSelector: "team=changed"}))
	assert.Empty(t, again.Items)
}
