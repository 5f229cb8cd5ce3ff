package migratetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// DefaultKill9ProjectRounds is the number of kills of [RunKill9ProjectDeletion]
// when neither the environment nor [Kill9Config].Rounds sets one.
const DefaultKill9ProjectRounds = 4

// kill9ProjectInstances is how many instances the project deleted in each round
// holds; kill9StayInstances how many the project that stays holds.
const (
	kill9ProjectInstances = 40
	kill9StayInstances    = 5
	kill9Stay             = "stay"
	// kill9ReleaseEvery spaces the child's finalizer releases so that its work on
	// a project (some 40 × 8ms) spans the moments it is killed at.
	kill9ReleaseEvery = 8 * time.Millisecond
)

// RunKill9ProjectDeletion is the crash test of a project's deletion (issue 20 rule
// 4): each round, the parent creates a project with instances that each carry
// [SeedFinalizer] and starts its deletion; a child process, with the project rules
// started and a controller that releases [SeedFinalizer] from instances being
// deleted one at a time, works on it until it is killed with SIGKILL at a random
// moment. The parent then opens the state with the rules and the same controller:
// the deletion finishes (the project and everything in its namespace go), and
// nothing else is touched (project "stay" and its instances, with their
// finalizers and status, are as they were). It logs one line starting with
// "RESULT KILL9-PROJECT-DELETION" saying how far the child had got at each kill.
//
// The child is the test binary run again, as for [RunKill9], with the same
// requirements on the calling test. The environment variable
// MGMT_PROJECT_CRASH_ROUNDS, else MGMT_CRASH_ROUNDS, sets the number of rounds.
func RunKill9ProjectDeletion(t *testing.T, cfg Kill9Config) {
	if name := os.Getenv(kill9TestEnv); name != "" && name == t.Name() {
		kill9ProjectChild(cfg, os.Getenv(kill9StateEnv)) // never returns
	}
	p, rounds := newKill9Parent(t, cfg, DefaultKill9ProjectRounds, "MGMT_PROJECT_CRASH_ROUNDS")
	exe, err := os.Executable()
	require.NoError(t, err)

	// Project "stay" and its instances: nothing may touch them.
	var stay string
	p.withRules(false, func(s *store.Store) {
		require.NoError(t, s.Create(p.ctx, Project(kill9Stay), store.CreateOptions{}))
		for i := 0; i < kill9StayInstances; i++ {
			inst := Instance("p-"+kill9Stay, kill9Name(i))
			require.NoError(t, s.Create(p.ctx, inst, store.CreateOptions{}))
			inst.Status = ReadyStatus
			require.NoError(t, s.UpdateStatus(p.ctx, inst, store.UpdateOptions{}))
		}
		stay = stayState(t, s)
	})

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var leftAtKill []string
	for round := 1; round <= rounds; round++ {
		name := fmt.Sprintf("gone-%d", round)
		p.withRules(false, func(s *store.Store) {
			require.NoError(t, s.Create(p.ctx, Project(name), store.CreateOptions{}))
			for i := 0; i < kill9ProjectInstances; i++ {
				require.NoError(t, s.Create(p.ctx, Instance("p-"+name, kill9Name(i)), store.CreateOptions{}))
			}
			_, err := s.Delete(p.ctx, Project(name), store.DeleteOptions{})
			require.NoError(t, err)
		})
		p.runProjectChild(exe, round, time.Duration(30+rng.Intn(300))*time.Millisecond)
		p.withRules(true, func(s *store.Store) {
			p.waitQuiet(s)
			l := &resource.VirtualClusterInstanceList{}
			require.NoError(t, s.List(p.ctx, l, store.ListOptions{Namespace: "p-" + name}))
			marked := 0
			for i := range l.Items {
				if l.Items[i].IsTerminating() {
					marked++
				}
			}
			gone := errors.Is(s.Get(p.ctx, "", name, &resource.Project{}, store.GetOptions{}), resource.ErrNotFound)
			leftAtKill = append(leftAtKill, fmt.Sprintf("%d(%d-marked,project-gone=%v)", len(l.Items), marked, gone))

			// The restarted host finishes the deletion.
			ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
			defer cancel()
			go releaseLoop(ctx, s, "p-"+name, time.Millisecond)
			for {
				err := s.Get(ctx, "", name, &resource.Project{}, store.GetOptions{})
				if errors.Is(err, resource.ErrNotFound) {
					break
				}
				require.NoError(t, err, "round %d: project %s is not gone after the restart", round, name)
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			require.NoError(t, s.List(p.ctx, l, store.ListOptions{Namespace: "p-" + name}))
			assert.Empty(t, l.Items, "round %d: left behind in p-%s", round, name)
			assert.Equal(t, stay, stayState(t, s), "round %d: project %q or its instances changed", round, kill9Stay)
			projects := &resource.ProjectList{}
			require.NoError(t, s.List(p.ctx, projects, store.ListOptions{}))
			require.Len(t, projects.Items, 1, "round %d: only %q is left", round, kill9Stay)
		})
	}
	t.Logf("RESULT KILL9-PROJECT-DELETION rounds=%d instances-per-project=%d left-at-kill=[%s] finished-after-restart=%d left-behind=0 stay-intact=true",
		rounds, kill9ProjectInstances, strings.Join(leftAtKill, " "), rounds)
}

// withRules opens a store over the state with the project rules installed (and
// started, with start), runs fn and closes it all.
func (p *kill9Parent) withRules(start bool, fn func(s *store.Store)) {
	p.t.Helper()
	b, err := p.open(p.state)
	require.NoError(p.t, err)
	defer func() { assert.NoError(p.t, b.Close()) }()
	var opts store.Options
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	require.NoError(p.t, err)
	s, err := store.New(b, opts)
	require.NoError(p.t, err)
	defer func() { _ = s.Close() }()
	if start {
		stop, err := rules.Start(s)
		require.NoError(p.t, err)
		defer stop()
	}
	fn(s)
}

// stayState is project "stay" and its instances, as JSON without resourceVersions
// of the lists: what "nothing touched" compares.
func stayState(t *testing.T, s *store.Store) string {
	t.Helper()
	p := &resource.Project{}
	require.NoError(t, s.Get(context.Background(), "", kill9Stay, p, store.GetOptions{}))
	l := &resource.VirtualClusterInstanceList{}
	require.NoError(t, s.List(context.Background(), l, store.ListOptions{Namespace: "p-" + kill9Stay}))
	l.ResourceVersion = ""
	require.Len(t, l.Items, kill9StayInstances)
	out := fmt.Sprintf("%s/%s/%v/%v;", p.UID, p.ResourceVersion, p.Finalizers, p.DeletionTimestamp)
	for _, i := range l.Items {
		out += fmt.Sprintf("%s/%s/%v/%v/%s;", i.Name, i.ResourceVersion, i.Finalizers, i.DeletionTimestamp, i.Status.Phase)
	}
	return out
}

// releaseLoop is the instances' own controller: it removes [SeedFinalizer] from
// the instances of ns being deleted, one at a time, a few milliseconds apart, until
// ctx ends.
func releaseLoop(ctx context.Context, s *store.Store, ns string, every time.Duration) {
	for ctx.Err() == nil {
		l := &resource.VirtualClusterInstanceList{}
		if err := s.List(ctx, l, store.ListOptions{Namespace: ns}); err == nil {
			for i := range l.Items {
				if l.Items[i].IsTerminating() && l.Items[i].HasFinalizer(SeedFinalizer) {
					_ = ReleaseFinalizer(s, ctx, ns, l.Items[i].Name)
					break
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

// runProjectChild starts the child for one round, lets it run for d after it is
// ready and kills it with SIGKILL.
func (p *kill9Parent) runProjectChild(exe string, round int, d time.Duration) {
	t := p.t
	t.Helper()
	pattern := kill9RunPattern(t.Name())
	cmd := exec.Command(exe, "-test.run="+pattern, "-test.count=1")
	cmd.Env = append(os.Environ(), kill9TestEnv+"="+t.Name(), kill9StateEnv+"="+p.state, kill9RoundEnv+"="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			if !seen && sc.Text() == "READY" {
				seen = true
				close(ready)
			}
		}
	}()
	killWhenDue(t, cmd, ready, done, round, d, pattern)
}

// kill9ProjectChild is the child: the host with the project rules started and the
// instances' controller, until it is killed.
func kill9ProjectChild(cfg Kill9Config, state string) {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "migratetest: kill9 project child: %s: %v\n", what, err)
		os.Exit(2)
	}
	if cfg.OpenChild == nil {
		fail("open", errors.New("the Kill9Config has no OpenChild"))
	}
	b, err := cfg.OpenChild(state)
	if err != nil {
		fail("open", err)
	}
	var opts store.Options
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	if err != nil {
		fail("rules", err)
	}
	s, err := store.New(b, opts)
	if err != nil {
		fail("store", err)
	}
	if _, err := rules.Start(s); err != nil {
		fail("start", err)
	}
	fmt.Fprintln(os.Stdout, "READY")
	ctx := context.Background()
	for {
		projects := &resource.ProjectList{}
		if err := s.List(ctx, projects, store.ListOptions{}); err != nil {
			fail("list", err)
		}
		for i := range projects.Items {
			if projects.Items[i].IsTerminating() {
				rctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				releaseLoop(rctx, s, "p-"+projects.Items[i].Name, kill9ReleaseEvery)
				cancel()
			}
		}
		time.Sleep(time.Millisecond)
	}
}
