package etcd_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
	"github.com/management-service/mgmt/store/storetest"
)

// The benchmarks run the store benchmarks of every backend (storetest.RunBenchmarks)
// on etcd, and the backend operations of store/memdb's benchmarks, against a
// single-member etcd on loopback in the same process: "sync" is etcd as deployed
// (its WAL fsynced on each commit), "nosync" runs it with --unsafe-no-fsync, the
// etcd the tests use.

var benchModes = []struct {
	name   string
	noSync bool
}{{"sync", false}, {"nosync", true}}

var syncEtcd struct {
	once      sync.Once
	endpoints []string
	err       error
}

// benchEndpoints returns the endpoints of the etcd of a mode: the tests' shared
// one without fsync, and one started on first use with fsync, stopped by TestMain.
func benchEndpoints(b *testing.B, noSync bool) []string {
	b.Helper()
	if noSync {
		return sharedEndpoints
	}
	syncEtcd.once.Do(func() {
		dir, err := os.MkdirTemp("", "mgmt-store-etcd-sync-")
		if err != nil {
			syncEtcd.err = err
			return
		}
		members, err := startClusterWith(context.Background(), []string{dir}, false)
		if err != nil {
			syncEtcd.err = err
			return
		}
		syncEtcd.endpoints = members[0].endpoints
		afterAll = append(afterAll, func() { members[0].stop(); _ = os.RemoveAll(dir) })
	})
	if syncEtcd.err != nil {
		b.Fatal(syncEtcd.err)
	}
	return syncEtcd.endpoints
}

// seeded remembers the prefixes already seeded with n instances, per mode: the
// list benchmarks only read, so their runs share one seeding.
var seeded sync.Map // "mode/n" → prefix

// newBenchStore returns a store on etcd under a prefix holding n instances.
func newBenchStore(b *testing.B, noSync bool, n int) *store.Store {
	b.Helper()
	prefix := testPrefix()
	if n > 0 {
		if p, ok := seeded.Load(fmt.Sprintf("%t/%d", noSync, n)); ok {
			prefix = p.(string)
		} else {
			seed(b, noSync, prefix, n)
			seeded.Store(fmt.Sprintf("%t/%d", noSync, n), prefix)
		}
	}
	be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, noSync), Prefix: prefix})
	s, err := store.New(be, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// seed creates n instances under prefix with 16 writers.
func seed(b *testing.B, noSync bool, prefix string, n int) {
	b.Helper()
	be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, noSync), Prefix: prefix})
	s, err := store.New(be, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.SeedBench(b, s, n)
}

// BenchmarkStore runs the store benchmarks of every backend (storetest.RunBenchmarks)
// on etcd, with fsync and without.
func BenchmarkStore(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			storetest.RunBenchmarks(b, func(b *testing.B, n int) *store.Store { return newBenchStore(b, m.noSync, n) })
		})
	}
}

// benchKeys writes n keys "k/00000".. with 200-byte values, one transaction each.
func benchKeys(b *testing.B, be backend.Backend, n int) []string {
	b.Helper()
	keys := make([]string, n)
	value := make([]byte, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("k/%05d", i)
		if _, err := be.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: keys[i], Value: value}}}); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// BenchmarkBackendTxnPut measures a read and a compare-and-swap write of one 200-byte
// value over 1,000 keys, as store/memdb's BenchmarkTxnPut.
func BenchmarkBackendTxnPut(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, m.noSync)})
			keys := benchKeys(b, be, 1000)
			ctx := context.Background()
			value := make([]byte, 200)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := keys[i%len(keys)]
				kv, err := be.Get(ctx, k, 0)
				if err != nil {
					b.Fatal(err)
				}
				res, err := be.Txn(ctx, backend.Txn{
					Compares: []backend.Compare{{Key: k, ModRevision: kv.ModRevision}},
					Ops:      []backend.Op{{Key: k, Value: value}},
				})
				if err != nil || !res.Succeeded {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkBackendGet measures a linearizable read of one key of 1,000.
func BenchmarkBackendGet(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, m.noSync)})
			keys := benchKeys(b, be, 1000)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := be.Get(ctx, keys[i%len(keys)], 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBackendGetAtRevision measures a read of one key at a past revision: an
// etcd transaction of two ranges (see the package documentation).
func BenchmarkBackendGetAtRevision(b *testing.B) {
	be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, true)})
	keys := benchKeys(b, be, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := be.Get(ctx, keys[i%len(keys)], 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBackendTxnWriters measures compare-and-create transactions of one 1 KB
// value from 1 and 16 concurrent writers, as store/badger's benchmark of that name:
// etcd batches concurrent proposals into one raft entry and one fsync.
func BenchmarkBackendTxnWriters(b *testing.B) {
	value := make([]byte, 1024)
	for _, m := range benchModes {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", m.name, writers), func(b *testing.B) {
				be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, m.noSync)})
				ctx := context.Background()
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
							key := fmt.Sprintf("k/%08d", i)
							res, err := be.Txn(ctx, backend.Txn{
								Compares: []backend.Compare{{Key: key, ModRevision: 0}},
								Ops:      []backend.Op{{Key: key, Value: value}},
							})
							if err == nil && !res.Succeeded {
								err = fmt.Errorf("compare failed on %s", key)
							}
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

// BenchmarkBackendWatchFanout100 measures one write delivered to 100 backend watchers
// of every key, as store/memdb's BenchmarkWatchFanout100.
func BenchmarkBackendWatchFanout100(b *testing.B) {
	be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, true)})
	ctx := context.Background()
	ws := make([]backend.Watcher, 100)
	for i := range ws {
		w, err := be.Watch(ctx, backend.WatchOptions{Prefix: "k/"})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	value := make([]byte, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := be.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("k/%d", i%1000), Value: value}}})
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range ws {
			if ev := <-w.Events(); ev.Revision != res.Revision {
				b.Fatalf("watcher got revision %d, want %d", ev.Revision, res.Revision)
			}
		}
	}
}
