package migrate_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func moveCases() []suiteCase {
	return []suiteCase{
		{name: "the move keeps the instance, rewrites its project, gives it a new uid and takes one revision", run: testHappyPath},
		{name: "a watcher of all namespaces sees DELETED then ADDED at one resourceVersion", run: testWatchEvents},
		{name: "an instance without status moves without one", run: testNoStatus},
		{name: "owner references follow as far as they can", run: testOwnerReferences},
		{name: "dryRun runs the move and stores nothing", run: testDryRun},
		{name: "a configured namespace prefix", run: testNamespacePrefix},
		{name: "the request object is not modified", run: testRequestUntouched},
	}
}

func testHappyPath(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	src := e.Get("p-a", "dev")
	rev := e.Revision()

	res, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Equal(t, rev+1, e.Revision(), "the move is one revision")

	moved := e.Get("p-b", "dev")
	require.NotNil(t, moved)
	assert.Nil(t, e.Get("p-a", "dev"), "the source is gone")

	// The response: the request, the record's metadata and the status.
	assert.Equal(t, resource.KindProjectMigrateVirtualClusterInstance, res.Kind)
	assert.Equal(t, resource.GroupVersion, res.APIVersion)
	assert.Equal(t, "mv", res.Name)
	assert.NotEmpty(t, res.UID)
	assert.Equal(t, strconv.FormatInt(rev+1, 10), res.ResourceVersion)
	assert.Equal(t, "b", res.Labels[resource.LabelProject])
	assert.Equal(t, resource.SourceVirtualClusterInstance{Namespace: "p-a", Name: "dev"}, res.SourceVirtualClusterInstance)
	assert.Equal(t, resource.ProjectMigrateVirtualClusterInstanceStatus{Namespace: "p-b", Name: "dev", UID: moved.UID}, res.Status)

	// The record is what the response is.
	rec := &resource.ProjectMigrateVirtualClusterInstance{}
	require.NoError(t, e.Store.Get(e.Ctx, "", e.Service.RecordName("b", "mv"), rec, store.GetOptions{}))
	assert.Equal(t, "b.mv", rec.Name, "recorded under the target project")
	rec.Name = "mv"
	assert.Equal(t, res, rec)

	// The instance: same name and spec, metadata kept, project rewritten, new uid.
	assert.NotEqual(t, src.UID, moved.UID)
	assert.Equal(t, src.Spec, moved.Spec)
	assert.Equal(t, map[string]string{resource.LabelProject: "b", "team": "blue"}, moved.Labels)
	assert.Equal(t, map[string]string{
		"example.com/note":                "keep me",
		resource.AnnotationMigratedFrom:   "p-a/dev",
		migrate.AnnotationMigratedFromUID: src.UID,
	}, moved.Annotations)
	assert.Equal(t, []string{migratetest.SeedFinalizer}, moved.Finalizers)
	assert.False(t, moved.IsTerminating())
	assert.Equal(t, migratetest.ReadyStatus, moved.Status, "status is carried over")
	assert.Equal(t, int64(1), moved.Generation)
	assert.Equal(t, strconv.FormatInt(rev+1, 10), moved.ResourceVersion)
	require.NotEmpty(t, moved.ManagedFields)
	assert.Equal(t, migrate.DefaultFieldManager, moved.ManagedFields[0].Manager)

	// Lists see exactly one copy.
	var l resource.VirtualClusterInstanceList
	require.NoError(t, e.Store.List(e.Ctx, &l, store.ListOptions{}))
	require.Len(t, l.Items, 1)
	assert.Equal(t, "p-b", l.Items[0].Namespace)
}

func testWatchEvents(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	src := e.Get("p-a", "dev")
	w, err := e.Store.Watch(e.Ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{ResourceVersion: strconv.FormatInt(e.Revision(), 10)})
	require.NoError(t, err)
	defer w.Stop()
	res := e.Migrate("b", migratetest.Request("mv", "p-a", "dev"))

	var evs []store.Event
	for len(evs) < 2 {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch ended")
			evs = append(evs, ev)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no event")
		}
	}
	assert.Equal(t, store.Deleted, evs[0].Type)
	assert.Equal(t, "p-a", evs[0].Object.GetObjectMeta().Namespace)
	assert.Equal(t, src.UID, evs[0].Object.GetObjectMeta().UID)
	assert.Equal(t, store.Added, evs[1].Type)
	assert.Equal(t, "p-b", evs[1].Object.GetObjectMeta().Namespace)
	assert.Equal(t, res.Status.UID, evs[1].Object.GetObjectMeta().UID)
	assert.Equal(t, migratetest.ReadyStatus, evs[1].Object.(*resource.VirtualClusterInstance).Status, "the ADDED carries the status")
	assert.Equal(t, res.ResourceVersion, evs[0].Object.GetObjectMeta().ResourceVersion)
	assert.Equal(t, res.ResourceVersion, evs[1].Object.GetObjectMeta().ResourceVersion)
	select {
	case ev := <-w.ResultChan():
		require.Failf(t, "unexpected event", "%s %s", ev.Type, ev.Object.GetObjectMeta().Name)
	case <-time.After(50 * time.Millisecond):
	}
}

func testNoStatus(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	e.Create(migratetest.Instance("p-a", "bare"))
	rev := e.Revision()
	e.Migrate("b", migratetest.Request("mv", "p-a", "bare"))
	assert.Equal(t, rev+1, e.Revision())
	moved := e.Get("p-b", "bare")
	require.NotNil(t, moved)
	assert.Equal(t, resource.VirtualClusterInstanceStatus{}, moved.Status)
}

func testOwnerReferences(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	a := &resource.Project{}
	require.NoError(t, e.Store.Get(e.Ctx, "", "a", a, store.GetOptions{}))
	b := &resource.Project{}
	require.NoError(t, e.Store.Get(e.Ctx, "", "b", b, store.GetOptions{}))
	e.Create(migratetest.Project("other"))
	other := &resource.Project{}
	require.NoError(t, e.Store.Get(e.Ctx, "", "other", other, store.GetOptions{}))
	parent := e.Get("p-a", "dev") // a namespaced owner in the source namespace

	inst := migratetest.Instance("p-a", "child")
	yes := true
	inst.OwnerReferences = []resource.OwnerReference{
		{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: "a", UID: a.UID, Controller: &yes},
		{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: "other", UID: other.UID},
		{APIVersion: resource.GroupVersion, Kind: resource.KindVirtualClusterInstance, Name: "dev", UID: parent.UID},
		{APIVersion: "example.com/v1", Kind: "Unknown", Name: "x", UID: "u-1"},
	}
	e.Create(inst)
	e.Migrate("b", migratetest.Request("mv", "p-a", "child"))
	require.NoError(t, e.Store.Settle(e.Ctx))

	moved := e.Get("p-b", "child")
	require.NotNil(t, moved, "the garbage collector must not take the moved instance")
	assert.Equal(t, []resource.OwnerReference{
		{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: "b", UID: b.UID, Controller: &yes},
		{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: "other", UID: other.UID},
		{APIVersion: "example.com/v1", Kind: "Unknown", Name: "x", UID: "u-1"},
	}, moved.OwnerReferences)
}

func testDryRun(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	before, rev := e.State(), e.Revision()
	res, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, "mv", res.Name)
	assert.Empty(t, res.ResourceVersion, "nothing was stored")
	assert.Equal(t, "p-b", res.Status.Namespace)
	assert.Equal(t, "dev", res.Status.Name)
	assert.NotEmpty(t, res.Status.UID)
	assert.Equal(t, rev, e.Revision())
	assert.Equal(t, before, e.State())

	// generateName runs in a dry run too.
	gen := migratetest.Request("", "p-a", "dev")
	gen.GenerateName = "mv-"
	res, err = e.Service.Migrate(e.Ctx, "b", gen, migratetest.Admin(), migrate.RequestOptions{DryRun: true})
	require.NoError(t, err)
	assert.Regexp(t, `^mv-[a-z0-9]{5}$`, res.Name)
	assert.Equal(t, rev, e.Revision())

	// The dry run recorded nothing: the real request of that name moves.
	res = e.Migrate("b", migratetest.Request("mv", "p-a", "dev"))
	assert.Equal(t, rev+1, e.Revision())
	assert.Equal(t, e.Get("p-b", "dev").UID, res.Status.UID)

	// A dry run of a recorded name answers the record.
	again, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, res, again)
}

func testNamespacePrefix(t *testing.T, newStore newStoreFunc) {
	s := newStore(t)
	svc, err := migrate.New(s, migrate.Options{NamespacePrefix: "loft-p-", FieldManager: "mover"})
	require.NoError(t, err)
	e := &migratetest.Env{T: t, Ctx: t.Context(), Store: s, Service: svc}
	e.Create(migratetest.Project("x"))
	e.Create(migratetest.Project("y"))
	inst := migratetest.Instance("p-x", "dev")
	inst.Namespace = "loft-p-x"
	e.Create(inst)

	// A key scoped to both projects: the projects are found through the prefix.
	res, err := svc.Migrate(e.Ctx, "y", migratetest.Request("mv", "loft-p-x", "dev"), migratetest.ScopedCaller(projectsScope("x", "y")), migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Equal(t, "loft-p-y", res.Status.Namespace)
	moved := e.Get("loft-p-y", "dev")
	require.NotNil(t, moved)
	assert.Equal(t, "y", moved.Labels[resource.LabelProject])
	assert.Equal(t, "mover", moved.ManagedFields[0].Manager)
	assert.Equal(t, "loft-p-", svc.NamespacePrefix())

	_, err = migrate.New(s, migrate.Options{NamespacePrefix: "Bad_"})
	assert.Error(t, err)
	_, err = migrate.New(nil, migrate.Options{})
	assert.Error(t, err)
}

func testRequestUntouched(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	req := migratetest.Request("mv", "p-a", "dev")
	want := migratetest.Request("mv", "p-a", "dev")
	e.Migrate("b", req)
	assert.Equal(t, want, req)
}
