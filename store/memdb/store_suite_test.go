package memdb_test

import (
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStoreSemantics runs the store semantics suite on memdb.
func TestStoreSemantics(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T) backend.Backend {
		b := memdb.New(memdb.Options{})
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}
