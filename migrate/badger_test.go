package migrate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
)

// badgerBackend opens a badger backend in a fresh directory, with synced writes
// (the default), closed when the test ends.
func badgerBackend(t *testing.T) backend.Backend {
	b, err := badger.Open(t.TempDir(), badger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestMigrate_Badger runs the migrate suite on the durable backend.
func TestMigrate_Badger(t *testing.T) { runSuite(t, badgerBackend) }

// TestKill9Migration is REL-CRASH-KILL9-MIGRATION on badger: a child process (this
// test, run again by migratetest.RunKill9) migrates in a loop in a directory and is
// killed with SIGKILL, round after round. CI runs it with -run 'TestKill9Migration';
// MGMT_MIGRATE_CRASH_ROUNDS (or MGMT_CRASH_ROUNDS) sets the number of rounds.
func TestKill9Migration(t *testing.T) {
	migratetest.RunKill9(t, migratetest.Kill9Config{
		OpenChild: func(dir string) (backend.Backend, error) { return badger.Open(dir, badger.Options{}) },
	})
}
