package memdb_test

import (
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// BenchmarkBackend runs the backend benchmarks of every backend
// (storetest.RunBackendBenchmarks) on memdb, with the default history of 10,000
// revisions.
func BenchmarkBackend(b *testing.B) {
	storetest.RunBackendBenchmarks(b, func(b *testing.B) backend.Backend {
		be := memdb.New(memdb.Options{})
		b.Cleanup(func() { _ = be.Close() })
		return be
	})
}
