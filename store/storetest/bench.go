package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// BenchStoreFunc opens a store for one benchmark, holding BenchInstance(0) to
// BenchInstance(n-1) (SeedBench writes them). It may hand out a store seeded for an
// earlier run with the same n, as long as the benchmark's writes cannot change what
// it finds: the benchmarks that take n > 0 only read, and those that write take
// n = 0.
type BenchStoreFunc func(b *testing.B, n int) *store.Store

// BenchInstance is the object of the store benchmarks: a ~1 KB
// VirtualClusterInstance with 5 labels in namespace p-bench, named vci-%06d, the
// size the performance anchors were measured with; one in a hundred carries the
// label one-in-hundred=true.
func BenchInstance(i int) *resource.VirtualClusterInstance {
	return &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Namespace: "p-bench",
			Name:      fmt.Sprintf("vci-%06d", i),
			Labels: map[string]string{
				"app": "bench", "tier": "backend", "team": fmt.Sprintf("team-%d", i%10),
				"one-in-hundred": fmt.Sprintf("%t", i%100 == 0), "management.service/project": "bench",
			},
			Annotations: map[string]string{"description": strings.Repeat("x", 400)},
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: fmt.Sprintf("Instance %d", i),
			Description: strings.Repeat("d", 200),
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"},
			TemplateRef: &resource.TemplateRef{Name: "default", Version: "1.0.0"},
			Parameters:  "replicas: 1\n",
		},
	}
}

// SeedBench creates BenchInstance(0) to BenchInstance(n-1) in s with 16 concurrent
// writers (a durable or remote backend groups them into fewer commits).
func SeedBench(b *testing.B, s *store.Store, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := s.Create(context.Background(), BenchInstance(i), store.CreateOptions{}); err != nil {
					assert.NoError(b, err) // not require: this is not the benchmark's goroutine
					return
				}
			}
		}()
	}
	wg.Wait()
	require.False(b, b.Failed(), "SeedBench: a create failed")
}

// RunBenchmarks runs the store's benchmarks, the same on every backend, as
// sub-benchmarks of b: Create, Get (of 100), Update, List1000, List10000,
// ListSelector1PercentOf10000 (an equality selector matching 100 of 10,000) and
// Watch100 (one update delivered to 100 watchers: an op is the write plus every
// watcher receiving its event).
//
// In the timed loops a check calls require only once it has failed: require's
// b.Helper would be timed with the store's work.
func RunBenchmarks(b *testing.B, open BenchStoreFunc) {
	ctx := context.Background()
	b.Run("Create", func(b *testing.B) {
		s := open(b, 0)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.Create(ctx, BenchInstance(i), store.CreateOptions{}); err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		s := open(b, 100)
		out := &resource.VirtualClusterInstance{}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.Get(ctx, "p-bench", fmt.Sprintf("vci-%06d", i%100), out, store.GetOptions{}); err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		s, obj := open(b, 0), BenchInstance(0)
		require.NoError(b, s.Create(ctx, obj, store.CreateOptions{}))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			obj.Spec.DisplayName = fmt.Sprintf("Instance %d", i+1) // i+1: "Instance 0" is the created value, a no-op update
			if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
				require.NoError(b, err)
			}
		}
	})
	list := func(n int, opts store.ListOptions, want int) func(b *testing.B) {
		return func(b *testing.B) {
			s := open(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				list := &resource.VirtualClusterInstanceList{}
				if err := s.List(ctx, list, opts); err != nil {
					require.NoError(b, err)
				}
				if len(list.Items) != want {
					require.Len(b, list.Items, want, "listed")
				}
			}
		}
	}
	b.Run("List1000", list(1000, store.ListOptions{}, 1000))
	b.Run("List10000", list(10000, store.ListOptions{}, 10000))
	b.Run("ListSelector1PercentOf10000", list(10000, store.ListOptions{LabelSelector: "one-in-hundred=true"}, 100))
	b.Run("Watch100", func(b *testing.B) {
		s, obj := open(b, 0), BenchInstance(0)
		require.NoError(b, s.Create(ctx, obj, store.CreateOptions{}))
		watchers := make([]*store.Watcher, 100)
		for i := range watchers {
			w, err := s.Watch(ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{ResourceVersion: obj.ResourceVersion})
			require.NoError(b, err)
			defer w.Stop()
			watchers[i] = w
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			obj.Spec.DisplayName = fmt.Sprintf("Instance %d", i+1)
			if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
				require.NoError(b, err)
			}
			for _, w := range watchers {
				if ev := <-w.ResultChan(); ev.Type != store.Modified {
					require.Equal(b, store.Modified, ev.Type, "event")
				}
			}
		}
	})
}
