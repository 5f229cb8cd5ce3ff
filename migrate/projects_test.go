package migrate_test

import (
	"testing"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
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
