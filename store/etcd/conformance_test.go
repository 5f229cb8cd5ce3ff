package etcd_test

import (
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
	"github.com/management-service/mgmt/store/storetest"
)

// TestConformance runs the backend contract suite on the shared etcd, each case on a
// backend of its own under a fresh prefix, with a client of its own.
func TestConformance(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) backend.Backend {
		return newBackend(t, etcd.Options{})
	})
}
