package badger_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// TestConformance runs the backend contract suite on a badger directory with synced
// writes, the default.
func TestConformance(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) backend.Backend {
		b, err := badger.Open(t.TempDir(), badger.Options{})
		require.NoError(t, err)
		return b
	})
}

// TestConformance_InMemory runs the backend contract suite in badger's in-memory
// mode.
func TestConformance_InMemory(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) backend.Backend {
		b, err := badger.Open("", badger.Options{InMemory: true})
		require.NoError(t, err)
		return b
	})
}
