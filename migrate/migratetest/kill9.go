package migratetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
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
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/storetest"
)

// DefaultKill9Rounds is the number of kills of [RunKill9] when neither the
// environment nor [Kill9Config].Rounds sets one.
const DefaultKill9Rounds = 15

// The environment of a child of RunKill9.
const (
	kill9TestEnv  = "MGMT_MIGRATE_KILL9_TEST"  // the name of the test that is the child
	kill9StateEnv = "MGMT_MIGRATE_KILL9_STATE" // Kill9Config.Setup's string
	kill9RoundEnv = "MGMT_MIGRATE_KILL9_ROUND"
)

// kill9Instances is how many instances the child moves; instance i is migrated by
// migrator i%2.
const kill9Instances = 4

// Kill9Config says how [RunKill9] reaches one durable state from two processes: the
// test (the parent) and the child process it kills.
type Kill9Config struct {
	// Setup prepares the durable state, once, in the parent, and returns the string
	// the child opens it from: a directory, or an endpoint and a key prefix. What it
	// starts (an etcd server, say) must outlive every child: stop it with t.Cleanup.
	// Nil means t.TempDir(), an empty directory.
	Setup func(t *testing.T) string
	// OpenChild opens a backend over the state in the child process; required. The
	// child never closes it: it is killed with the backend open.
	OpenChild func(state string) (backend.Backend, error)
	// OpenParent opens a backend over the state in the parent: to seed it and, after
	// each kill, to check it and retry what was in flight. RunKill9 closes it before
	// the next child starts. Nil means OpenChild.
	OpenParent func(state string) (backend.Backend, error)
	// Rounds is the number of kills. The environment variable
	// MGMT_MIGRATE_CRASH_ROUNDS, else MGMT_CRASH_ROUNDS (the knob of the store's crash
	// tests), overrides it; zero means [DefaultKill9Rounds].
	Rounds int
	// Quiet is how long the revision must stand still after a kill before the parent
	// checks the state: a server that outlives the child may still apply a
	// transaction the child sent just before it died (give some 200ms there). Zero
	// checks at once, which is right when the child had the state open in its own
	// process (a directory): nothing changes it once the child is dead.
	Quiet time.Duration
}

// InKill9Child reports whether this process is a child of [RunKill9]: a TestMain
// may skip what only the parent needs (starting a server, say), since the child
// reaches the state through Kill9Config.OpenChild.
func InKill9Child() bool { return os.Getenv(kill9TestEnv) != "" }

// RunKill9 is REL-CRASH-KILL9-MIGRATION: a child process migrates instances between
// projects a and b in a loop, under unique request names, while it updates them
// concurrently; the test kills it with SIGKILL at a random moment (150 to 800ms
// after it is ready), opens the state and checks that every instance is in exactly
// one project with the spec of its last acknowledged (or in-flight) update and its
// status, that every acknowledged migration is recorded as acknowledged, and that
// each migration in flight at the kill, retried with the same name, completes
// exactly once: moved now if it had not committed, answered from the record if it
// had. Then the next round starts on the same state. It logs one line starting with
// "RESULT REL-CRASH-KILL9-MIGRATION".
//
// The child is the test binary itself, run again with -test.run selecting t's test
// and with environment variables that make RunKill9 the child: there it opens the
// state with cfg.OpenChild and runs until it is killed, never returning. So the
// caller's test must:
//
//   - call RunKill9 from the test function (or subtest) that the child is to run,
//     as the first thing that does any work: everything before it runs in the child
//     too (for a subtest, so does its parent test up to the t.Run), and what
//     starts the durable state (a server) belongs in cfg.Setup, which only the
//     parent calls;
//   - not run in parallel with another test on the same state, and leave the state
//     empty at the start (cfg.Setup's job);
//   - run on a system with SIGKILL (not Windows).
func RunKill9(t *testing.T, cfg Kill9Config) {
	if name := os.Getenv(kill9TestEnv); name != "" && name == t.Name() {
		kill9Child(cfg, os.Getenv(kill9StateEnv), os.Getenv(kill9RoundEnv)) // never returns
	}
	p, rounds := newKill9Parent(t, cfg, DefaultKill9Rounds, "MGMT_MIGRATE_CRASH_ROUNDS")
	exe, err := os.Executable()
	require.NoError(t, err)

	// The seed: projects a and b, the instances in a.
	func() {
		s, closeAll := p.openStore()
		defer closeAll()
		for _, name := range []string{"a", "b"} {
			require.NoError(t, s.Create(p.ctx, Project(name), store.CreateOptions{}))
		}
		for i := 0; i < kill9Instances; i++ {
			inst := Instance("p-a", kill9Name(i))
			require.NoError(t, s.Create(p.ctx, inst, store.CreateOptions{}))
			inst.Status = ReadyStatus
			require.NoError(t, s.UpdateStatus(p.ctx, inst, store.UpdateOptions{}))
		}
	}()

	// description is each instance's spec.description as the last check found it.
	description := map[string]string{}
	for i := 0; i < kill9Instances; i++ {
		description[kill9Name(i)] = "orig"
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var tally kill9Tally
	lastRev := int64(0)
	for round := 1; round <= rounds; round++ {
		log := p.runChild(exe, round, time.Duration(150+rng.Intn(650))*time.Millisecond)
		lastRev = p.check(round, log, lastRev, description, &tally)
	}
	sort.Slice(tally.reopen, func(i, j int) bool { return tally.reopen[i] < tally.reopen[j] })
	t.Logf("RESULT REL-CRASH-KILL9-MIGRATION rounds=%d acked-migrations=%d acked-updates=%d in-flight-at-kill: committed=%d not-committed=%d (each retried: moved exactly once) duplicates=0 missing=0 reopen p50=%s max=%s race=%v",
		rounds, tally.acked, tally.updates, tally.inflightCommitted, tally.inflightRetried,
		tally.reopen[len(tally.reopen)/2].Round(time.Millisecond), tally.reopen[len(tally.reopen)-1].Round(time.Millisecond), raceEnabled)
}

func kill9Name(i int) string { return fmt.Sprintf("vc-%d", i) }

// kill9Parent is the test's side of RunKill9.
type kill9Parent struct {
	t     *testing.T
	ctx   context.Context
	open  func(state string) (backend.Backend, error)
	state string
	quiet time.Duration
}

// kill9Tally is what the rounds add up to.
type kill9Tally struct {
	acked, updates                     int
	inflightCommitted, inflightRetried int
	reopen                             []time.Duration
}

// openStore opens a store over the state; closeAll closes the store and the backend.
func (p *kill9Parent) openStore() (s *store.Store, closeAll func()) {
	p.t.Helper()
	b, err := p.open(p.state)
	require.NoError(p.t, err)
	s, err = store.New(b, store.Options{})
	if err != nil {
		_ = b.Close()
		require.NoError(p.t, err)
	}
	return s, func() {
		_ = s.Close()
		assert.NoError(p.t, b.Close())
	}
}

// waitQuiet returns once the revision has not moved for p.quiet.
func (p *kill9Parent) waitQuiet(s *store.Store) {
	p.t.Helper()
	if p.quiet <= 0 {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	prev, err := s.Backend().Revision(p.ctx)
	require.NoError(p.t, err)
	for {
		time.Sleep(p.quiet)
		cur, err := s.Backend().Revision(p.ctx)
		require.NoError(p.t, err)
		if cur == prev {
			return
		}
		require.False(p.t, time.Now().After(deadline), "the revision still moves 30s after the kill")
		prev = cur
	}
}

// check opens the state after round's kill, checks it against what the child
// acknowledged, retries the migrations in flight, and returns the revision it
// leaves the state at.
func (p *kill9Parent) check(round int, log *kill9Log, lastRev int64, description map[string]string, tally *kill9Tally) int64 {
	t, ctx := p.t, p.ctx
	began := time.Now()
	s, closeAll := p.openStore()
	defer closeAll()
	tally.reopen = append(tally.reopen, time.Since(began))
	p.waitQuiet(s)
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
		assert.Equal(t, ReadyStatus, cur.Status, "round %d: %s lost its status", round, inst)
	}

	// The migrations in flight at the kill: retried with the same name, each
	// completes exactly once.
	svc, err := migrate.New(s, migrate.Options{})
	require.NoError(t, err)
	for _, b := range log.inFlight {
		rec := &resource.ProjectMigrateVirtualClusterInstance{}
		committed := s.Get(ctx, "", svc.RecordName(b.target, b.name), rec, store.GetOptions{}) == nil
		rec.Name = b.name // a response carries the request's name
		before, err := s.Backend().Revision(ctx)
		require.NoError(t, err)
		res, err := svc.Migrate(ctx, b.target, Request(b.name, b.srcNS, b.inst), Admin(), migrate.RequestOptions{})
		require.NoError(t, err, "round %d: retry of %s", round, b.name)
		after, err := s.Backend().Revision(ctx)
		require.NoError(t, err)
		if committed {
			tally.inflightCommitted++
			assert.Equal(t, before, after, "round %d: %s committed before the kill, its retry must not move again", round, b.name)
			assert.Equal(t, rec, res)
		} else {
			tally.inflightRetried++
			assert.Equal(t, before+1, after, "round %d: %s had not committed, its retry moves once", round, b.name)
		}
		again, err := svc.Migrate(ctx, b.target, Request(b.name, b.srcNS, b.inst), Admin(), migrate.RequestOptions{})
		require.NoError(t, err)
		assert.Equal(t, res, again, "round %d: a second retry of %s answers the same", round, b.name)
	}
	// The uid of each instance is the one its last move recorded.
	var recs resource.ProjectMigrateVirtualClusterInstanceList
	require.NoError(t, s.List(ctx, &recs, store.ListOptions{}))
	for inst, ns := range kill9Where(t, s) {
		cur := &resource.VirtualClusterInstance{}
		require.NoError(t, s.Get(ctx, ns, inst, cur, store.GetOptions{}))
		if cur.Annotations[resource.AnnotationMigratedFrom] == "" {
			continue
		}
		n := 0
		for _, r := range recs.Items {
			if r.Status.UID == cur.UID {
				n++
				assert.Equal(t, ns, r.Status.Namespace)
			}
		}
		assert.Equal(t, 1, n, "round %d: %s (uid %s) is the result of %d recorded moves", round, inst, cur.UID, n)
	}
	require.NoError(t, s.Settle(ctx))
	require.NoError(t, storetest.CheckInvariants(ctx, s))
	tally.acked += len(log.acked)
	tally.updates += log.updates
	rev, err = s.Backend().Revision(ctx)
	require.NoError(t, err)
	return rev
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

// read takes one line of the child's output into the log; it reports whether the
// line was READY.
func (log *kill9Log) read(line string) (ready bool) {
	f := strings.Fields(line)
	switch {
	case len(f) == 1 && f[0] == "READY":
		return true
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
	return false
}

// kill9RunPattern is the -test.run pattern that selects exactly the test named name
// (a subtest's name has its parents' names before it, separated by slashes).
func kill9RunPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// runChild starts the child for one round, lets it run for d after it is ready,
// kills it with SIGKILL and returns what it acknowledged.
func (p *kill9Parent) runChild(exe string, round int, d time.Duration) *kill9Log {
	t := p.t
	t.Helper()
	pattern := kill9RunPattern(t.Name())
	cmd := exec.Command(exe, "-test.run="+pattern, "-test.count=1")
	cmd.Env = append(os.Environ(), kill9TestEnv+"="+t.Name(), kill9StateEnv+"="+p.state, kill9RoundEnv+"="+strconv.Itoa(round))
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
		var once sync.Once
		for sc.Scan() {
			if log.read(sc.Text()) {
				once.Do(func() { close(ready) })
			}
		}
	}()
	killWhenDue(t, cmd, ready, done, round, d, pattern)
	return log
}

// kill9Child is the child process: two migrators move their instances back and forth
// under unique names, and an updater changes their descriptions, each line of
// output written only once the store returned. It runs until it is killed, and
// exits (with status 2 or 3) on any unexpected error.
func kill9Child(cfg Kill9Config, state, round string) {
	fail := func(code int, what string, err error) {
		fmt.Fprintf(os.Stderr, "migratetest: kill9 child: %s: %v\n", what, err)
		os.Exit(code)
	}
	if cfg.OpenChild == nil {
		fail(2, "open", errors.New("the Kill9Config has no OpenChild"))
	}
	ctx := context.Background()
	b, err := cfg.OpenChild(state)
	if err != nil {
		fail(2, "open", err)
	}
	s, err := store.New(b, store.Options{})
	if err != nil {
		fail(2, "store", err)
	}
	svc, err := migrate.New(s, migrate.Options{})
	if err != nil {
		fail(2, "migrate", err)
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
					res, err := svc.Migrate(ctx, target, Request(name, inst.Namespace, inst.Name), Admin(), migrate.RequestOptions{})
					if err != nil {
						fail(3, "migrate", err)
					}
					// The ACK names the record: the request's name scoped by its target.
					say("ACK %d %s %s %s", m, svc.RecordName(target, name), res.Status.UID, res.ResourceVersion)
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
			// 409 when the instance changed or moved since it was read (the store
			// names where it went); 404 when it has since moved back and away again.
			if !errors.Is(err, resource.ErrNotFound) && !errors.Is(err, resource.ErrConflict) {
				fail(3, "update", err)
			}
			say("UPD-FAIL %s", name)
			continue
		}
		say("UPD-ACK %s %s", name, value)
	}
}

// newKill9Parent is the parent side of a crash test: cfg checked, its defaults filled
// in, the state set up; and the number of rounds, from cfg, else env, else
// MGMT_CRASH_ROUNDS, else def.
func newKill9Parent(t *testing.T, cfg Kill9Config, def int, env string) (*kill9Parent, int) {
	require.NotNil(t, cfg.OpenChild, "Kill9Config.OpenChild is required")
	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = def
	}
	for _, env := range []string{env, "MGMT_CRASH_ROUNDS"} {
		if v := os.Getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "%s=%q", env, v)
			rounds = n
			break
		}
	}
	open := cfg.OpenParent
	if open == nil {
		open = cfg.OpenChild
	}
	setup := cfg.Setup
	if setup == nil {
		setup = func(t *testing.T) string { return t.TempDir() }
	}
	return &kill9Parent{t: t, open: open, state: setup(t), quiet: cfg.Quiet, ctx: context.Background()}, rounds
}

// killWhenDue waits until the child of round is ready, lets it work for d, kills it
// with SIGKILL and checks that the kill ended it. done closes when the child's output
// ends; pattern is its -test.run, for the message when the child never got ready.
func killWhenDue(t *testing.T, cmd *exec.Cmd, ready, done <-chan struct{}, round int, d time.Duration, pattern string) {
	select {
	case <-ready:
	case <-done:
		_ = cmd.Wait()
		require.FailNow(t, fmt.Sprintf("round %d: the child ended before it was ready (does -test.run=%s select the test?)", round, pattern))
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		require.FailNow(t, fmt.Sprintf("round %d: the child is not ready after 60s", round))
	}
	select {
	case <-time.After(d):
	case <-done:
		_ = cmd.Wait()
		require.FailNow(t, fmt.Sprintf("round %d: the child ended before it was killed: %v (its error is on stderr)", round, cmd.ProcessState))
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-done
	err := cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "round %d: the child was not killed: %v", round, err)
}
