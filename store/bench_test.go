package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// benchInstance is a ~1 KB VirtualClusterInstance with 5 labels, the size the
// performance anchors were measured with.
func benchInstance(i int) *resource.VirtualClusterInstance {
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

func newBenchStore(b *testing.B) *store.Store {
	b.Helper()
	be := memdb.New(memdb.Options{})
	s, err := store.New(be, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
	return s
}

func seedBench(b *testing.B, s *store.Store, n int) {
	b.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if err := s.Create(ctx, benchInstance(i), store.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Create(ctx, benchInstance(i), store.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := newBenchStore(b)
	seedBench(b, s, 100)
	ctx := context.Background()
	out := &resource.VirtualClusterInstance{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Get(ctx, "p-bench", fmt.Sprintf("vci-%06d", i%100), out, store.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	obj := benchInstance(0)
	if err := s.Create(ctx, obj, store.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		obj.Spec.DisplayName = fmt.Sprintf("Instance %d", i)
		if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchList(b *testing.B, n int, opts store.ListOptions, want int) {
	s := newBenchStore(b)
	seedBench(b, s, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		list := &resource.VirtualClusterInstanceList{}
		if err := s.List(ctx, list, opts); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) != want {
			b.Fatalf("listed %d, want %d", len(list.Items), want)
		}
	}
}

func BenchmarkList1000(b *testing.B)  { benchList(b, 1000, store.ListOptions{}, 1000) }
func BenchmarkList10000(b *testing.B) { benchList(b, 10000, store.ListOptions{}, 10000) }
func BenchmarkListSelector1PercentOf10000(b *testing.B) {
	benchList(b, 10000, store.ListOptions{LabelSelector: "one-in-hundred=true"}, 100)
}

// BenchmarkWatch100 measures one update delivered to 100 watchers: an op is the write
// plus every watcher receiving its event.
func BenchmarkWatch100(b *testing.B) {
	s := newBenchStore(b)
	ctx := context.Background()
	obj := benchInstance(0)
	if err := s.Create(ctx, obj, store.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	watchers := make([]*store.Watcher, 100)
	for i := range watchers {
		w, err := s.Watch(ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{ResourceVersion: obj.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		watchers[i] = w
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		obj.Spec.DisplayName = fmt.Sprintf("watched %d", i) // differs from the created value, so every update writes
		if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		for _, w := range watchers {
			if ev := <-w.ResultChan(); ev.Type != store.Modified {
				b.Fatalf("event %s", ev.Type)
			}
		}
	}
}
