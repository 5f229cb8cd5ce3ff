package migrate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/storetest"
)

// BenchmarkMigrate measures one migration (checks, the move and the record, one
// store transaction) on the store fixture, moving one instance back and forth.
func BenchmarkMigrate(b *testing.B) {
	benchMigrate(b, false)
}

// BenchmarkMigrateDryRun measures the checks and the dry run of the writes.
func BenchmarkMigrateDryRun(b *testing.B) { benchMigrate(b, true) }

func benchMigrate(b *testing.B, dry bool) {
	e := migratetest.NewEnv(b, storetest.NewFixture(b, nil).Store)
	reqs := [2]*resource.ProjectMigrateVirtualClusterInstance{migratetest.Request("", "p-a", "dev"), migratetest.Request("", "p-b", "dev")}
	targets := [2]string{"b", "a"}
	for _, r := range reqs {
		r.GenerateName = "bench-"
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % 2
		if dry {
			k = 0
		}
		if _, err := e.Service.Migrate(ctx, targets[k], reqs[k], migratetest.Admin(), migrate.RequestOptions{DryRun: dry}); err != nil {
			require.NoError(b, err) // only on failure: b.Helper is not free in the timed loop
		}
	}
}
