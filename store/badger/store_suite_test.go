package badger_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStoreSemantics runs the store semantics suite on a badger directory with
// synced writes, the default.
func TestStoreSemantics(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T) backend.Backend {
		b, err := badger.Open(t.TempDir(), badger.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}
