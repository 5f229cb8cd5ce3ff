package etcd_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
)

// TestMigrate runs the migration service's reliability suite (REL-MIG-*) on etcd,
// unchanged: the same service, over a store on this backend.
func TestMigrate(t *testing.T) {
	migratetest.RunReliability(t, func(t *testing.T) backend.Backend { return newBackend(t, etcd.Options{}) })
}

// TestKill9Migration is REL-CRASH-KILL9-MIGRATION on etcd: the etcd server runs in
// this (the parent) process and outlives every child; the child is a client that
// migrates in a loop until it is killed, and the parent retries what was in flight.
func TestKill9Migration(t *testing.T) {
	migratetest.RunKill9(t, migratetest.Kill9Config{
		// The state is "<endpoints> <prefix>": the shared server and a fresh prefix.
		Setup: func(t *testing.T) string { return strings.Join(sharedEndpoints, ",") + " " + testPrefix() },
		OpenChild: func(state string) (backend.Backend, error) {
			endpoints, prefix, _ := strings.Cut(state, " ")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return etcd.New(ctx, etcd.Options{Endpoints: strings.Split(endpoints, ","), Prefix: prefix})
		},
		// etcd may still apply a transaction the dead child sent.
		Quiet: 300 * time.Millisecond,
	})
}

// TestProjectRules runs the project rules' suite (issue 20) on etcd.
func TestProjectRules(t *testing.T) {
	migratetest.RunProjectRules(t, func(t *testing.T) backend.Backend { return newBackend(t, etcd.Options{}) })
}

// TestProjectRules_OnlyTheLeaderWorks runs two stores on one etcd prefix, each with
// the project rules and an elector: the deletion of a project is carried out, and
// its progress is written by the worker of the store that leads, never the other.
func TestProjectRules_OnlyTheLeaderWorks(t *testing.T) {
	prefix, election := testPrefix(), testPrefix()+"election"
	var stores [2]*store.Store
	for i, who := range []string{"one", "two"} {
		el, err := etcd.NewElector(rawClient(t), etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: who})
		require.NoError(t, err)
		opts := store.Options{Elector: el}
		rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{FieldManager: "worker-" + who})
		require.NoError(t, err)
		s, err := store.New(newBackend(t, etcd.Options{Prefix: prefix}), opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stop, err := rules.Start(s)
		require.NoError(t, err)
		t.Cleanup(stop)
		stores[i] = s
	}
	ctx := t.Context()
	leader := -1
	require.Eventually(t, func() bool {
		for i, s := range stores {
			if s.Leading() {
				leader = i
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond)
	follower := stores[1-leader]
	manager := []string{"worker-one", "worker-two"}[leader]

	// Written through the follower: the leader does the work all the same.
	require.NoError(t, follower.Create(ctx, migratetest.Project("a"), store.CreateOptions{}))
	require.NoError(t, follower.Create(ctx, migratetest.Instance("p-a", "dev"), store.CreateOptions{}))
	_, err := follower.Delete(ctx, migratetest.Project("a"), store.DeleteOptions{})
	require.NoError(t, err)
	p := &resource.Project{}
	require.Eventually(t, func() bool {
		require.NoError(t, follower.Get(ctx, "", "a", p, store.GetOptions{}))
		return migratetest.Condition(p, migrate.ConditionInstancesRemaining) != nil
	}, 20*time.Second, 10*time.Millisecond)
	var managers []string
	for _, mf := range p.ManagedFields {
		managers = append(managers, mf.Manager)
	}
	assert.Contains(t, managers, manager, "the leader wrote the status")
	assert.NotContains(t, managers, []string{"worker-one", "worker-two"}[1-leader], "the follower wrote nothing")

	require.NoError(t, migratetest.ReleaseFinalizer(follower, ctx, "p-a", "dev"))
	require.Eventually(t, func() bool {
		return errors.Is(follower.Get(ctx, "", "a", &resource.Project{}, store.GetOptions{}), resource.ErrNotFound)
	}, 20*time.Second, 10*time.Millisecond)
}
