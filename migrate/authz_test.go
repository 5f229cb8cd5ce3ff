package migrate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func authzCases() []suiteCase {
	return []suiteCase{
		{name: "issue 18: a caller without the rights gets the same answer whether what it names exists or not", run: testSameAnswer},
		{name: "issue 18: a reused move name answers without naming the recorded move", run: testRecordNotNamed},
		{name: "issue 18: a move name recorded for one project does not block another project's move", run: testRecordNotSquatted},
	}
}

// hiddenEnv adds project c, which the scoped callers of these tests may not see,
// with the instance p-c/hidden, and project d.
func hiddenEnv(t *testing.T, newStore newStoreFunc) *migratetest.Env {
	e := newEnv(t, newStore)
	e.Create(migratetest.Project("c"))
	e.Create(migratetest.Project("d"))
	e.SeedInstance("p-c", "hidden")
	return e
}

func testSameAnswer(t *testing.T, newStore newStoreFunc) {
	e := hiddenEnv(t, newStore)
	terminating := migratetest.Instance("p-c", "leaving")
	e.Create(terminating)
	_, err := e.Store.Delete(e.Ctx, terminating, store.DeleteOptions{})
	require.NoError(t, err)
	e.Create(migratetest.Instance("p-b", "hidden")) // the name is taken in the target too
	caller := migratetest.ScopedCaller(projectsScope("a", "b"))

	// Each pair differs only in whether what the request names exists.
	for _, c := range []struct {
		name         string
		target       string
		src, missing string // the existing and the missing instance, in p-c
	}{
		{name: "an instance in a project the caller may not read", target: "b", src: "hidden", missing: "ghost"},
		{name: "an instance being deleted in such a project", target: "b", src: "leaving", missing: "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.State()
			_, errExisting := e.Service.Migrate(e.Ctx, c.target, migratetest.Request("mv", "p-c", c.src), caller, migrate.RequestOptions{})
			_, errMissing := e.Service.Migrate(e.Ctx, c.target, migratetest.Request("mv", "p-c", c.missing), caller, migrate.RequestOptions{})
			requireReason(t, errExisting, resource.ReasonForbidden, "")
			requireReason(t, errMissing, resource.ReasonForbidden, "")
			assert.Equal(t, strings.ReplaceAll(errExisting.Error(), c.src, c.missing), errMissing.Error())
			assert.Equal(t, before, e.State())
		})
	}
	t.Run("a target project the caller may not use, existing or not", func(t *testing.T) {
		_, errExisting := e.Service.Migrate(e.Ctx, "d", migratetest.Request("mv", "p-a", "dev"), caller, migrate.RequestOptions{})
		_, errMissing := e.Service.Migrate(e.Ctx, "z", migratetest.Request("mv", "p-a", "dev"), caller, migrate.RequestOptions{})
		requireReason(t, errExisting, resource.ReasonForbidden, "")
		requireReason(t, errMissing, resource.ReasonForbidden, "")
		assert.Equal(t, strings.ReplaceAll(errExisting.Error(), `"d"`, `"z"`), strings.ReplaceAll(errMissing.Error(), `"p-z"`, `"p-d"`))
	})
}

func testRecordNotNamed(t *testing.T, newStore newStoreFunc) {
	e := hiddenEnv(t, newStore)
	e.Migrate("d", migratetest.Request("mv", "p-c", "hidden")) // by the admin
	// A caller of a and d (not c) reuses the name for its own move into d.
	caller := migratetest.ScopedCaller(projectsScope("a", "d"))
	before := e.State()
	_, err := e.Service.Migrate(e.Ctx, "d", migratetest.Request("mv", "p-a", "dev"), caller, migrate.RequestOptions{})
	requireReason(t, err, resource.ReasonAlreadyExists, "")
	for _, hidden := range []string{"hidden", "p-c", `"c"`} {
		assert.NotContains(t, err.Error(), hidden)
	}
	assert.Equal(t, before, e.State())
}

func testRecordNotSquatted(t *testing.T, newStore newStoreFunc) {
	e := hiddenEnv(t, newStore)
	// A caller of projects a and b records "release-1" first, into b...
	squatter := migratetest.ScopedCaller(projectsScope("a", "b"))
	e.SeedInstance("p-a", "other")
	_, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("release-1", "p-a", "other"), squatter, migrate.RequestOptions{})
	require.NoError(t, err)
	// ...and the team of c and d still moves under that name into d.
	team := migratetest.ScopedCaller(projectsScope("c", "d"))
	res, err := e.Service.Migrate(e.Ctx, "d", migratetest.Request("release-1", "p-c", "hidden"), team, migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Equal(t, "release-1", res.Name)
	assert.Equal(t, "p-d", res.Status.Namespace)
	// Each replay answers its own project's record.
	again, err := e.Service.Migrate(e.Ctx, "d", migratetest.Request("release-1", "p-c", "hidden"), team, migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Equal(t, res, again)
}
