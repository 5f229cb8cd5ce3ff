package migrate_test

import (
	"context"
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
