package badger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// BenchmarkSyncedAgainstRaw measures, in one run, the targets of synced writes against
// badger itself on the same disk: a Store.Create from one writer against a raw synced
// badger set of the same object's JSON (one transaction per write), and the
// throughput of 16 concurrent writers of each, each on its own directory. The disk's
// sync latency on a shared machine varies by the second, so the two sides take turns
// at a fine grain: one writer alternates one write of each, 16 writers alternate
// bursts of 200 writes. Each of b.N rounds yields one ratio of each kind; the values
// reported are medians over the rounds (run it with -benchtime=5x or more):
//
//   - create-ns, raw-set-ns: one writer, per write;
//   - create/raw: the median of the rounds' ratios (target ≤ 1.5);
//   - ours16-ops/s, raw16-ops/s: 16 writers' throughput;
//   - ours16/raw16: the median of the rounds' ratios (target ≥ 2.5).
func BenchmarkSyncedAgainstRaw(b *testing.B) {
	const (
		soloOps = 100 // per side and round
		writers = 16
		burst   = 200 // writes of one burst of 16 writers
		bursts  = 4   // per side and round
	)
	s, _ := newBenchStore(b, false, 0)
	db, err := dgbadger.Open(dgbadger.DefaultOptions(b.TempDir()).WithLogger(nil).WithSyncWrites(true))
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	next := 0 // the next object number: every write creates a new object
	// timed runs ops writes from writers goroutines and returns the elapsed time.
	timed := func(ops, writers int, write func(i int) error) time.Duration {
		first := next
		next += ops
		var n atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := int(n.Add(1) - 1); k < ops; k = int(n.Add(1) - 1) {
					if err := write(first + k); err != nil {
						assert.NoError(b, err) // not require: maybe not the benchmark's goroutine
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	ours := func(i int) error {
		return s.Create(ctx, storetest.BenchInstance(i), store.CreateOptions{})
	}
	raw := func(i int) error {
		value, err := json.Marshal(storetest.BenchInstance(i))
		if err != nil {
			return err
		}
		key := fmt.Appendf(nil, "/management.service/virtualclusterinstances/p-bench/vci-%06d", i)
		return db.Update(func(txn *dgbadger.Txn) error { return txn.Set(key, value) })
	}
	var createNs, rawNs, soloRatio, ours16, raw16, concurRatio []float64
	b.ResetTimer()
	for round := range b.N {
		var o1, r1, o16, r16 time.Duration
		for k := range soloOps {
			if (round+k)%2 == 0 {
				r1 += timed(1, 1, raw)
				o1 += timed(1, 1, ours)
			} else {
				o1 += timed(1, 1, ours)
				r1 += timed(1, 1, raw)
			}
		}
		for k := range bursts {
			if (round+k)%2 == 0 {
				r16 += timed(burst, writers, raw)
				o16 += timed(burst, writers, ours)
			} else {
				o16 += timed(burst, writers, ours)
				r16 += timed(burst, writers, raw)
			}
		}
		createNs = append(createNs, float64(o1.Nanoseconds())/soloOps)
		rawNs = append(rawNs, float64(r1.Nanoseconds())/soloOps)
		soloRatio = append(soloRatio, float64(o1)/float64(r1))
		ours16 = append(ours16, burst*bursts/o16.Seconds())
		raw16 = append(raw16, burst*bursts/r16.Seconds())
		concurRatio = append(concurRatio, float64(r16)/float64(o16))
	}
	b.StopTimer()
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(0, "ns/op") // a round is not an operation: see the metrics below
	b.ReportMetric(median(createNs), "create-ns")
	b.ReportMetric(median(rawNs), "raw-set-ns")
	b.ReportMetric(median(soloRatio), "create/raw")
	b.ReportMetric(median(ours16), "ours16-ops/s")
	b.ReportMetric(median(raw16), "raw16-ops/s")
	b.ReportMetric(median(concurRatio), "ours16/raw16")
}
