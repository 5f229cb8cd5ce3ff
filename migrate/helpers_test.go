package migrate_test

import (
	"testing"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// newStoreFunc makes the store a case runs on: a fresh, empty one per call, closed
// (and checked) when the test ends. The suite runs on every backend through it.
type newStoreFunc func(t *testing.T) *store.Store

// memdbBackend returns a fresh memdb backend, closed when the test ends.
func memdbBackend(t *testing.T) backend.Backend {
	b := memdb.New(memdb.Options{})
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// suiteCase is one case of the migrate suite.
type suiteCase struct {
	name string
	run  func(t *testing.T, newStore newStoreFunc)
}

// runSuite runs every case of the migrate suite, then the reliability suite of
// package migratetest, on stores over backends from newBackend.
func runSuite(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	var all []suiteCase
	all = append(all, checkCases()...)
	all = append(all, moveCases()...)
	all = append(all, idempotencyCases()...)
	all = append(all, authzCases()...)
	newStore := func(t *testing.T) *store.Store { return migratetest.NewStore(t, newBackend) }
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore) })
	}
	migratetest.RunReliability(t, newBackend)
}

// TestMigrate runs the suite on memdb. CI runs its reliability cases at full size
// with -run 'TestMigrate$/REL-'.
func TestMigrate(t *testing.T) { runSuite(t, memdbBackend) }

// newEnv returns the seeded environment of package migratetest over a fresh store.
func newEnv(t *testing.T, newStore newStoreFunc) *migratetest.Env {
	t.Helper()
	return migratetest.NewEnv(t, newStore(t))
}

func projectsScope(projects ...string) *resource.AccessKeyScope {
	s := &resource.AccessKeyScope{}
	for _, p := range projects {
		s.Projects = append(s.Projects, resource.AccessKeyScopeProject{Project: p})
	}
	return s
}

// requireReason checks err's reason (and so code) and, when field is set, a cause
// at field (of a 422 Invalid).
func requireReason(t *testing.T, err error, reason resource.StatusReason, field string) {
	t.Helper()
	storetest.RequireReason(t, err, reason)
	if field != "" {
		storetest.RequireCause(t, err, field, "")
	}
}
