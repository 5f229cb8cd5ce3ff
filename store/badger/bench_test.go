package badger_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
)

// The benchmarks run the operations of store/bench_test.go through the store on
// badger, each with synced writes ("sync", the default) and without ("nosync"),
// and add the 16-writer group-commit benchmarks.

var benchModes = []struct {
	name   string
	noSync bool
}{{"sync", false}, {"nosync", true}}

// benchInstance is the ~1 KB VirtualClusterInstance with 5 labels of
// store/bench_test.go.
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

// newBenchStore opens a store on a fresh badger directory, seeded with n instances
// (written without sync by 16 writers, then reopened in the mode asked for).
func newBenchStore(b *testing.B, noSync bool, n int) (*store.Store, *badger.Backend) {
	b.Helper()
	dir := b.TempDir()
	if n > 0 {
		be, err := badger.Open(dir, badger.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		s, err := store.New(be, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					if err := s.Create(context.Background(), benchInstance(i), store.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		_ = s.Close()
		if err := be.Close(); err != nil {
			b.Fatal(err)
		}
	}
	be, err := badger.Open(dir, badger.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.New(be, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
	return s, be
}

func BenchmarkCreate(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newBenchStore(b, m.noSync, 0)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Create(ctx, benchInstance(i), store.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newBenchStore(b, m.noSync, 100)
			ctx := context.Background()
			out := &resource.VirtualClusterInstance{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Get(ctx, "p-bench", fmt.Sprintf("vci-%06d", i%100), out, store.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newBenchStore(b, m.noSync, 0)
			ctx := context.Background()
			obj := benchInstance(0)
			if err := s.Create(ctx, obj, store.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				obj.Spec.DisplayName = fmt.Sprintf("Instance %d", i+1) // i+1: "Instance 0" is the created value, a no-op update
				if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchList(b *testing.B, n int, opts store.ListOptions, want int) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newBenchStore(b, m.noSync, n)
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
		})
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
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			s, _ := newBenchStore(b, m.noSync, 0)
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
				obj.Spec.DisplayName = fmt.Sprintf("Instance %d", i+1) // i+1: "Instance 0" is the created value, a no-op update
				if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
				for _, w := range watchers {
					if ev := <-w.ResultChan(); ev.Type != store.Modified {
						b.Fatalf("event %s", ev.Type)
					}
				}
			}
		})
	}
}

// runWriters runs op b.N times in all, spread over writers goroutines, and reports
// the throughput and the transactions per badger commit.
func runWriters(b *testing.B, be *badger.Backend, writers int, op func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	batches0, txns0 := badger.Batches(be)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < b.N; i = int(next.Add(1) - 1) {
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	batches, txns := badger.Batches(be)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	if batches > batches0 {
		b.ReportMetric(float64(txns-txns0)/float64(batches-batches0), "txns/commit")
	}
}

// BenchmarkCreateWriters measures creates through the store from 1 and 16
// concurrent writers: with 16, the committer groups their transactions into shared
// commits (one fsync each with sync on).
func BenchmarkCreateWriters(b *testing.B) {
	for _, m := range benchModes {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", m.name, writers), func(b *testing.B) {
				s, be := newBenchStore(b, m.noSync, 0)
				ctx := context.Background()
				runWriters(b, be, writers, func(i int) error {
					return s.Create(ctx, benchInstance(i), store.CreateOptions{})
				})
			})
		}
	}
}

// BenchmarkBackendTxnWriters measures the backend alone: a compare-and-create of one
// 1 KB value per transaction from 1 and 16 concurrent writers.
func BenchmarkBackendTxnWriters(b *testing.B) {
	value := make([]byte, 1024)
	for _, m := range benchModes {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", m.name, writers), func(b *testing.B) {
				be, err := badger.Open(b.TempDir(), badger.Options{NoSync: m.noSync})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = be.Close() })
				ctx := context.Background()
				runWriters(b, be, writers, func(i int) error {
					key := fmt.Sprintf("k/%08d", i)
					res, err := be.Txn(ctx, backend.Txn{
						Compares: []backend.Compare{{Key: key, ModRevision: 0}},
						Ops:      []backend.Op{{Key: key, Value: value}},
					})
					if err == nil && !res.Succeeded {
						err = fmt.Errorf("compare failed on %s", key)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkRawBadgerWriters is the baseline of BenchmarkBackendTxnWriters: badger
// itself, one transaction per write of one 1 KB value (a set, with no revision, no
// history and no event log), from 1 and 16 concurrent writers. Badger syncs each
// commit on its own, so concurrent writers share no sync.
func BenchmarkRawBadgerWriters(b *testing.B) {
	value := make([]byte, 1024)
	for _, m := range benchModes {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", m.name, writers), func(b *testing.B) {
				db, err := dgbadger.Open(dgbadger.DefaultOptions(b.TempDir()).WithLogger(nil).WithSyncWrites(!m.noSync))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = db.Close() })
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
							err := db.Update(func(txn *dgbadger.Txn) error { return txn.Set(fmt.Appendf(nil, "k/%08d", i), value) })
							if err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
			})
		}
	}
}
