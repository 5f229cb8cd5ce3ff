package migratetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/storetest"
)

// The seed of [NewEnv].
const (
	// SeedFinalizer is the finalizer of the instances [Instance] builds.
	SeedFinalizer = "example.com/cleanup"
	// SeedCluster is the cluster of the instances [Instance] builds; project "b" of
	// the seed allows it (and "c2").
	SeedCluster = "c1"
)

// ReadyStatus is the status [Env.SeedInstance] gives an instance. A move carries it
// over unchanged.
var ReadyStatus = resource.VirtualClusterInstanceStatus{
	Phase:   resource.InstancePhaseReady,
	Reason:  "Running",
	Message: "all good",
	Conditions: []resource.Condition{{
		Type: "Ready", Status: "True", LastTransitionTime: ptr(resource.NewTime(storetest.FixtureStart)), Reason: "Up",
	}},
}

// NewStore returns a fresh store over a backend from newBackend, for one test: a
// storetest harness store (a fake clock; on cleanup the store settles, its
// invariants are checked and it is closed). Closing the backend is left to
// newBackend (register it with t.Cleanup).
func NewStore(t *testing.T, newBackend func(t *testing.T) backend.Backend) *store.Store {
	t.Helper()
	return storetest.NewHarness(t, newBackend(t), store.Options{}).S
}

// Env is a store with a [migrate.Service] over it (namespace prefix "p-"), and the
// helpers the migration tests share. Its helpers fail the test on any unexpected
// error.
type Env struct {
	// T is the test the helpers report to.
	T testing.TB
	// Ctx is the context of every call.
	Ctx context.Context
	// Store is the store under test.
	Store *store.Store
	// Service is the migration service over Store.
	Service *migrate.Service
}

// NewEnv builds the service over s and creates the seed: projects "a" and "b" ("b"
// allows clusters [SeedCluster] and "c2") and the instance p-a/dev, made by
// [Env.SeedInstance].
func NewEnv(t testing.TB, s *store.Store) *Env {
	t.Helper()
	svc, err := migrate.New(s, migrate.Options{})
	require.NoError(t, err)
	e := &Env{T: t, Ctx: context.Background(), Store: s, Service: svc}
	e.Create(Project("a"))
	b := Project("b")
	b.Spec.AllowedClusters = []resource.AllowedCluster{{Name: SeedCluster}, {Name: "c2"}}
	e.Create(b)
	e.SeedInstance("p-a", "dev")
	return e
}

// Project returns a new Project named name.
func Project(name string) *resource.Project {
	return &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
}

// Instance returns a new, fully populated instance (without status) in namespace ns,
// which must be "p-<project>": the project label, another label, an annotation,
// [SeedFinalizer], and a spec with every field set (description "orig", cluster
// [SeedCluster]).
func Instance(ns, name string) *resource.VirtualClusterInstance {
	proj := ns[len("p-"):]
	return &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Namespace:   ns,
			Name:        name,
			Labels:      map[string]string{resource.LabelProject: proj, "team": "blue"},
			Annotations: map[string]string{"example.com/note": "keep me"},
			Finalizers:  []string{SeedFinalizer},
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: "Dev " + name,
			Description: "orig",
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: SeedCluster, Namespace: "vc-" + name, VirtualCluster: name},
			TemplateRef: &resource.TemplateRef{Name: "small", Version: "1.2.3"},
			Parameters:  "replicas: 1\n",
		},
	}
}

// Request returns a request to move ns/name, recorded under reqName ("" for none).
func Request(reqName, ns, name string) *resource.ProjectMigrateVirtualClusterInstance {
	return &resource.ProjectMigrateVirtualClusterInstance{
		ObjectMeta:                   resource.ObjectMeta{Name: reqName},
		SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Namespace: ns, Name: name},
	}
}

// ScopedCaller returns a caller, user "tester", whose rights are those of an access
// key with the scope (nil: the admin key). It panics on an invalid scope.
func ScopedCaller(scope *resource.AccessKeyScope) migrate.Caller {
	a, err := migrate.ScopeAuthorizer(scope)
	if err != nil {
		panic(err)
	}
	return migrate.Caller{User: &store.UserInfo{Name: "tester"}, Authorizer: a}
}

// Admin returns the caller of the admin key: every move is allowed.
func Admin() migrate.Caller { return ScopedCaller(nil) }

// Create creates obj.
func (e *Env) Create(obj resource.Object) {
	e.T.Helper()
	require.NoError(e.T, e.Store.Create(e.Ctx, obj, store.CreateOptions{}))
}

// SeedInstance creates [Instance](ns, name) with [ReadyStatus] and returns it.
func (e *Env) SeedInstance(ns, name string) *resource.VirtualClusterInstance {
	e.T.Helper()
	inst := Instance(ns, name)
	e.Create(inst)
	inst.Status = ReadyStatus
	require.NoError(e.T, e.Store.UpdateStatus(e.Ctx, inst, store.UpdateOptions{}))
	return inst
}

// Get reads the instance ns/name; nil when it does not exist.
func (e *Env) Get(ns, name string) *resource.VirtualClusterInstance {
	e.T.Helper()
	out := &resource.VirtualClusterInstance{}
	err := e.Store.Get(e.Ctx, ns, name, out, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	require.NoError(e.T, err)
	return out
}

// Revision returns the backend's current revision.
func (e *Env) Revision() int64 {
	e.T.Helper()
	rev, err := e.Store.Backend().Revision(e.Ctx)
	require.NoError(e.T, err)
	return rev
}

// WritesSince returns how many transactions changed the store after revision rev,
// up to the current revision: the distinct revisions of the events since. Unlike a
// difference of revisions, it holds on a backend whose revisions may skip numbers
// (etcd, whose counter other prefixes share).
func (e *Env) WritesSince(rev int64) int {
	e.T.Helper()
	now := e.Revision()
	if now <= rev {
		return 0
	}
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	w, err := e.Store.Backend().Watch(ctx, backend.WatchOptions{StartRevision: rev + 1, ProgressNotify: true})
	require.NoError(e.T, err)
	defer w.Stop()
	seen := map[int64]bool{}
	for ev := range w.Events() {
		if ev.Type != backend.EventProgress && ev.Revision <= now {
			seen[ev.Revision] = true
		}
		if ev.Revision >= now {
			return len(seen)
		}
	}
	require.Failf(e.T, "watch ended", "before revision %d: %v", now, w.Err())
	return 0
}

// State returns every instance, project and migration record, as JSON: what
// "nothing changed" compares.
func (e *Env) State() string {
	e.T.Helper()
	var all []any
	for _, l := range []resource.ObjectList{&resource.VirtualClusterInstanceList{}, &resource.ProjectList{},
		&resource.ProjectMigrateVirtualClusterInstanceList{}} {
		require.NoError(e.T, e.Store.List(e.Ctx, l, store.ListOptions{}))
		l.GetListMeta().ResourceVersion = ""
		all = append(all, l)
	}
	b, err := json.Marshal(all)
	require.NoError(e.T, err)
	return string(b)
}

// Migrate moves what req names into target as [Admin], and returns the response.
func (e *Env) Migrate(target string, req *resource.ProjectMigrateVirtualClusterInstance) *resource.ProjectMigrateVirtualClusterInstance {
	e.T.Helper()
	res, err := e.Service.Migrate(e.Ctx, target, req, Admin(), migrate.RequestOptions{})
	require.NoError(e.T, err)
	return res
}

func ptr[T any](v T) *T { return &v }
