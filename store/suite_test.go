package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStoreSemantics runs the conformance suite here too, where every write checks
// that the object it hands to the cache and the tracker is the stored one.
func TestStoreSemantics(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T) backend.Backend {
		b := memdb.New(memdb.Options{})
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
	assert.Empty(t, store.ResultProblems())
}
