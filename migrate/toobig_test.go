package migrate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// smallMemTable gives badger transactions a limit of some 50 KiB of values (a third
// of 15% of the memtable), so that a move can outgrow it with objects of a few
// dozen KiB.
const smallMemTable = 1 << 20

// openBadgerEnv opens a store over the badger directory dir with the memtable size
// (0: badger's default) and the migration service over it, without a seed; close
// closes both, so that dir can be opened again.
func openBadgerEnv(t *testing.T, dir string, memTable int64) (e *migratetest.Env, close func()) {
	t.Helper()
	b, err := badger.Open(dir, badger.Options{MemTableSize: memTable})
	require.NoError(t, err)
	s, err := store.New(b, store.Options{})
	require.NoError(t, err)
	svc, err := migrate.New(s, migrate.Options{})
	require.NoError(t, err)
	return &migratetest.Env{T: t, Ctx: t.Context(), Store: s, Service: svc}, func() {
		_ = s.Close()
		require.NoError(t, b.Close())
	}
}

// REL-MIG-TOO-BIG: a move is one transaction, so a move larger than one badger
// transaction fails as a whole, with a Status error, and changes nothing; the same
// request then moves exactly once where the transaction fits. What grows a move is
// the size of the instance and of the request (it is recorded), never the number of
// the instance's children: they are not part of the move (the garbage collector
// deletes them afterwards, one transaction each).
func TestMigrate_TooBigForBadger(t *testing.T) {
	for _, c := range []struct {
		name string
		// seedMemTable is the memtable the seed is written with; the move runs with
		// smallMemTable.
		seedMemTable int64
		params       int // bytes of spec.parameters of p-a/big
		annotation   int // bytes of an annotation of the request
		children     int // instances owned by p-a/big
		tooBig       bool
	}{
		{name: "REL-MIG-TOO-BIG an instance written with a larger memtable: clean error, nothing moved",
			params: 100 << 10, tooBig: true},
		{name: "REL-MIG-TOO-BIG an instance and its request record together: clean error, nothing moved",
			seedMemTable: smallMemTable, params: 30 << 10, annotation: 30 << 10, tooBig: true},
		{name: "REL-MIG-TOO-BIG many children do not make the move larger",
			seedMemTable: smallMemTable, params: 1 << 10, children: 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, closeEnv := openBadgerEnv(t, dir, c.seedMemTable)
			for _, p := range []string{"a", "b"} {
				e.Create(migratetest.Project(p))
			}
			big := migratetest.Instance("p-a", "big")
			big.Spec.Parameters = "blob: " + strings.Repeat("x", c.params) + "\n"
			e.Create(big)
			yes := true
			for i := 0; i < c.children; i++ {
				child := migratetest.Instance("p-a", fmt.Sprintf("child-%03d", i))
				child.Finalizers = nil
				child.Spec.Parameters = big.Spec.Parameters
				child.OwnerReferences = []resource.OwnerReference{{APIVersion: resource.GroupVersion,
					Kind: resource.KindVirtualClusterInstance, Name: "big", UID: big.UID, BlockOwnerDeletion: &yes}}
				e.Create(child)
			}
			closeEnv()

			e, closeEnv = openBadgerEnv(t, dir, smallMemTable)
			req := migratetest.Request("mv-big", "p-a", "big")
			if c.annotation > 0 {
				req.Annotations = map[string]string{"example.com/payload": strings.Repeat("y", c.annotation)}
			}
			before, rev := e.State(), e.Revision()
			res, err := e.Service.Migrate(e.Ctx, "b", req, migratetest.Admin(), migrate.RequestOptions{})
			if !c.tooBig {
				require.NoError(t, err)
				// One transaction, whatever the number of children: at the next
				// revision the instance has moved and every child is still where it
				// was (the collector deletes them later, at revisions of their own,
				// maybe already now: the backend's revision is no measure).
				var at resource.VirtualClusterInstanceList
				require.NoError(t, e.Store.List(e.Ctx, &at, store.ListOptions{
					ResourceVersion: fmt.Sprint(rev + 1), ResourceVersionMatch: store.ResourceVersionMatchExact}))
				where := map[string]int{}
				for _, it := range at.Items {
					where[it.Namespace]++
					if it.Name == "big" {
						assert.Equal(t, "p-b", it.Namespace, "the move is at the next revision")
					}
				}
				assert.Equal(t, map[string]int{"p-a": c.children, "p-b": 1}, where, "one transaction, whatever the number of children")
				require.NoError(t, e.Store.Settle(e.Ctx))
				var l resource.VirtualClusterInstanceList
				require.NoError(t, e.Store.List(e.Ctx, &l, store.ListOptions{}))
				require.Len(t, l.Items, 1, "the children are collected after the move")
				assert.Equal(t, "p-b", l.Items[0].Namespace)
				closeEnv()
				return
			}
			assert.Nil(t, res)
			var se *resource.StatusError
			require.True(t, errors.As(err, &se), "a Status error, not %T: %v", err, err)
			// A backend transaction too large to commit is 413 RequestEntityTooLarge.
			assert.Equal(t, 413, resource.CodeOf(err), "error: %v", err)
			assert.Contains(t, err.Error(), "too big", "the error says why")
			assert.Equal(t, rev, e.Revision(), "no revision: nothing was written")
			assert.Equal(t, before, e.State(), "no half move")
			assert.NotNil(t, e.Get("p-a", "big"))
			closeEnv()

			// Where the transaction fits, the same request moves exactly once.
			e, closeEnv = openBadgerEnv(t, dir, 0)
			defer closeEnv()
			res = e.Migrate("b", req)
			assert.Equal(t, rev+1, e.Revision())
			assert.Nil(t, e.Get("p-a", "big"))
			assert.Equal(t, res.Status.UID, e.Get("p-b", "big").UID)
			assert.Equal(t, res, e.Migrate("b", req), "a retry answers the record")
			assert.Equal(t, rev+1, e.Revision())
		})
	}
}
