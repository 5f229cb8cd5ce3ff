package migrate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// idempotencyCases are the cases of request names that are not reliability cases;
// REL-MIG-IDEMPOTENT is in package migratetest.
func idempotencyCases() []suiteCase {
	return []suiteCase{
		{name: "generateName records each request under a fresh name", run: testGenerateName},
		{name: "a request without name or generateName is recorded under a generated name", run: testNoName},
	}
}

func testGenerateName(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	there := migratetest.Request("", "p-a", "dev")
	there.GenerateName = "mv-"
	r1 := e.Migrate("b", there)
	back := migratetest.Request("", "p-b", "dev")
	back.GenerateName = "mv-"
	r2 := e.Migrate("a", back)
	assert.Regexp(t, `^mv-[a-z0-9]{5}$`, r1.Name)
	assert.Regexp(t, `^mv-[a-z0-9]{5}$`, r2.Name)
	assert.NotEqual(t, r1.Name, r2.Name)
	assert.Equal(t, "mv-", r1.GenerateName)
	assert.Equal(t, "p-b", r1.Status.Namespace)
	assert.Equal(t, "p-a", r2.Status.Namespace)

	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.Store.List(e.Ctx, &recs, store.ListOptions{LabelSelector: resource.LabelProject + "=b"}))
	require.Len(t, recs.Items, 1)
	assert.Equal(t, e.Service.RecordName("b", r1.Name), recs.Items[0].Name)
}

func testNoName(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	res := e.Migrate("b", migratetest.Request("", "p-a", "dev"))
	assert.Regexp(t, `^`+migrate.DefaultGenerateName+`[a-z0-9]{5}$`, res.Name)
	rec := &resource.ProjectMigrateVirtualClusterInstance{}
	require.NoError(t, e.Store.Get(e.Ctx, "", e.Service.RecordName("b", res.Name), rec, store.GetOptions{}))
	rec.Name = res.Name
	assert.Equal(t, res, rec)
}
