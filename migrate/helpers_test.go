package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/storetest"
)

// newStoreFunc makes the store a case runs on: a fresh, empty one per call, closed
// (and checked) when the test ends. The suite runs on every backend through it.
type newStoreFunc func(t *testing.T) *store.Store

// memdbStore is the store fixture of package storetest: the real store over memdb.
func memdbStore(t *testing.T) *store.Store {
	return storetest.NewFixture(t, nil).Store
}

// storeOver returns a newStoreFunc for a backend: a harness store (fake clock,
// invariants checked on cleanup) over a backend from newBackend.
func storeOver(newBackend func(t *testing.T) backend.Backend) newStoreFunc {
	return func(t *testing.T) *store.Store {
		return storetest.NewHarness(t, newBackend(t), store.Options{}).S
	}
}

// suiteCase is one case of the migrate suite.
type suiteCase struct {
	name string
	run  func(t *testing.T, newStore newStoreFunc)
}

// runSuite runs every case of the migrate suite on stores from newStore.
func runSuite(t *testing.T, newStore newStoreFunc) {
	var all []suiteCase
	all = append(all, checkCases()...)
	all = append(all, moveCases()...)
	all = append(all, idempotencyCases()...)
	all = append(all, stressCases()...)
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore) })
	}
}

// TestMigrate runs the suite on the store fixture (memdb).
func TestMigrate(t *testing.T) { runSuite(t, memdbStore) }

// env is a store with the service and the seed of most cases: projects "a" and "b"
// ("b" allows clusters c1 and c2) and the instance p-a/dev on cluster c1, with
// labels, annotations, a finalizer and a status.
type env struct {
	t   testing.TB
	ctx context.Context
	S   *store.Store
	svc *migrate.Service
}

const (
	finalizer = "example.com/cleanup"
	clusterC1 = "c1"
)

func newEnv(t *testing.T, newStore newStoreFunc) *env {
	t.Helper()
	return seedEnv(t, newStore(t))
}

// seedEnv builds the service over s and creates the seed.
func seedEnv(t testing.TB, s *store.Store) *env {
	t.Helper()
	svc, err := migrate.New(s, migrate.Options{})
	require.NoError(t, err)
	e := &env{t: t, ctx: context.Background(), S: s, svc: svc}
	e.create(project("a"))
	b := project("b")
	b.Spec.AllowedClusters = []resource.AllowedCluster{{Name: clusterC1}, {Name: "c2"}}
	e.create(b)
	e.seedInstance("p-a", "dev")
	return e
}

func project(name string) *resource.Project {
	return &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
}

// instance returns a fully populated instance (without status) in namespace ns.
func instance(ns, name string) *resource.VirtualClusterInstance {
	proj := ns[len("p-"):]
	return &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Namespace:   ns,
			Name:        name,
			Labels:      map[string]string{resource.LabelProject: proj, "team": "blue"},
			Annotations: map[string]string{"example.com/note": "keep me"},
			Finalizers:  []string{finalizer},
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: "Dev " + name,
			Description: "orig",
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: clusterC1, Namespace: "vc-" + name, VirtualCluster: name},
			TemplateRef: &resource.TemplateRef{Name: "small", Version: "1.2.3"},
			Parameters:  "replicas: 1\n",
		},
	}
}

var readyStatus = resource.VirtualClusterInstanceStatus{
	Phase:   resource.InstancePhaseReady,
	Reason:  "Running",
	Message: "all good",
	Conditions: []resource.Condition{{
		Type: "Ready", Status: "True", LastTransitionTime: ptr(resource.NewTime(storetest.FixtureStart)), Reason: "Up",
	}},
}

// seedInstance creates a populated instance ns/name with a Ready status.
func (e *env) seedInstance(ns, name string) *resource.VirtualClusterInstance {
	e.t.Helper()
	inst := instance(ns, name)
	e.create(inst)
	inst.Status = readyStatus
	require.NoError(e.t, e.S.UpdateStatus(e.ctx, inst, store.UpdateOptions{}))
	return inst
}

func (e *env) create(obj resource.Object) {
	e.t.Helper()
	require.NoError(e.t, e.S.Create(e.ctx, obj, store.CreateOptions{}))
}

func (e *env) revision() int64 {
	e.t.Helper()
	rev, err := e.S.Backend().Revision(e.ctx)
	require.NoError(e.t, err)
	return rev
}

// get reads ns/name; nil when it does not exist.
func (e *env) get(ns, name string) *resource.VirtualClusterInstance {
	e.t.Helper()
	out := &resource.VirtualClusterInstance{}
	err := e.S.Get(e.ctx, ns, name, out, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	require.NoError(e.t, err)
	return out
}

// state is every instance, project and record, as JSON: what "nothing changed"
// compares.
func (e *env) state() string {
	e.t.Helper()
	var all []any
	for _, l := range []resource.ObjectList{&resource.VirtualClusterInstanceList{}, &resource.ProjectList{},
		&resource.ProjectMigrateVirtualClusterInstanceList{}} {
		require.NoError(e.t, e.S.List(e.ctx, l, store.ListOptions{}))
		l.GetListMeta().ResourceVersion = ""
		all = append(all, l)
	}
	b, err := json.Marshal(all)
	require.NoError(e.t, err)
	return string(b)
}

func admin() migrate.Caller {
	return caller(nil)
}

// caller is a caller whose rights are the scope's (nil: the admin key).
func caller(scope *resource.AccessKeyScope) migrate.Caller {
	a, err := migrate.ScopeAuthorizer(scope)
	if err != nil {
		panic(err)
	}
	return migrate.Caller{User: &store.UserInfo{Name: "tester"}, Authorizer: a}
}

func projectsScope(projects ...string) *resource.AccessKeyScope {
	s := &resource.AccessKeyScope{}
	for _, p := range projects {
		s.Projects = append(s.Projects, resource.AccessKeyScopeProject{Project: p})
	}
	return s
}

// request is a move of ns/name, recorded under reqName ("" for none).
func request(reqName, ns, name string) *resource.ProjectMigrateVirtualClusterInstance {
	return &resource.ProjectMigrateVirtualClusterInstance{
		ObjectMeta:                   resource.ObjectMeta{Name: reqName},
		SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Namespace: ns, Name: name},
	}
}

func (e *env) migrate(target string, req *resource.ProjectMigrateVirtualClusterInstance) *resource.ProjectMigrateVirtualClusterInstance {
	e.t.Helper()
	res, err := e.svc.Migrate(e.ctx, target, req, admin(), migrate.RequestOptions{})
	require.NoError(e.t, err)
	return res
}

// requireReason checks err's reason (and so code), and a cause at field when field
// is set.
func requireReason(t *testing.T, err error, reason resource.StatusReason, field string) {
	t.Helper()
	require.Error(t, err)
	st := resource.StatusOf(err)
	require.Equal(t, reason, st.Reason, "error: %v", err)
	require.Equal(t, reason.Code(), st.Code)
	if field == "" {
		return
	}
	require.NotNil(t, st.Details, "error: %v", err)
	for _, c := range st.Details.Causes {
		if c.Field == field {
			return
		}
	}
	require.Failf(t, "no cause at the field", "want a cause at %s in %+v", field, st.Details.Causes)
}

func ptr[T any](v T) *T { return &v }
