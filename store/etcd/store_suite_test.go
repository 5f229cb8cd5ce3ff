package etcd_test

import (
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStoreSemantics runs the store semantics suite on the shared etcd, each case on
// a backend of its own under a fresh prefix.
func TestStoreSemantics(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T) backend.Backend {
		return newBackend(t, etcd.Options{})
	})
}
