package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// BenchmarkStore runs the store benchmarks of every backend (storetest.RunBenchmarks)
// on memdb.
func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B, n int) *store.Store {
		be := memdb.New(memdb.Options{})
		s, err := store.New(be, store.Options{})
		require.NoError(b, err)
		b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
		storetest.SeedBench(b, s, n)
		return s
	})
}

// BenchmarkCreateAfterPause measures creates on memdb that each follow a pause of
// the writer of 250 µs, about what a synced badger commit makes a writer wait. In
// "busy" the writer spins through the pause; in "idle" it sleeps (at least the
// pause: the timer may round it up) and the CPU goes idle, as it does while a sync
// is on the disk; "none" has no pause. Only the creates are timed, reported as
// create-ns/op (ns/op includes the pauses). What idle costs over busy is what the
// store's work costs more when the writer comes back to a CPU that was idle: a
// back-to-back benchmark does not show it, and it is part of what a synced write
// costs over a raw synced badger write.
func BenchmarkCreateAfterPause(b *testing.B) {
	const pause = 250 * time.Microsecond
	for _, mode := range []string{"none", "busy", "idle"} {
		b.Run(mode, func(b *testing.B) {
			be := memdb.New(memdb.Options{})
			s, err := store.New(be, store.Options{})
			require.NoError(b, err)
			b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
			ctx := context.Background()
			objs := make([]*resource.VirtualClusterInstance, b.N)
			for i := range objs {
				objs[i] = storetest.BenchInstance(i)
			}
			var creating time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				switch mode {
				case "busy":
					for end := time.Now().Add(pause); time.Now().Before(end); {
					}
				case "idle":
					time.Sleep(pause)
				}
				start := time.Now()
				if err := s.Create(ctx, objs[i], store.CreateOptions{}); err != nil {
					require.NoError(b, err) // only on failure: b.Helper is not free in the timed loop
				}
				creating += time.Since(start)
			}
			b.ReportMetric(float64(creating.Nanoseconds())/float64(b.N), "create-ns/op")
		})
	}
}
