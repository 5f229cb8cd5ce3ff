package migratetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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

// RulesEnv is an [Env] whose store has the project rules of package migrate
// installed and started, on a fake clock.
type RulesEnv struct {
	*Env
	// Rules are the project rules of Store.
	Rules *migrate.ProjectRules
	// Clock is the store's clock: step it to run out grace periods.
	Clock *storetest.FakeClock
	// Stop stops the rules' worker (the test's cleanup does too).
	Stop func()
}

// NewRulesEnv builds a store over a fresh backend from newBackend with the project
// rules installed (ro) and started; with seed, it holds the seed of [NewEnv],
// without, it is empty (and Env.Service is nil).
func NewRulesEnv(t *testing.T, newBackend func(t *testing.T) backend.Backend, ro migrate.ProjectRulesOptions, seed bool) *RulesEnv {
	t.Helper()
	var opts store.Options
	rules, err := migrate.InstallProjectRules(&opts, ro)
	require.NoError(t, err)
	h := storetest.NewHarness(t, newBackend(t), opts)
	stop, err := rules.Start(h.S)
	require.NoError(t, err)
	t.Cleanup(stop)
	e := &RulesEnv{Rules: rules, Clock: h.Clock, Stop: stop}
	if seed {
		e.Env = NewEnv(t, h.S)
	} else {
		e.Env = &Env{T: t, Ctx: h.Ctx, Store: h.S}
	}
	return e
}

// Project reads project name; nil when it does not exist.
func (e *RulesEnv) Project(name string) *resource.Project {
	e.T.Helper()
	p := &resource.Project{}
	err := e.Store.Get(e.Ctx, "", name, p, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	require.NoError(e.T, err)
	return p
}

// Instances lists the instances of namespace ns, by name.
func (e *RulesEnv) Instances(ns string) map[string]*resource.VirtualClusterInstance {
	e.T.Helper()
	l := &resource.VirtualClusterInstanceList{}
	require.NoError(e.T, e.Store.List(e.Ctx, l, store.ListOptions{Namespace: ns}))
	out := map[string]*resource.VirtualClusterInstance{}
	for i := range l.Items {
		out[l.Items[i].Name] = &l.Items[i]
	}
	return out
}

// DeleteProject starts the deletion of project name.
func (e *RulesEnv) DeleteProject(name string) {
	e.T.Helper()
	_, err := e.Store.Delete(e.Ctx, Project(name), store.DeleteOptions{})
	require.NoError(e.T, err)
}

// Eventually waits (up to 20s) until cond holds, letting the store settle between
// tries.
func (e *RulesEnv) Eventually(cond func() bool, what string) {
	e.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNow(e.T, "timed out waiting", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReleaseFinalizer removes [SeedFinalizer] from the instance ns/name.
func (e *RulesEnv) ReleaseFinalizer(ns, name string) {
	e.T.Helper()
	require.NoError(e.T, ReleaseFinalizer(e.Store, e.Ctx, ns, name))
}

// Condition returns the condition of type typ of project p, or nil.
func Condition(p *resource.Project, typ string) *resource.Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// RunProjectRules runs the suite of the project rules (issue 20): each rule a
// subtest named after the property it protects, on a fresh store over a fresh
// backend from newBackend, with the rules installed and started.
func RunProjectRules(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	env := func(t *testing.T) *RulesEnv {
		return NewRulesEnv(t, newBackend, migrate.ProjectRulesOptions{}, true)
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, e *RulesEnv)
	}{
		{"rule 1: an instance outside a project namespace is 422 naming the namespace", testOutsideProjectNamespace},
		{"rule 1: an instance in the namespace of a missing project is 404 naming the project", testMissingProject},
		{"rule 1: the project label is set from the namespace on every write", testLabelSet},
		{"rule 1: a project label that disagrees with the namespace is 422", testLabelDisagrees},
		{"rule 1 and 4: no instance is created in a project being deleted (409), updates still pass", testCreateIntoDeleting},
		{"rule 2: allowedClusters hold on create and update of an instance (422 naming cluster and project)", testClustersOnInstance},
		{"rule 2: a project update that excludes a cluster in use is 422 naming an instance", testClustersOnProject},
		{"rule 2: a project narrowing racing an instance's cluster change never leaves an excluded cluster", testClustersRace},
		{"rule 3: a project name is at most 63 minus the prefix's length", testProjectNameBound},
		{"rule 4: a project gets the finalizer, which a client cannot drop while instances remain", testFinalizer},
		{"rule 4: deleting a project deletes its instances, honouring their finalizers and grace periods, and reports progress", testDeleteProject},
		{"rule 4: a deletion started while no worker ran finishes once one runs", testDeletionResumes},
		{"rule 4: only the leading store's worker acts", testWorkerFollowsLeadership},
		{"rule 4 races: creates and moves into a project being deleted leave nothing behind", testDeletionRaces},
		{"rule 5: a move keeps the rules in its transaction", testMoveKeepsRules},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, env(t)) })
	}
	t.Run("rule 3: the bound follows a configured prefix", func(t *testing.T) {
		e := NewRulesEnv(t, newBackend, migrate.ProjectRulesOptions{NamespacePrefix: "team-"}, false)
		assert.Equal(t, 58, e.Rules.MaxProjectNameLength())
		require.NoError(t, e.Store.Create(e.Ctx, Project(strings.Repeat("x", 58)), store.CreateOptions{}))
		err := e.Store.Create(e.Ctx, Project(strings.Repeat("y", 59)), store.CreateOptions{})
		storetest.RequireCause(t, err, "metadata.name", resource.CauseFieldValueTooLong)
		assert.Contains(t, err.Error(), "at most 58 characters")
		require.NoError(t, e.Store.Create(e.Ctx, Project("a"), store.CreateOptions{}))
		inst := Instance("p-a", "dev")
		inst.Namespace, inst.Labels = "team-a", nil
		require.NoError(t, e.Store.Create(e.Ctx, inst, store.CreateOptions{}))
		assert.Equal(t, "a", inst.Labels[resource.LabelProject])
		err = e.Store.Create(e.Ctx, Instance("p-a", "dev"), store.CreateOptions{})
		storetest.RequireCause(t, err, "metadata.namespace", "")
	})
}

func testOutsideProjectNamespace(t *testing.T, e *RulesEnv) {
	for _, ns := range []string{"default", "pa", "team-a"} {
		t.Run(ns, func(t *testing.T) {
			inst := Instance("p-a", "x")
			inst.Namespace = ns
			err := e.Store.Create(e.Ctx, inst, store.CreateOptions{})
			storetest.RequireCause(t, err, "metadata.namespace", "")
			assert.Contains(t, err.Error(), "is not the namespace of a project")
		})
	}
}

func testMissingProject(t *testing.T, e *RulesEnv) {
	err := e.Store.Create(e.Ctx, Instance("p-zzz", "x"), store.CreateOptions{})
	storetest.RequireReason(t, err, resource.ReasonNotFound)
	assert.Contains(t, err.Error(), `project "zzz" not found`)
	// dryRun answers the same.
	err = e.Store.Create(e.Ctx, Instance("p-zzz", "x"), store.CreateOptions{WriteOptions: store.WriteOptions{DryRun: true}})
	storetest.RequireReason(t, err, resource.ReasonNotFound)
}

func testLabelSet(t *testing.T, e *RulesEnv) {
	inst := Instance("p-a", "x")
	inst.Labels = nil
	require.NoError(t, e.Store.Create(e.Ctx, inst, store.CreateOptions{}))
	assert.Equal(t, "a", e.Get("p-a", "x").Labels[resource.LabelProject])
	// An update that drops the label gets it back.
	cur := e.Get("p-a", "x")
	delete(cur.Labels, resource.LabelProject)
	require.NoError(t, e.Store.Update(e.Ctx, cur, store.UpdateOptions{}))
	assert.Equal(t, "a", e.Get("p-a", "x").Labels[resource.LabelProject])
}

func testLabelDisagrees(t *testing.T, e *RulesEnv) {
	inst := Instance("p-a", "x")
	inst.Labels[resource.LabelProject] = "c"
	err := e.Store.Create(e.Ctx, inst, store.CreateOptions{})
	storetest.RequireCause(t, err, "metadata.labels[management.service/project]", "")
	assert.Contains(t, err.Error(), `must be "a"`)

	// The relabelling of the issue: p-a/dev as project c.
	cur := e.Get("p-a", "dev")
	cur.Labels[resource.LabelProject] = "c"
	err = e.Store.Update(e.Ctx, cur, store.UpdateOptions{})
	storetest.RequireCause(t, err, "metadata.labels[management.service/project]", "")
	l := &resource.VirtualClusterInstanceList{}
	require.NoError(t, e.Store.List(e.Ctx, l, store.ListOptions{LabelSelector: resource.LabelProject + "=c"}))
	assert.Empty(t, l.Items)
}

// holdAndDelete gives project name a finalizer of its own, so that it stays marked
// once its instances are gone, and starts its deletion.
func holdAndDelete(e *RulesEnv, name string) {
	p := e.Project(name)
	p.Finalizers = append(p.Finalizers, "example.com/hold")
	require.NoError(e.T, e.Store.Update(e.Ctx, p, store.UpdateOptions{}))
	e.DeleteProject(name)
}

func testCreateIntoDeleting(t *testing.T, e *RulesEnv) {
	holdAndDelete(e, "a") // p-a/dev has a finalizer: it stays, marked
	e.Eventually(func() bool { d := e.Get("p-a", "dev"); return d != nil && d.IsTerminating() }, "p-a/dev marked")
	err := e.Store.Create(e.Ctx, Instance("p-a", "new"), store.CreateOptions{})
	storetest.RequireReason(t, err, resource.ReasonConflict)
	assert.Contains(t, err.Error(), `project "a" is being deleted`)
	// The instance on its way out can still lose its finalizer.
	e.ReleaseFinalizer("p-a", "dev")
	e.Eventually(func() bool { return e.Get("p-a", "dev") == nil }, "p-a/dev gone")
}

func testClustersOnInstance(t *testing.T, e *RulesEnv) {
	inst := Instance("p-b", "x")
	inst.Spec.ClusterRef.Cluster = "c9"
	err := e.Store.Create(e.Ctx, inst, store.CreateOptions{})
	storetest.RequireCause(t, err, "spec.clusterRef.cluster", "")
	assert.Contains(t, err.Error(), `cluster "c9" is not allowed in project "b"`)

	require.NoError(t, e.Store.Create(e.Ctx, Instance("p-b", "x"), store.CreateOptions{}))
	cur := e.Get("p-b", "x")
	cur.Spec.ClusterRef.Cluster = "c9"
	err = e.Store.Update(e.Ctx, cur, store.UpdateOptions{})
	storetest.RequireCause(t, err, "spec.clusterRef.cluster", "")
	cur.Spec.ClusterRef.Cluster = "c2"
	require.NoError(t, e.Store.Update(e.Ctx, cur, store.UpdateOptions{}))
}

func testClustersOnProject(t *testing.T, e *RulesEnv) {
	require.NoError(t, e.Store.Create(e.Ctx, Instance("p-b", "x"), store.CreateOptions{})) // on c1
	p := e.Project("b")
	p.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c2"}}
	err := e.Store.Update(e.Ctx, p, store.UpdateOptions{})
	storetest.RequireCause(t, err, "spec.allowedClusters", "")
	assert.Contains(t, err.Error(), `cluster "c1", which virtual cluster instance "x"`)
	// Widening, and narrowing to what is used, pass.
	for _, allowed := range [][]resource.AllowedCluster{{{Name: "c1"}}, {{Name: "c1"}, {Name: "c3"}}, nil, {{Name: "*"}}} {
		p = e.Project("b")
		p.Spec.AllowedClusters = allowed
		require.NoError(t, e.Store.Update(e.Ctx, p, store.UpdateOptions{}), "%v", allowed)
	}
}

// testClustersRace races, round after round, a project update that excludes c2
// against an instance update that moves to c2: whichever commits first, the other
// sees it (each write read the other's object in its transaction), so never do
// both pass.
func testClustersRace(t *testing.T, e *RulesEnv) {
	require.NoError(t, e.Store.Create(e.Ctx, Instance("p-b", "x"), store.CreateOptions{}))
	both := 0
	for round := 0; round < 20; round++ {
		p := e.Project("b")
		p.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}, {Name: "c2"}}
		require.NoError(t, e.Store.Update(e.Ctx, p, store.UpdateOptions{}))
		inst := e.Get("p-b", "x")
		inst.Spec.ClusterRef.Cluster = "c1"
		require.NoError(t, e.Store.Update(e.Ctx, inst, store.UpdateOptions{}))

		p, inst = e.Project("b"), e.Get("p-b", "x")
		p.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c1"}}
		inst.Spec.ClusterRef.Cluster = "c2"
		var wg sync.WaitGroup
		var perr, ierr error
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			perr = e.Store.GuaranteedUpdate(e.Ctx, "", "b", &resource.Project{}, func(cur resource.Object) error {
				cur.(*resource.Project).Spec.AllowedClusters = p.Spec.AllowedClusters
				return nil
			}, store.UpdateOptions{})
		}()
		go func() {
			defer wg.Done()
			<-start
			ierr = e.Store.GuaranteedUpdate(e.Ctx, "p-b", "x", &resource.VirtualClusterInstance{}, func(cur resource.Object) error {
				cur.(*resource.VirtualClusterInstance).Spec.ClusterRef.Cluster = "c2"
				return nil
			}, store.UpdateOptions{})
		}()
		close(start)
		wg.Wait()
		if perr == nil && ierr == nil {
			both++
		}
		assert.False(t, perr != nil && ierr != nil, "round %d: both refused: %v / %v", round, perr, ierr)
		final, fi := e.Project("b"), e.Get("p-b", "x")
		assert.True(t, clusterAllowedIn(final, fi.Spec.ClusterRef.Cluster),
			"round %d: instance on %q, project allows %v", round, fi.Spec.ClusterRef.Cluster, final.Spec.AllowedClusters)
	}
	assert.Zero(t, both, "rounds in which both writes passed")
}

func clusterAllowedIn(p *resource.Project, cluster string) bool {
	if cluster == "" || len(p.Spec.AllowedClusters) == 0 {
		return true
	}
	for _, a := range p.Spec.AllowedClusters {
		if a.Name == "*" || a.Name == cluster {
			return true
		}
	}
	return false
}

func testProjectNameBound(t *testing.T, e *RulesEnv) {
	assert.Equal(t, 61, e.Rules.MaxProjectNameLength())
	require.NoError(t, e.Store.Create(e.Ctx, Project(strings.Repeat("x", 61)), store.CreateOptions{}))
	err := e.Store.Create(e.Ctx, Project(strings.Repeat("y", 62)), store.CreateOptions{})
	storetest.RequireCause(t, err, "metadata.name", resource.CauseFieldValueTooLong)
	assert.Contains(t, err.Error(), "at most 61 characters")
	err = e.Store.Create(e.Ctx, Project("a.b"), store.CreateOptions{})
	storetest.RequireCause(t, err, "metadata.name", "")
}

func testFinalizer(t *testing.T, e *RulesEnv) {
	p := e.Project("a")
	assert.Contains(t, p.Finalizers, migrate.FinalizerProjectInstances)
	// Dropped by a client on a live project: put back.
	p.Finalizers = nil
	require.NoError(t, e.Store.Update(e.Ctx, p, store.UpdateOptions{}))
	assert.Contains(t, e.Project("a").Finalizers, migrate.FinalizerProjectInstances)
	// Dropped while the deletion waits for p-a/dev: 422 naming it.
	holdAndDelete(e, "a")
	e.Eventually(func() bool { d := e.Get("p-a", "dev"); return d != nil && d.IsTerminating() }, "p-a/dev marked")
	// (The worker writes the status meanwhile: read and write in one go.)
	err := e.Store.GuaranteedUpdate(e.Ctx, "", "a", &resource.Project{}, func(cur resource.Object) error {
		cur.GetObjectMeta().RemoveFinalizer(migrate.FinalizerProjectInstances)
		return nil
	}, store.UpdateOptions{})
	storetest.RequireCause(t, err, "metadata.finalizers", "")
	assert.Contains(t, err.Error(), `"dev" is one`)
}

func testDeleteProject(t *testing.T, e *RulesEnv) {
	// p-a holds dev (finalizer), plain (none) and slow (already being deleted with a
	// grace period of 30s); p-b's instance must stay.
	plain := Instance("p-a", "plain")
	plain.Finalizers = nil
	e.Create(plain)
	slow := Instance("p-a", "slow")
	slow.Finalizers = nil
	e.Create(slow)
	grace := int64(30)
	_, err := e.Store.Delete(e.Ctx, slow, store.DeleteOptions{GracePeriodSeconds: &grace})
	require.NoError(t, err)
	e.Create(Instance("p-b", "keep"))

	e.DeleteProject("a")
	e.Eventually(func() bool {
		p := e.Project("a")
		c := Condition(p, migrate.ConditionInstancesRemaining)
		return c != nil && c.Status == "True" && strings.Contains(c.Message, "2 virtual cluster instances remain") &&
			e.Get("p-a", "plain") == nil
	}, "plain deleted, dev and slow reported")
	p := e.Project("a")
	assert.True(t, p.IsTerminating())
	assert.Contains(t, Condition(p, migrate.ConditionInstancesRemaining).Message, "dev, slow")
	fc := Condition(p, migrate.ConditionInstanceFinalizersRemaining)
	require.NotNil(t, fc)
	assert.Equal(t, "True", fc.Status)
	assert.Contains(t, fc.Message, SeedFinalizer+" in 1 instances")
	assert.True(t, e.Get("p-a", "dev").IsTerminating(), "dev waits for its finalizer")
	assert.NotNil(t, e.Get("p-a", "slow"), "slow waits for its grace period")

	e.ReleaseFinalizer("p-a", "dev")
	e.Eventually(func() bool {
		c := Condition(e.Project("a"), migrate.ConditionInstancesRemaining)
		return c != nil && strings.Contains(c.Message, "1 virtual cluster instances remain") && strings.Contains(c.Message, "slow")
	}, "only slow left")
	assert.NotNil(t, e.Project("a"), "the project waits for slow's grace period")

	e.Clock.Step(31 * time.Second)
	e.Eventually(func() bool { return e.Project("a") == nil }, "project a gone")
	assert.Empty(t, e.Instances("p-a"))
	// Nothing else went.
	assert.NotNil(t, e.Project("b"))
	keep := e.Get("p-b", "keep")
	require.NotNil(t, keep)
	assert.False(t, keep.IsTerminating())
}

func testDeletionResumes(t *testing.T, e *RulesEnv) {
	e.Stop()
	for i := 0; i < 5; i++ {
		inst := Instance("p-a", fmt.Sprintf("vc-%d", i))
		inst.Finalizers = nil
		e.Create(inst)
	}
	e.DeleteProject("a")
	time.Sleep(50 * time.Millisecond)
	assert.Len(t, e.Instances("p-a"), 6, "no worker, nothing deleted")
	assert.True(t, e.Project("a").IsTerminating())

	// A new store over the same backend, with the rules installed and started: the
	// host after a restart.
	var opts store.Options
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	require.NoError(t, err)
	s2, err := store.New(e.Store.Backend(), opts)
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()
	stop, err := rules.Start(s2)
	require.NoError(t, err)
	defer stop()
	_, err = rules.Start(s2)
	assert.Error(t, err, "started twice")

	e.Eventually(func() bool { return len(e.Instances("p-a")) == 1 }, "the plain instances deleted")
	e.ReleaseFinalizer("p-a", "dev")
	e.Eventually(func() bool { return e.Project("a") == nil }, "project a gone")
	assert.NotNil(t, e.Project("b"))
}

// gateElector makes its store leader once open is closed.
type gateElector struct{ open chan struct{} }

func (g gateElector) Campaign(ctx context.Context) (<-chan struct{}, error) {
	select {
	case <-g.open:
		return make(chan struct{}), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func testWorkerFollowsLeadership(t *testing.T, e *RulesEnv) {
	e.Stop()
	gate := gateElector{open: make(chan struct{})}
	var opts store.Options
	opts.Elector = gate
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	require.NoError(t, err)
	s2, err := store.New(e.Store.Backend(), opts)
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()
	stop, err := rules.Start(s2)
	require.NoError(t, err)
	defer stop()

	plain := Instance("p-a", "plain")
	plain.Finalizers = nil
	e.Create(plain)
	e.DeleteProject("a")
	time.Sleep(600 * time.Millisecond) // over two leadership polls
	assert.NotNil(t, e.Get("p-a", "plain"), "a store that does not lead deletes nothing")
	close(gate.open)
	e.Eventually(func() bool { return e.Get("p-a", "plain") == nil }, "the leader's worker deleted plain")
	e.ReleaseFinalizer("p-a", "dev")
	e.Eventually(func() bool { return e.Project("a") == nil }, "project a gone")
}

// testDeletionRaces races, round after round, the deletion of a project against a
// create in its namespace and a move into it. Whatever the order, once the worker
// is done the project and everything in its namespace are gone, and the instance
// moved is either back where it was or gone with the project.
func testDeletionRaces(t *testing.T, e *RulesEnv) {
	refusedCreate, refusedMove := 0, 0
	for round := 0; round < 12; round++ {
		name := fmt.Sprintf("r%d", round)
		ns := "p-" + name
		e.Create(Project(name))
		src := Instance("p-a", "mv-"+name)
		src.Finalizers = nil
		e.Create(src)
		var wg sync.WaitGroup
		var cerr, merr error
		start := make(chan struct{})
		wg.Add(3)
		// Even rounds give the writers a head start, odd ones the deletion, so that
		// both orders are seen.
		lag := func(mine bool) {
			if mine {
				time.Sleep(time.Duration(200+round*50) * time.Microsecond)
			}
		}
		go func() { defer wg.Done(); <-start; lag(round%2 == 0); e.DeleteProjectAsync(name) }()
		go func() {
			defer wg.Done()
			<-start
			lag(round%2 == 1)
			inst := Instance(ns, "new")
			inst.Finalizers = nil
			cerr = e.Store.Create(e.Ctx, inst, store.CreateOptions{})
		}()
		go func() {
			defer wg.Done()
			<-start
			lag(round%2 == 1)
			_, merr = e.Service.Migrate(e.Ctx, name, Request("", "p-a", "mv-"+name), Admin(), migrate.RequestOptions{})
		}()
		close(start)
		wg.Wait()
		if cerr != nil {
			refusedCreate++
			assert.True(t, errors.Is(cerr, resource.ErrConflict) || errors.Is(cerr, resource.ErrNotFound), "create: %v", cerr)
		}
		if merr != nil {
			refusedMove++
			assert.True(t, errors.Is(merr, resource.ErrConflict) || errors.Is(merr, resource.ErrNotFound), "move: %v", merr)
			assert.NotNil(t, e.Get("p-a", "mv-"+name), "a refused move leaves the instance where it was")
		}
		e.Eventually(func() bool { return e.Project(name) == nil }, "project "+name+" gone")
		assert.Empty(t, e.Instances(ns), "round %d: left behind in %s", round, ns)
	}
	assert.NotNil(t, e.Get("p-a", "dev"), "nothing else deleted")
	t.Logf("RESULT project deletion races: rounds=12 create refused=%d move refused=%d, nothing left behind", refusedCreate, refusedMove)
}

// DeleteProjectAsync starts the deletion of project name, reporting an error to
// the test without stopping it (for use in goroutines).
func (e *RulesEnv) DeleteProjectAsync(name string) {
	_, err := e.Store.Delete(e.Ctx, Project(name), store.DeleteOptions{})
	assert.NoError(e.T, err)
}

func testMoveKeepsRules(t *testing.T, e *RulesEnv) {
	// The move passes the hooks in its transaction and rewrites the label.
	res := e.Migrate("b", Request("mv", "p-a", "dev"))
	assert.Equal(t, "p-b", res.Status.Namespace)
	assert.Equal(t, "b", e.Get("p-b", "dev").Labels[resource.LabelProject])
	// Into a cluster the target does not allow: 422, nothing changed.
	e.Create(Project("c"))
	p := e.Project("c")
	p.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "c9"}}
	require.NoError(t, e.Store.Update(e.Ctx, p, store.UpdateOptions{}))
	_, err := e.Service.Migrate(e.Ctx, "c", Request("mv2", "p-b", "dev"), Admin(), migrate.RequestOptions{})
	storetest.RequireCause(t, err, "spec.clusterRef.cluster", "")
	// Into a project being deleted: 409.
	holdAndDelete(e, "c")
	_, err = e.Service.Migrate(e.Ctx, "c", Request("mv3", "p-b", "dev"), Admin(), migrate.RequestOptions{})
	storetest.RequireReason(t, err, resource.ReasonConflict)
	assert.NotNil(t, e.Get("p-b", "dev"))
}

// ReleaseFinalizer removes [SeedFinalizer] from the instance ns/name in s (what the
// instance's own controller does); an instance that is gone is no error.
func ReleaseFinalizer(s *store.Store, ctx context.Context, ns, name string) error {
	err := s.GuaranteedUpdate(ctx, ns, name, &resource.VirtualClusterInstance{}, func(cur resource.Object) error {
		cur.GetObjectMeta().RemoveFinalizer(SeedFinalizer)
		return nil
	}, store.UpdateOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	return err
}
