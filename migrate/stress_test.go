package migrate_test

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func stressCases() []suiteCase {
	return []suiteCase{
		{name: "REL-MIG-CONFLICT a stale-resourceVersion update racing a migration: serialized, never a mixed state", run: testConflict},
		{name: "REL-MIG-ATOMIC migrations back and forth while readers list all namespaces: always exactly one copy", run: testAtomic},
	}
}

// testConflict races, round after round, an update of the instance (with the
// resourceVersion read before either starts) against its migration. The two are
// serialized, whichever commits first:
//
//   - the update first: the migration's transaction runs again on the updated
//     instance and moves it with the update (no lost update);
//   - the migration first: the update's resourceVersion is stale and its object is
//     gone from the source namespace: it fails (404 NotFound from the store, or 409
//     Conflict) and changes nothing; the same stale update sent to the instance's
//     new place is 409 Conflict.
//
// Never is there a copy in both namespaces, in neither, or one that mixes the two
// writes.
func testConflict(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	rounds := 200
	if raceEnabled {
		rounds = 40
	}
	var updateFirst, migrationFirst, notFound, conflict int
	for i := 0; i < rounds; i++ {
		name := fmt.Sprintf("c-%03d", i)
		e.create(instance("p-a", name))
		upd := e.get("p-a", name)
		upd.Spec.Description = "updated"
		staleRV, staleUID := upd.ResourceVersion, upd.UID

		var updErr, migErr error
		var res *resource.ProjectMigrateVirtualClusterInstance
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			updErr = e.S.Update(e.ctx, upd, store.UpdateOptions{})
		}()
		go func() {
			defer wg.Done()
			<-start
			res, migErr = e.svc.Migrate(e.ctx, "b", request("conflict-"+name, "p-a", name), admin(), migrate.RequestOptions{})
		}()
		close(start)
		wg.Wait()

		require.NoError(t, migErr, "round %d: the migration runs again on fresh data, it never fails here", i)
		require.Nil(t, e.get("p-a", name), "round %d: a copy left in the source", i)
		moved := e.get("p-b", name)
		require.NotNil(t, moved, "round %d: no copy in the target", i)
		require.Equal(t, res.Status.UID, moved.UID)
		if updErr == nil {
			updateFirst++
			require.Equal(t, "updated", moved.Spec.Description, "round %d: the update committed first and must move along", i)
			urv, _ := strconv.ParseInt(upd.ResourceVersion, 10, 64)
			mrv, _ := strconv.ParseInt(res.ResourceVersion, 10, 64)
			require.Less(t, urv, mrv)
			continue
		}
		migrationFirst++
		switch resource.ReasonOf(updErr) {
		case resource.ReasonNotFound:
			notFound++
		case resource.ReasonConflict:
			conflict++
		default:
			require.Failf(t, "unexpected error of the update", "round %d: %v", i, updErr)
		}
		require.Equal(t, "orig", moved.Spec.Description, "round %d: a failed update left a trace", i)
		// The same stale update at the instance's new place: 409.
		stale, err := resource.DeepCopy(moved)
		require.NoError(t, err)
		stale.ResourceVersion, stale.UID = staleRV, staleUID
		stale.Spec.Description = "updated"
		err = e.S.Update(e.ctx, stale, store.UpdateOptions{})
		requireReason(t, err, resource.ReasonConflict, "")
	}
	assert.Equal(t, rounds, updateFirst+migrationFirst)
	t.Logf("RESULT REL-MIG-CONFLICT rounds=%d update-first=%d migration-first=%d (update got 404=%d 409=%d) mixed-states=0 lost-updates=0",
		rounds, updateFirst, migrationFirst, notFound, conflict)
}

// testAtomic runs migrations of two instances back and forth between projects a and
// b, while readers list every namespace at once (one snapshot per list) and a
// watcher of all namespaces follows: no snapshot and no point of the watch ever
// shows an instance in zero or two namespaces.
func testAtomic(t *testing.T, newStore newStoreFunc) {
	e := newEnv(t, newStore)
	total := 1000
	if raceEnabled {
		total = 200
	}
	instances := []string{"dev", "ops"}
	e.seedInstance("p-a", "ops")
	startRev := e.revision()
	w, err := e.S.Watch(e.ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{ResourceVersion: strconv.FormatInt(startRev, 10)})
	require.NoError(t, err)
	defer w.Stop()
	var events []store.Event
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev := range w.ResultChan() {
			events = append(events, ev)
			if len(events) == 2*total || ev.Type == store.Error {
				return
			}
		}
	}()

	var stop atomic.Bool
	var snapshots, violations atomic.Int64
	var firstViolation atomic.Value
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				var l resource.VirtualClusterInstanceList
				if err := e.S.List(e.ctx, &l, store.ListOptions{}); err != nil {
					t.Error(err)
					return
				}
				snapshots.Add(1)
				where := map[string][]string{}
				for _, it := range l.Items {
					where[it.Name] = append(where[it.Name], it.Namespace)
					if it.Namespace != "p-"+it.Labels[resource.LabelProject] {
						violations.Add(1)
						firstViolation.CompareAndSwap(nil, fmt.Sprintf("rv %s: %s/%s has project label %q",
							l.ResourceVersion, it.Namespace, it.Name, it.Labels[resource.LabelProject]))
					}
				}
				for _, name := range instances {
					if len(where[name]) != 1 {
						violations.Add(1)
						firstViolation.CompareAndSwap(nil, fmt.Sprintf("rv %s: %s in %v", l.ResourceVersion, name, where[name]))
					}
				}
			}
		}()
	}

	began := time.Now()
	var migrators sync.WaitGroup
	for m, name := range instances {
		migrators.Add(1)
		go func() {
			defer migrators.Done()
			for i := 0; i < total/len(instances); i++ {
				from, target := "p-a", "b"
				if i%2 == 1 {
					from, target = "p-b", "a"
				}
				_, err := e.svc.Migrate(e.ctx, target, request(fmt.Sprintf("atomic-%d-%d", m, i), from, name), admin(), migrate.RequestOptions{})
				if err != nil {
					t.Errorf("migration %d of %s: %v", i, name, err)
					return
				}
			}
		}()
	}
	migrators.Wait()
	elapsed := time.Since(began)
	stop.Store(true)
	readers.Wait()
	select {
	case <-watchDone:
	case <-time.After(30 * time.Second):
		w.Stop()
		<-watchDone
	}

	require.Zero(t, violations.Load(), "first violation: %v", firstViolation.Load())
	require.Positive(t, snapshots.Load())

	// The watch: every revision holds exactly the DELETED of one instance and its
	// ADDED elsewhere, and replaying the events never leaves an instance in zero or
	// two namespaces.
	require.Len(t, events, 2*total)
	where := map[string]string{"dev": "p-a", "ops": "p-a"}
	byRev := map[string][]store.Event{}
	var revs []int64
	for _, ev := range events {
		require.NotEqual(t, store.Error, ev.Type, "watch error: %v", ev.Err)
		rv := ev.Object.GetObjectMeta().ResourceVersion
		if _, seen := byRev[rv]; !seen {
			n, _ := strconv.ParseInt(rv, 10, 64)
			revs = append(revs, n)
		}
		byRev[rv] = append(byRev[rv], ev)
	}
	require.True(t, sort.SliceIsSorted(revs, func(i, j int) bool { return revs[i] < revs[j] }))
	require.Len(t, revs, total, "one revision per migration")
	for _, n := range revs {
		group := byRev[strconv.FormatInt(n, 10)]
		require.Len(t, group, 2, "revision %d", n)
		del, add := group[0], group[1]
		require.Equal(t, store.Deleted, del.Type, "revision %d", n)
		require.Equal(t, store.Added, add.Type, "revision %d", n)
		name := del.Object.GetObjectMeta().Name
		require.Equal(t, name, add.Object.GetObjectMeta().Name)
		require.Equal(t, where[name], del.Object.GetObjectMeta().Namespace, "revision %d deletes %s where it is not", n, name)
		require.NotEqual(t, where[name], add.Object.GetObjectMeta().Namespace)
		where[name] = add.Object.GetObjectMeta().Namespace
	}

	var l resource.VirtualClusterInstanceList
	require.NoError(t, e.S.List(e.ctx, &l, store.ListOptions{}))
	require.Len(t, l.Items, len(instances))
	for _, it := range l.Items {
		assert.Equal(t, where[it.Name], it.Namespace)
		assert.Equal(t, readyStatus, it.Status)
	}
	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.S.List(e.ctx, &recs, store.ListOptions{}))
	assert.Len(t, recs.Items, total)
	t.Logf("RESULT REL-MIG-ATOMIC migrations=%d instances=%d snapshots=%d watch-revisions=%d violations=0 elapsed=%s (%.0f migrations/s) race=%v",
		total, len(instances), snapshots.Load(), len(revs), elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), raceEnabled)
}
