package migrate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// TestProjectRules runs the project rules' suite (issue 20) on memdb.
func TestProjectRules(t *testing.T) { migratetest.RunProjectRules(t, memdbBackend) }

// TestProjectRules_Badger runs the project rules' suite on the durable backend.
func TestProjectRules_Badger(t *testing.T) { migratetest.RunProjectRules(t, badgerBackend) }

// TestKill9ProjectDeletion is the crash test of a project's deletion on badger: a
// child process working on the deletion is killed with SIGKILL, and the restarted
// host finishes it, leaving nothing behind and touching nothing else.
func TestKill9ProjectDeletion(t *testing.T) {
	migratetest.RunKill9ProjectDeletion(t, migratetest.Kill9Config{
		OpenChild: func(dir string) (backend.Backend, error) { return badger.Open(dir, badger.Options{}) },
	})
}

// A host whose schema refuses a project's status (as schema/ does until it knows
// Project.status) still sees a deleted project go: the status is a report, the
// deletion does not depend on it.
func TestProjectRules_DeletionDoesNotNeedTheStatus(t *testing.T) {
	noStatus := store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
		if p, ok := req.Object.(*resource.Project); ok && len(p.Status.Conditions) > 0 {
			return resource.NewInvalid(req.Kind, p.Name, resource.ErrorList{resource.Forbidden(resource.NewPath("status"), "unknown field")})
		}
		return nil
	})
	opts := store.Options{Validating: []store.ValidatingAdmitter{noStatus}}
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{ResyncInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	s := storetest.NewFixture(t, &opts).Store
	stop, err := rules.Start(s)
	require.NoError(t, err)
	t.Cleanup(stop)
	e := &migratetest.RulesEnv{Env: migratetest.NewEnv(t, s), Rules: rules, Stop: stop}
	e.DeleteProject("a")
	e.Eventually(func() bool { d := e.Get("p-a", "dev"); return d != nil && d.IsTerminating() }, "dev marked")
	assert.Empty(t, e.Project("a").Status.Conditions)
	e.ReleaseFinalizer("p-a", "dev")
	e.Eventually(func() bool { return e.Project("a") == nil }, "project a gone")
}

// An instance create racing a project update that excludes its cluster: exactly one
// of them passes, never both (the project update lists the namespace inside its
// transaction, so a create committed in between makes it run again) and never
// neither.
func TestProjectRules_NarrowingRacingACreate_OneWins(t *testing.T) {
	e := migratetest.NewRulesEnv(t, memdbBackend, migrate.ProjectRulesOptions{}, true)
	const rounds = 300
	both := 0
	for round := 0; round < rounds; round++ {
		require.NoError(t, e.Store.GuaranteedUpdate(e.Ctx, "", "b", &resource.Project{}, func(cur resource.Object) error {
			cur.(*resource.Project).Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}, {Name: "c2"}}
			return nil
		}, store.UpdateOptions{}))
		inst := migratetest.Instance("p-b", fmt.Sprintf("x-%d", round))
		inst.Finalizers = nil
		inst.Spec.ClusterRef.Cluster = "c2"
		var perr, cerr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			perr = e.Store.GuaranteedUpdate(e.Ctx, "", "b", &resource.Project{}, func(cur resource.Object) error {
				cur.(*resource.Project).Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}}
				return nil
			}, store.UpdateOptions{})
		}()
		go func() { defer wg.Done(); <-start; cerr = e.Store.Create(e.Ctx, inst, store.CreateOptions{}) }()
		close(start)
		wg.Wait()
		assert.False(t, perr != nil && cerr != nil, "round %d: both refused", round)
		if perr == nil && cerr == nil {
			both++
		}
		if cerr == nil {
			_, err := e.Store.Delete(e.Ctx, inst, store.DeleteOptions{})
			require.NoError(t, err)
		}
	}
	t.Logf("RESULT allowedClusters narrowing racing a create: rounds=%d both-passed=%d", rounds, both)
	assert.Zero(t, both, "a create and a narrowing that excludes its cluster both passed")
}

// A create that commits between a narrowing project update's list of the namespace
// and its commit, forced deterministically by a hook that runs after the rules: the
// update runs again, sees the instance, and is refused; the instance stays valid.
func TestProjectRules_NarrowingSeesACreateCommittedAfterItsList(t *testing.T) {
	var s *store.Store
	injected := false
	inject := store.ValidatingAdmitterFunc(func(ctx context.Context, req *store.AdmissionRequest) error {
		p, ok := req.Object.(*resource.Project)
		if !ok || req.Operation != store.OperationUpdate || injected || len(p.Spec.AllowedClusters) != 1 {
			return nil
		}
		injected = true
		inst := migratetest.Instance("p-b", "sneaky")
		inst.Finalizers = nil
		inst.Spec.ClusterRef.Cluster = "c2"
		return s.Create(ctx, inst, store.CreateOptions{})
	})
	opts := store.Options{}
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	require.NoError(t, err)
	opts.Validating = append(opts.Validating, inject) // after the rules' hooks
	s = storetest.NewFixture(t, &opts).Store
	stop, err := rules.Start(s)
	require.NoError(t, err)
	t.Cleanup(stop)
	e := migratetest.NewEnv(t, s)
	require.NoError(t, s.GuaranteedUpdate(e.Ctx, "", "b", &resource.Project{}, func(cur resource.Object) error {
		cur.(*resource.Project).Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}, {Name: "c2"}}
		return nil
	}, store.UpdateOptions{}))

	err = s.GuaranteedUpdate(e.Ctx, "", "b", &resource.Project{}, func(cur resource.Object) error {
		cur.(*resource.Project).Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}}
		return nil
	}, store.UpdateOptions{})
	require.True(t, injected)
	storetest.RequireCause(t, err, "spec.allowedClusters", "")
	assert.Contains(t, err.Error(), `"sneaky"`)
	require.NotNil(t, e.Get("p-b", "sneaky"))
}
