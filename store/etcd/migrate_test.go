package etcd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
)

// TestMigrate runs the migration service's reliability suite (REL-MIG-*) on etcd,
// unchanged: the same service, over a store on this backend.
func TestMigrate(t *testing.T) {
	migratetest.RunReliability(t, func(t *testing.T) backend.Backend { return newBackend(t, etcd.Options{}) })
}

// TestKill9Migration is REL-CRASH-KILL9-MIGRATION on etcd: the etcd server runs in
// this (the parent) process and outlives every child; the child is a client that
// migrates in a loop until it is killed, and the parent retries what was in flight.
func TestKill9Migration(t *testing.T) {
	migratetest.RunKill9(t, migratetest.Kill9Config{
		// The state is "<endpoints> <prefix>": the shared server and a fresh prefix.
		Setup: func(t *testing.T) string { return strings.Join(sharedEndpoints, ",") + " " + testPrefix() },
		OpenChild: func(state string) (backend.Backend, error) {
			endpoints, prefix, _ := strings.Cut(state, " ")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return etcd.New(ctx, etcd.Options{Endpoints: strings.Split(endpoints, ","), Prefix: prefix})
		},
		// etcd may still apply a transaction the dead child sent.
		Quiet: 300 * time.Millisecond,
	})
}
