package store_test

import (
	"testing"

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
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
		storetest.SeedBench(b, s, n)
		return s
	})
}
