package migratetest_test

import (
	"testing"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/memdb"
)

// A backend's tests run the reliability suite on fresh backends; here memdb. The
// function is a test of the backend's package (func TestMigrate(t *testing.T)).
func ExampleRunReliability() {
	testMigrate := func(t *testing.T) {
		migratetest.RunReliability(t, func(t *testing.T) backend.Backend {
			b := memdb.New(memdb.Options{})
			t.Cleanup(func() { _ = b.Close() })
			return b
		})
	}
	_ = testMigrate
}

// The crash test on badger: the state is a directory (Setup nil: a fresh one),
// which the child and the parent open in turn. The function is a test of the
// backend's package (func TestKill9Migration(t *testing.T)), and the child's entry
// point too: RunKill9 is the first thing it does.
//
// For a backend that is a client of a server (etcd), Setup starts the server in the
// parent, registers its stop with t.Cleanup and returns its endpoint and a fresh key
// prefix as one string; OpenChild connects to it; Quiet (some 200ms) lets the server
// apply what a killed child had sent before the parent looks.
func ExampleRunKill9() {
	testKill9Migration := func(t *testing.T) {
		migratetest.RunKill9(t, migratetest.Kill9Config{
			OpenChild: func(dir string) (backend.Backend, error) {
				return badger.Open(dir, badger.Options{})
			},
		})
	}
	_ = testKill9Migration
}
