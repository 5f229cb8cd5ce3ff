package badger_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// The benchmarks run the store benchmarks of every backend (storetest.RunBenchmarks)
// on badger, each with synced writes ("sync", the default) and without ("nosync"),
// and add the 16-writer group-commit benchmarks.

var benchModes = []struct {
	name   string
	noSync bool
}{{"sync", false}, {"nosync", true}}

// newBenchStore opens a store on a fresh badger directory, seeded with n instances
// (written without sync by 16 writers, then reopened in the mode asked for).
func newBenchStore(b *testing.B, noSync bool, n int) (*store.Store, *badger.Backend) {
	b.Helper()
	dir := b.TempDir()
	if n > 0 {
		be, err := badger.Open(dir, badger.Options{NoSync: true})
		require.NoError(b, err)
		s, err := store.New(be, store.Options{})
		require.NoError(b, err)
		storetest.SeedBench(b, s, n)
		_ = s.Close()
		require.NoError(b, be.Close())
	}
	be, err := badger.Open(dir, badger.Options{NoSync: noSync})
	require.NoError(b, err)
	s, err := store.New(be, store.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
	return s, be
}

// BenchmarkBackend runs the backend benchmarks of every backend
// (storetest.RunBackendBenchmarks) on badger, with synced writes and without.
func BenchmarkBackend(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			storetest.RunBackendBenchmarks(b, func(b *testing.B) backend.Backend {
				be, err := badger.Open(b.TempDir(), badger.Options{NoSync: m.noSync})
				require.NoError(b, err)
				b.Cleanup(func() { _ = be.Close() })
				return be
			})
		})
	}
}

// BenchmarkStore runs the store benchmarks of every backend (storetest.RunBenchmarks)
// on badger, with synced writes and without.
func BenchmarkStore(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			storetest.RunBenchmarks(b, func(b *testing.B, n int) *store.Store {
				s, _ := newBenchStore(b, m.noSync, n)
				return s
			})
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
					assert.NoError(b, err) // not require: this is not the benchmark's goroutine
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
					return s.Create(ctx, storetest.BenchInstance(i), store.CreateOptions{})
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
				require.NoError(b, err)
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
				require.NoError(b, err)
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
								assert.NoError(b, err) // not require: this is not the benchmark's goroutine
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
