package migrate_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// REL-CRASH-KILL9-MIGRATION: a child process migrates instances between projects a
// and b in a loop on a badger directory, while it updates them concurrently; the
// parent kills it with SIGKILL at a random moment, reopens the directory and checks
// that every instance is in exactly one project with the spec of its last
// acknowledged (or in-flight) update, that every acknowledged migration is recorded
// once, and that the migrations in flight at the kill, retried with the same name,
// complete exactly once (moved now if they had not committed, answered from the
// record if they had). Then the next round starts in the same directory.
//
// The number of rounds is 15, or MGMT_MIGRATE_CRASH_ROUNDS, or MGMT_CRASH_ROUNDS
// (the knob of the store's crash tests).

const (
	kill9ChildEnv  = "MGMT_MIGRATE_CRASH_CHILD_DIR"
	kill9RoundEnv  = "MGMT_MIGRATE_CRASH_CHILD_ROUND"
	kill9Instances = 4 // instance i is migrated by migrator i%2
)

func kill9Name(i int) string { return fmt.Sprintf("vc-%d", i) }

func TestKill9Migration(t *testing.T) {
	if dir := os.Getenv(kill9ChildEnv); dir != "" {
		kill9Child(dir, os.Getenv(kill9RoundEnv))
		return
	}
	rounds := 15
	for _, env := range []string{"MGMT_MIGRATE_CRASH_ROUNDS", "MGMT_CRASH_ROUNDS"} {
		if v := os.Getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "%s=%q", env, v)
			rounds = n
			break
		}
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	ctx := context.Background()

	// The seed: projects a and b, the instances in a.
	func() {
		s, closeAll := kill9Open(t, dir)
		defer closeAll()
		for _, p := range []string{"a", "b"} {
			require.NoError(t, s.Create(ctx, project(p), store.CreateOptions{}))
		}
		for i := 0; i < kill9Instances; i++ {
			inst := instance("p-a", kill9Name(i))
			require.NoError(t, s.Create(ctx, inst, store.CreateOptions{}))
			inst.Status = readyStatus
			require.NoError(t, s.UpdateStatus(ctx, inst, store.UpdateOptions{}))
		}
	}()

	// description is each instance's spec.description as the last check found it.
	description := map[string]string{}
	for i := 0; i < kill9Instances; i++ {
		description[kill9Name(i)] = "orig"
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var totalAcked, totalUpdates, inflightCommitted, inflightRetried int
	var reopen []time.Duration
	lastRev := int64(0)
	for round := 1; round <= rounds; round++ {
		log := kill9RunChild(t, exe, dir, round, time.Duration(150+rng.Intn(650))*time.Millisecond)

		began := time.Now()
		s, closeAll := kill9Open(t, dir)
		reopen = append(reopen, time.Since(began))
		rev, err := s.Backend().Revision(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, rev, lastRev, "round %d: the revision went back", round)
		require.GreaterOrEqual(t, rev, log.maxAckedRV, "round %d: an acknowledged migration is newer than the store", round)

		// Every instance in exactly one project, with a label that says so.
		where := kill9Where(t, s)
		// Every acknowledged migration is recorded, once, as acknowledged.
		for name, ack := range log.acked {
			rec := &resource.ProjectMigrateVirtualClusterInstance{}
			require.NoError(t, s.Get(ctx, "", name, rec, store.GetOptions{}), "round %d: acknowledged migration %s has no record", round, name)
			assert.Equal(t, ack.uid, rec.Status.UID, "round %d: %s", round, name)
			assert.Equal(t, ack.rv, rec.ResourceVersion, "round %d: %s", round, name)
		}
		// The spec is that of the last acknowledged update, or of the one in flight.
		for inst, ns := range where {
			cur := &resource.VirtualClusterInstance{}
			require.NoError(t, s.Get(ctx, ns, inst, cur, store.GetOptions{}))
			allowed := []string{description[inst]}
			if v, ok := log.lastUpdate[inst]; ok {
				allowed[0] = v
			}
			if v, ok := log.updInFlight[inst]; ok {
				allowed = append(allowed, v)
			}
			assert.Contains(t, allowed, cur.Spec.Description, "round %d: %s has a spec no acknowledged write gave it", round, inst)
			description[inst] = cur.Spec.Description
			assert.Equal(t, readyStatus, cur.Status, "round %d: %s lost its status", round, inst)
		}

		// The migrations in flight at the kill: retried with the same name, each
		// completes exactly once.
		svc, err := migrate.New(s, migrate.Options{})
		require.NoError(t, err)
		for _, b := range log.inFlight {
			rec := &resource.ProjectMigrateVirtualClusterInstance{}
			committed := s.Get(ctx, "", b.name, rec, store.GetOptions{}) == nil
			before, err := s.Backend().Revision(ctx)
			require.NoError(t, err)
			res, err := svc.Migrate(ctx, b.target, request(b.name, b.srcNS, b.inst), admin(), migrate.RequestOptions{})
			require.NoError(t, err, "round %d: retry of %s", round, b.name)
			after, err := s.Backend().Revision(ctx)
			require.NoError(t, err)
			if committed {
				inflightCommitted++
				assert.Equal(t, before, after, "round %d: %s committed before the kill, its retry must not move again", round, b.name)
				assert.Equal(t, rec, res)
			} else {
				inflightRetried++
				assert.Equal(t, before+1, after, "round %d: %s had not committed, its retry moves once", round, b.name)
			}
			again, err := svc.Migrate(ctx, b.target, request(b.name, b.srcNS, b.inst), admin(), migrate.RequestOptions{})
			require.NoError(t, err)
			assert.Equal(t, res, again, "round %d: a second retry of %s answers the same", round, b.name)
		}
		where = kill9Where(t, s)
		for inst, ns := range where {
			// The uid of each instance is the one its last move recorded.
			cur := &resource.VirtualClusterInstance{}
			require.NoError(t, s.Get(ctx, ns, inst, cur, store.GetOptions{}))
			if from := cur.Annotations[resource.AnnotationMigratedFrom]; from != "" {
				var recs resource.ProjectMigrateVirtualClusterInstanceList
				require.NoError(t, s.List(ctx, &recs, store.ListOptions{}))
				n := 0
				for _, r := range recs.Items {
					if r.Status.UID == cur.UID {
						n++
						assert.Equal(t, ns, r.Status.Namespace)
					}
				}
				assert.Equal(t, 1, n, "round %d: %s (uid %s) is the result of %d recorded moves", round, inst, cur.UID, n)
			}
		}
		require.NoError(t, s.Settle(ctx))
		require.NoError(t, storetest.CheckInvariants(ctx, s))
		lastRev, err = s.Backend().Revision(ctx)
		require.NoError(t, err)
		closeAll()
		totalAcked += len(log.acked)
		totalUpdates += log.updates
	}
	sort.Slice(reopen, func(i, j int) bool { return reopen[i] < reopen[j] })
	t.Logf("RESULT REL-CRASH-KILL9-MIGRATION rounds=%d acked-migrations=%d acked-updates=%d in-flight-at-kill: committed=%d not-committed=%d (each retried: moved exactly once) duplicates=0 missing=0 reopen p50=%s max=%s race=%v",
		rounds, totalAcked, totalUpdates, inflightCommitted, inflightRetried,
		reopen[len(reopen)/2].Round(time.Millisecond), reopen[len(reopen)-1].Round(time.Millisecond), raceEnabled)
}

// kill9Open opens the store over the badger directory.
func kill9Open(t *testing.T, dir string) (*store.Store, func()) {
	t.Helper()
	b, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	s, err := store.New(b, store.Options{})
	require.NoError(t, err)
	return s, func() {
		_ = s.Close()
		require.NoError(t, b.Close())
	}
}

// kill9Where lists every instance and checks that each is in exactly one project
// namespace whose project its label names.
func kill9Where(t *testing.T, s *store.Store) map[string]string {
	t.Helper()
	var l resource.VirtualClusterInstanceList
	require.NoError(t, s.List(context.Background(), &l, store.ListOptions{}))
	where := map[string]string{}
	for _, it := range l.Items {
		prev, dup := where[it.Name]
		require.False(t, dup, "duplicate: %s in %s and %s", it.Name, prev, it.Namespace)
		where[it.Name] = it.Namespace
		require.Contains(t, []string{"p-a", "p-b"}, it.Namespace)
		require.Equal(t, it.Namespace, "p-"+it.Labels[resource.LabelProject])
	}
	for i := 0; i < kill9Instances; i++ {
		require.Contains(t, where, kill9Name(i), "missing: %s is in no project", kill9Name(i))
	}
	require.Len(t, where, kill9Instances)
	return where
}

// kill9Begin is a migration the child started.
type kill9Begin struct{ name, srcNS, inst, target string }

type kill9Ack struct{ uid, rv string }

// kill9Log is what the parent learnt from a child's output.
type kill9Log struct {
	acked       map[string]kill9Ack
	inFlight    map[int]kill9Begin // by migrator: begun and not acknowledged
	lastUpdate  map[string]string  // instance → description of the last acknowledged update
	updInFlight map[string]string  // instance → description of the update in flight
	updates     int
	maxAckedRV  int64
}

// kill9RunChild starts the child for one round, lets it run for d after it is
// ready, kills it with SIGKILL and returns what it acknowledged.
func kill9RunChild(t *testing.T, exe, dir string, round int, d time.Duration) *kill9Log {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^TestKill9Migration$", "-test.count=1")
	cmd.Env = append(os.Environ(), kill9ChildEnv+"="+dir, kill9RoundEnv+"="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	log := &kill9Log{acked: map[string]kill9Ack{}, inFlight: map[int]kill9Begin{},
		lastUpdate: map[string]string{}, updInFlight: map[string]string{}}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		readyOnce := sync.Once{}
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 1 && f[0] == "READY":
				readyOnce.Do(func() { close(ready) })
			case len(f) == 6 && f[0] == "BEGIN":
				m, _ := strconv.Atoi(f[1])
				log.inFlight[m] = kill9Begin{name: f[2], srcNS: f[3], inst: f[4], target: f[5]}
			case len(f) == 5 && f[0] == "ACK":
				m, _ := strconv.Atoi(f[1])
				delete(log.inFlight, m)
				log.acked[f[2]] = kill9Ack{uid: f[3], rv: f[4]}
				if rv, _ := strconv.ParseInt(f[4], 10, 64); rv > log.maxAckedRV {
					log.maxAckedRV = rv
				}
			case len(f) == 3 && f[0] == "UPD-BEGIN":
				log.updInFlight[f[1]] = f[2]
			case len(f) == 3 && f[0] == "UPD-ACK":
				delete(log.updInFlight, f[1])
				log.lastUpdate[f[1]] = f[2]
				log.updates++
			case len(f) == 2 && f[0] == "UPD-FAIL":
				delete(log.updInFlight, f[1])
			}
		}
	}()
	select {
	case <-ready:
	case <-done:
		_ = cmd.Wait()
		t.Fatalf("round %d: the child ended before it was ready", round)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("round %d: the child is not ready", round)
	}
	time.Sleep(d)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-done
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "round %d: the child was not killed: %v", round, err)
	return log
}

// kill9Child is the child process: two migrators move their instances back and forth
// under unique names, and an updater changes their descriptions, each line of
// output written only once the store returned. It runs until it is killed.
func kill9Child(dir, round string) {
	ctx := context.Background()
	b, err := badger.Open(dir, badger.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		os.Exit(2)
	}
	s, err := store.New(b, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: store:", err)
		os.Exit(2)
	}
	svc, err := migrate.New(s, migrate.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: migrate:", err)
		os.Exit(2)
	}
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
		outMu.Unlock()
	}
	locate := func(name string) (*resource.VirtualClusterInstance, bool) {
		for _, ns := range []string{"p-a", "p-b"} {
			inst := &resource.VirtualClusterInstance{}
			if s.Get(ctx, ns, name, inst, store.GetOptions{}) == nil {
				return inst, true
			}
		}
		return nil, false
	}
	say("READY")
	for m := 0; m < 2; m++ {
		go func() {
			for seq := 0; ; seq++ {
				for i := m; i < kill9Instances; i += 2 {
					inst, ok := locate(kill9Name(i))
					if !ok {
						continue // between two reads of a move by nobody else: cannot happen
					}
					target := "b"
					if inst.Namespace == "p-b" {
						target = "a"
					}
					name := fmt.Sprintf("k9-r%s-m%d-%d-%d", round, m, seq, i)
					say("BEGIN %d %s %s %s %s", m, name, inst.Namespace, inst.Name, target)
					res, err := svc.Migrate(ctx, target, request(name, inst.Namespace, inst.Name), admin(), migrate.RequestOptions{})
					if err != nil {
						fmt.Fprintln(os.Stderr, "child: migrate:", err)
						os.Exit(3)
					}
					say("ACK %d %s %s %s", m, name, res.Status.UID, res.ResourceVersion)
				}
			}
		}()
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for seq := 0; ; seq++ {
		name := kill9Name(rng.Intn(kill9Instances))
		inst, ok := locate(name)
		if !ok {
			continue // caught between the reads of p-a and p-b while it moved
		}
		value := fmt.Sprintf("r%s-u%d", round, seq)
		inst.Spec.Description = value
		say("UPD-BEGIN %s %s", name, value)
		if err := s.Update(ctx, inst, store.UpdateOptions{}); err != nil {
			if !errors.Is(err, resource.ErrNotFound) && !errors.Is(err, resource.ErrConflict) {
				fmt.Fprintln(os.Stderr, "child: update:", err)
				os.Exit(3)
			}
			say("UPD-FAIL %s", name)
			continue
		}
		say("UPD-ACK %s %s", name, value)
	}
}
