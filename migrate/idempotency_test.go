package migrate_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func idempotencyCases() []suiteCase {
	return []suiteCase{
		{name: "REL-MIG-IDEMPOTENT the same name again returns the recorded result and moves nothing", run: testSameNameTwice},
		{name: "REL-MIG-IDEMPOTENT the record decides even after the instance moved back", run: testRecordDecides},
		{name: "REL-MIG-IDEMPOTENT concurrent duplicates: one move, the same response for all", run: testConcurrentDuplicates},
		{name: "generateName records each request under a fresh name", run: testGenerateName},
		{name: "a request without name or generateName is recorded under a generated name", run: testNoName},
	}
}

func testSameNameTwice(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	first := e.migrate("b", request("mv", "p-a", "dev"))
	rev, state := e.revision(), e.state()
	for i := 0; i < 4; i++ {
		again := e.migrate("b", request("mv", "p-a", "dev"))
		assert.Equal(t, first, again)
	}
	assert.Equal(t, rev, e.revision(), "a replay writes nothing")
	assert.Equal(t, state, e.state())
}

func testRecordDecides(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	first := e.migrate("b", request("there", "p-a", "dev"))
	back := e.migrate("a", request("back", "p-b", "dev"))
	assert.Equal(t, "p-a", back.Status.Namespace)
	rev := e.revision()

	again := e.migrate("b", request("there", "p-a", "dev"))
	assert.Equal(t, first, again, "the recorded result, not a second move")
	assert.Equal(t, rev, e.revision())
	assert.NotNil(t, e.get("p-a", "dev"), "the instance stays where the last move put it")
	assert.Nil(t, e.get("p-b", "dev"))

	// A fresh name moves again.
	third := e.migrate("b", request("there-again", "p-a", "dev"))
	assert.Equal(t, "p-b", third.Status.Namespace)
	assert.NotEqual(t, first.Status.UID, third.Status.UID)
}

func testConcurrentDuplicates(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	const n = 8
	rounds := 20
	if raceEnabled {
		rounds = 5
	}
	for r := 0; r < rounds; r++ {
		from, to, target := "p-a", "p-b", "b"
		if r%2 == 1 {
			from, to, target = "p-b", "p-a", "a"
		}
		name := "dup-" + string(rune('a'+r))
		rev := e.revision()
		var wg sync.WaitGroup
		res := make([]*resource.ProjectMigrateVirtualClusterInstance, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i], errs[i] = e.svc.Migrate(e.ctx, target, request(name, from, "dev"), admin(), migrate.RequestOptions{})
			}()
		}
		close(start)
		wg.Wait()
		for i := 0; i < n; i++ {
			require.NoError(t, errs[i], "request %d", i)
			assert.Equal(t, res[0], res[i], "request %d", i)
		}
		assert.Equal(t, rev+1, e.revision(), "exactly one move")
		moved := e.get(to, "dev")
		require.NotNil(t, moved)
		assert.Equal(t, moved.UID, res[0].Status.UID)
		assert.Nil(t, e.get(from, "dev"))
	}
	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.S.List(e.ctx, &recs, store.ListOptions{}))
	assert.Len(t, recs.Items, rounds)
	t.Logf("RESULT REL-MIG-IDEMPOTENT rounds=%d duplicates-per-round=%d moves=%d failures=0", rounds, n, rounds)
}

func testGenerateName(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	there := request("", "p-a", "dev")
	there.GenerateName = "mv-"
	r1 := e.migrate("b", there)
	back := request("", "p-b", "dev")
	back.GenerateName = "mv-"
	r2 := e.migrate("a", back)
	assert.Regexp(t, `^mv-[a-z0-9]{5}$`, r1.Name)
	assert.Regexp(t, `^mv-[a-z0-9]{5}$`, r2.Name)
	assert.NotEqual(t, r1.Name, r2.Name)
	assert.Equal(t, "mv-", r1.GenerateName)
	assert.Equal(t, "p-b", r1.Status.Namespace)
	assert.Equal(t, "p-a", r2.Status.Namespace)

	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.S.List(e.ctx, &recs, store.ListOptions{LabelSelector: resource.LabelProject + "=b"}))
	require.Len(t, recs.Items, 1)
	assert.Equal(t, r1.Name, recs.Items[0].Name)
}

func testNoName(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	res := e.migrate("b", request("", "p-a", "dev"))
	assert.Regexp(t, `^`+migrate.DefaultGenerateName+`[a-z0-9]{5}$`, res.Name)
	rec := &resource.ProjectMigrateVirtualClusterInstance{}
	require.NoError(t, e.S.Get(e.ctx, "", res.Name, rec, store.GetOptions{}))
	assert.Equal(t, res, rec)
}
