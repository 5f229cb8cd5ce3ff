package etcd_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(b, syncEtcd.err)
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
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// seed creates n instances under prefix with 16 writers.
func seed(b *testing.B, noSync bool, prefix string, n int) {
	b.Helper()
	be := newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, noSync), Prefix: prefix})
	s, err := store.New(be, store.Options{})
	require.NoError(b, err)
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

// BenchmarkBackend runs the backend benchmarks of every backend
// (storetest.RunBackendBenchmarks) on etcd, with fsync and without. A read at a past
// revision is an etcd transaction of two ranges (see the package documentation).
func BenchmarkBackend(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			storetest.RunBackendBenchmarks(b, func(b *testing.B) backend.Backend {
				return newBackend(b, etcd.Options{Endpoints: benchEndpoints(b, m.noSync)})
			})
		})
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
								assert.NoError(b, err) // a writer goroutine: assert, not require
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
