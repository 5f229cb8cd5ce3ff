package migrate_test

import (
	"testing"

	"github.com/management-service/mgmt/migrate/migratetest"
)

// TestProjectRules runs the project rules' suite (issue 20) on memdb.
func TestProjectRules(t *testing.T) { migratetest.RunProjectRules(t, memdbBackend) }

// TestProjectRules_Badger runs the project rules' suite on the durable backend.
func TestProjectRules_Badger(t *testing.T) { migratetest.RunProjectRules(t, badgerBackend) }
