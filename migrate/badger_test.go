package migrate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

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
func TestMigrate_Badger(t *testing.T) { runSuite(t, storeOver(badgerBackend)) }
