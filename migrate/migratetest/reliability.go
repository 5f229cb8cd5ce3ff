package migratetest

import (
	"fmt"
	"math/rand/v2"
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
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/storetest"
)

// RunReliability runs the migration reliability suite of the project's reliability
// checklist (§4.4): REL-MIG-CONFLICT, REL-MIG-ATOMIC and REL-MIG-IDEMPOTENT. Each
// case is a subtest of t whose name starts with its id ("REL-MIG-…"), on a fresh
// store over a fresh backend from newBackend (see [NewStore]), and each logs one
// line starting with "RESULT" with what it measured.
//
// The backend must be empty and used by the test alone: the cases count the
// revisions a migration takes. Under the race detector the stress cases run a
// smaller load; run them at full size without it.
func RunReliability(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, e *Env)
	}{
		{"REL-MIG-CONFLICT a stale-resourceVersion update racing a migration: exactly one wins, never a mixed state", testConflict},
		{"REL-MIG-ATOMIC migrations back and forth while readers list all namespaces: always exactly one copy", testAtomic},
		{"REL-MIG-IDEMPOTENT the same name again returns the recorded result and moves nothing", testSameNameTwice},
		{"REL-MIG-IDEMPOTENT the record decides even after the instance moved back", testRecordDecides},
		{"REL-MIG-IDEMPOTENT concurrent duplicates: one move, the same response for all", testConcurrentDuplicates},
		{"REL-MIG-IDEMPOTENT dry runs racing the request of their name answer from before or after it, never fail", testDryRunRacingRequest},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, NewEnv(t, NewStore(t, newBackend))) })
	}
}

// testConflict races, round after round, an update of an instance (based on the
// resourceVersion read before either starts) against its migration. Exactly one of
// the two is first, and the other never half happens:
//
//   - the update first: the migration's transaction runs again on the updated
//     instance and moves it with the update (no lost update);
//   - the migration first: the update is 409 Conflict (never 404: the store knows
//     the instance moved) naming the new namespace, and changes nothing; the same
//     stale update sent to the instance's new place is 409 Conflict too.
//
// Never is there a copy in both namespaces, in neither, or one that mixes the two
// writes. Both orders must be seen: the rounds alternate which of the two is
// released first, and when one order is still missing after the planned rounds,
// rounds go on until it shows, up to five times the planned number in all. The
// update is one read and one write, the migration several reads before its write:
// on a backend where a read is a network round trip (etcd) an update released
// right after a migration still commits first nearly every time. So when the
// migration leads, the update follows after a random lag of up to twice the last
// migration's duration: the two still race, their commits landing either way.
func testConflict(t *testing.T, e *Env) {
	planned := 200
	if raceEnabled {
		planned = 40
	}
	var updateFirst, migrationFirst int
	var leaderWon [2]int // by who was released first (0: the update, 1: the migration): rounds it won
	var lastMove time.Duration
	round := 0
	for ; round < planned || (updateFirst == 0 || migrationFirst == 0) && round < 5*planned; round++ {
		name := fmt.Sprintf("c-%03d", round)
		e.Create(Instance("p-a", name))
		upd := e.Get("p-a", name)
		staleUID := upd.UID
		upd.Spec.Description = "updated"
		stale, err := resource.DeepCopy(upd)
		require.NoError(t, err)

		var updErr, migErr error
		var res *resource.ProjectMigrateVirtualClusterInstance
		update := func() { updErr = e.Store.Update(e.Ctx, upd, store.UpdateOptions{}) }
		move := func() {
			start := time.Now()
			res, migErr = e.Service.Migrate(e.Ctx, "b", Request("conflict-"+name, "p-a", name), Admin(), migrate.RequestOptions{})
			lastMove = time.Since(start)
		}
		lead := round % 2
		if lead == 0 {
			race(update, move, 0)
		} else {
			race(move, update, time.Duration(rand.Int64N(2*int64(lastMove)+1)))
		}
		if (updErr == nil) == (lead == 0) {
			leaderWon[lead]++
		}

		require.NoError(t, migErr, "round %d: the migration runs again on fresh data, it never fails here", round)
		require.Nil(t, e.Get("p-a", name), "round %d: a copy left in the source", round)
		moved := e.Get("p-b", name)
		require.NotNil(t, moved, "round %d: no copy in the target", round)
		require.Equal(t, res.Status.UID, moved.UID)
		require.Equal(t, staleUID, moved.Annotations[migrate.AnnotationMigratedFromUID], "round %d", round)
		if updErr == nil {
			updateFirst++
			require.Equal(t, "updated", moved.Spec.Description, "round %d: the update committed first and must move along", round)
			urv, _ := strconv.ParseInt(upd.ResourceVersion, 10, 64)
			mrv, _ := strconv.ParseInt(res.ResourceVersion, 10, 64)
			require.Less(t, urv, mrv, "round %d", round)
			continue
		}
		migrationFirst++
		storetest.RequireReason(t, updErr, resource.ReasonConflict)
		require.Contains(t, updErr.Error(), strconv.Quote("p-b"), "round %d: the 409 names the new namespace", round)
		require.Equal(t, "orig", moved.Spec.Description, "round %d: a failed update left a trace", round)
		// The same stale update at the instance's new place: 409 as well.
		stale.Namespace = "p-b"
		storetest.RequireReason(t, e.Store.Update(e.Ctx, stale, store.UpdateOptions{}), resource.ReasonConflict)
		require.Equal(t, "orig", e.Get("p-b", name).Spec.Description, "round %d", round)
	}
	require.Equal(t, round, updateFirst+migrationFirst)
	require.Positive(t, updateFirst, "in %d rounds the update never committed first", round)
	require.Positive(t, migrationFirst, "in %d rounds the migration never committed first", round)
	t.Logf("RESULT REL-MIG-CONFLICT rounds=%d update-first=%d migration-first=%d (the update got 409 each time, 404 never; released first, the update won %d of %d rounds, the migration %d of %d) mixed-states=0 lost-updates=0 race=%v",
		round, updateFirst, migrationFirst, leaderWon[0], (round+1)/2, leaderWon[1], round/2, raceEnabled)
}

// race runs first and second concurrently, releasing first, then second lag later
// (at once for 0), and returns when both have returned.
func race(first, second func(), lag time.Duration) {
	var wg sync.WaitGroup
	wg.Add(2)
	started := make(chan struct{})
	go func() {
		defer wg.Done()
		close(started)
		first()
	}()
	go func() {
		defer wg.Done()
		<-started
		if lag > 0 {
			time.Sleep(lag)
		}
		second()
	}()
	wg.Wait()
}

// testAtomic runs migrations of two instances back and forth between projects a and
// b, while readers list every namespace at once (one snapshot per list) and a
// watcher of all namespaces follows: no snapshot and no point of the watch ever
// shows an instance in zero or two namespaces.
func testAtomic(t *testing.T, e *Env) {
	total := 1000
	if raceEnabled {
		total = 200
	}
	instances := []string{"dev", "ops"}
	e.SeedInstance("p-a", "ops")
	w, err := e.Store.Watch(e.Ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{ResourceVersion: strconv.FormatInt(e.Revision(), 10)})
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
				if err := e.Store.List(e.Ctx, &l, store.ListOptions{}); !assert.NoError(t, err) { // a reader goroutine: assert, not require
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
				_, err := e.Service.Migrate(e.Ctx, target, Request(fmt.Sprintf("atomic-%d-%d", m, i), from, name), Admin(), migrate.RequestOptions{})
				if !assert.NoError(t, err, "migration %d of %s", i, name) { // a migrator goroutine: assert, not require
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
	require.NoError(t, e.Store.List(e.Ctx, &l, store.ListOptions{}))
	require.Len(t, l.Items, len(instances))
	for _, it := range l.Items {
		assert.Equal(t, where[it.Name], it.Namespace)
		assert.Equal(t, ReadyStatus, it.Status)
	}
	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.Store.List(e.Ctx, &recs, store.ListOptions{}))
	assert.Len(t, recs.Items, total)
	t.Logf("RESULT REL-MIG-ATOMIC migrations=%d instances=%d snapshots=%d watch-revisions=%d violations=0 elapsed=%s (%.0f migrations/s) race=%v",
		total, len(instances), snapshots.Load(), len(revs), elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), raceEnabled)
}

func testSameNameTwice(t *testing.T, e *Env) {
	first := e.Migrate("b", Request("mv", "p-a", "dev"))
	rev, state := e.Revision(), e.State()
	for i := 0; i < 4; i++ {
		again := e.Migrate("b", Request("mv", "p-a", "dev"))
		assert.Equal(t, first, again)
	}
	assert.Equal(t, rev, e.Revision(), "a replay writes nothing")
	assert.Equal(t, state, e.State())
}

func testRecordDecides(t *testing.T, e *Env) {
	first := e.Migrate("b", Request("there", "p-a", "dev"))
	back := e.Migrate("a", Request("back", "p-b", "dev"))
	assert.Equal(t, "p-a", back.Status.Namespace)
	rev := e.Revision()

	again := e.Migrate("b", Request("there", "p-a", "dev"))
	assert.Equal(t, first, again, "the recorded result, not a second move")
	assert.Equal(t, rev, e.Revision())
	assert.NotNil(t, e.Get("p-a", "dev"), "the instance stays where the last move put it")
	assert.Nil(t, e.Get("p-b", "dev"))

	// A fresh name moves again.
	third := e.Migrate("b", Request("there-again", "p-a", "dev"))
	assert.Equal(t, "p-b", third.Status.Namespace)
	assert.NotEqual(t, first.Status.UID, third.Status.UID)
}

func testConcurrentDuplicates(t *testing.T, e *Env) {
	const n = 8
	rounds := 20
	if raceEnabled {
		rounds = 5
	}
	for r := 0; r < rounds; r++ {
		from, to, target := "p-a", "p-b", "b"
		if r%2 == 1 {
			from, to, target = "p-b", "p-a", "a"
		}
		name := "dup-" + string(rune('a'+r))
		rev := e.Revision()
		var wg sync.WaitGroup
		res := make([]*resource.ProjectMigrateVirtualClusterInstance, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i], errs[i] = e.Service.Migrate(e.Ctx, target, Request(name, from, "dev"), Admin(), migrate.RequestOptions{})
			}()
		}
		close(start)
		wg.Wait()
		for i := 0; i < n; i++ {
			require.NoError(t, errs[i], "request %d", i)
			assert.Equal(t, res[0], res[i], "request %d", i)
		}
		assert.Equal(t, 1, e.WritesSince(rev), "exactly one move")
		moved := e.Get(to, "dev")
		require.NotNil(t, moved)
		assert.Equal(t, moved.UID, res[0].Status.UID)
		assert.Nil(t, e.Get(from, "dev"))
	}
	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, e.Store.List(e.Ctx, &recs, store.ListOptions{}))
	assert.Len(t, recs.Items, rounds)
	t.Logf("RESULT REL-MIG-IDEMPOTENT rounds=%d duplicates-per-round=%d moves=%d failures=0", rounds, n, rounds)
}

// testDryRunRacingRequest races dry runs of a named request against the request
// itself, round after round. A dry run reads the record, then the instance: when the
// request commits in between, those reads do not agree (no record yet, the source
// already gone), and answering from them would refuse with 404. The store runs the
// dry run again instead, so each dry run answers either as before the request (a
// dry-run move: no resourceVersion) or as after it (the recorded result), and never
// fails.
func testDryRunRacingRequest(t *testing.T, e *Env) {
	const dryRuns = 3
	rounds := 50
	if raceEnabled {
		rounds = 10
	}
	var before, after int
	for r := 0; r < rounds; r++ {
		from, to, target := "p-a", "p-b", "b"
		if r%2 == 1 {
			from, to, target = "p-b", "p-a", "a"
		}
		name := fmt.Sprintf("dry-%03d", r)
		rev := e.Revision()
		var res *resource.ProjectMigrateVirtualClusterInstance
		var resErr error
		dry := make([]*resource.ProjectMigrateVirtualClusterInstance, dryRuns)
		dryErrs := make([]error, dryRuns)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i <= dryRuns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if i == dryRuns {
					res, resErr = e.Service.Migrate(e.Ctx, target, Request(name, from, "dev"), Admin(), migrate.RequestOptions{})
					return
				}
				dry[i], dryErrs[i] = e.Service.Migrate(e.Ctx, target, Request(name, from, "dev"), Admin(), migrate.RequestOptions{DryRun: true})
			}()
		}
		close(start)
		wg.Wait()
		require.NoError(t, resErr, "round %d", r)
		assert.Equal(t, 1, e.WritesSince(rev), "round %d: exactly one move", r)
		for i := 0; i < dryRuns; i++ {
			require.NoError(t, dryErrs[i], "round %d: dry run %d", r, i)
			if dry[i].ResourceVersion == "" {
				before++
				assert.Equal(t, resource.ProjectMigrateVirtualClusterInstanceStatus{Namespace: to, Name: "dev", UID: dry[i].Status.UID},
					dry[i].Status, "round %d: dry run %d", r, i)
				continue
			}
			after++
			assert.Equal(t, res, dry[i], "round %d: dry run %d answers the record", r, i)
		}
	}
	t.Logf("RESULT REL-MIG-IDEMPOTENT dry runs racing their request: rounds=%d dry-runs=%d answered as before=%d as after (the record)=%d failures=0",
		rounds, rounds*dryRuns, before, after)
}
