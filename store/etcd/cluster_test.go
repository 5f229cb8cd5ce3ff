package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
	"github.com/management-service/mgmt/store/storetest"
)

// The tests of this file run several stores, each on its own etcd client, against a
// three-member etcd cluster: what one process per member would see.

// instance is one store of a multi-instance test, with the backend under it.
type instance struct {
	name   string
	b      *etcd.Backend
	count  *countingBackend
	s      *store.Store
	clock  *storetest.FakeClock
	closed atomic.Bool
	led    atomic.Bool // the instance won an election at some point
}

// close closes the instance's store; it may be called more than once.
func (in *instance) close() {
	if in.closed.CompareAndSwap(false, true) {
		_ = in.s.Close()
	}
}

// newInstances starts one store per endpoint list, on backends sharing prefix, each
// with an etcd Elector when election is not empty.
func newInstances(t *testing.T, endpoints [][]string, prefix, election string, o store.Options) []*instance {
	t.Helper()
	var out []*instance
	for i, eps := range endpoints {
		b := newBackend(t, etcd.Options{Endpoints: eps, Prefix: prefix})
		in := &instance{name: fmt.Sprintf("store%d", i), b: b, count: &countingBackend{Backend: b}, clock: storetest.NewFakeClock(storetest.FixtureStart)}
		opts := o
		opts.Clock = in.clock
		if election != "" {
			e, err := etcd.NewElector(b.Client(), etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: in.name})
			require.NoError(t, err)
			opts.Elector = recordingElector{e: e, in: in}
		}
		s, err := store.New(in.count, opts)
		require.NoError(t, err)
		in.s = s
		t.Cleanup(in.close)
		out = append(out, in)
	}
	return out
}

func endpointsOf(members []*member) [][]string {
	var out [][]string
	for _, m := range members {
		out = append(out, m.endpoints)
	}
	return out
}

// countingBackend counts, per key, the transactions with a delete of it that its
// store attempted and that succeeded. An attempt is counted before the transaction
// goes to etcd, its success only once etcd's answer is back: in between the key is
// in flight. A removal is visible in etcd (to the List of another goroutine) before
// the goroutine that asked for it is back here, so who removed a key can only be read
// once no transaction deleting it is in flight (see inFlightOf and requireDone).
type countingBackend struct {
	backend.Backend
	mu        sync.Mutex
	attempted map[string]int
	deleted   map[string]int
	inFlight  map[string]int
}

func (c *countingBackend) Txn(ctx context.Context, t backend.Txn) (backend.TxnResult, error) {
	c.mu.Lock()
	if c.attempted == nil {
		c.attempted, c.deleted, c.inFlight = map[string]int{}, map[string]int{}, map[string]int{}
	}
	for _, op := range t.Ops {
		if op.Delete {
			c.attempted[op.Key]++
			c.inFlight[op.Key]++
		}
	}
	c.mu.Unlock()
	res, err := c.Backend.Txn(ctx, t)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, op := range t.Ops {
		if op.Delete {
			c.inFlight[op.Key]--
			if err == nil && res.Succeeded {
				c.deleted[op.Key]++
			}
		}
	}
	return res, err
}

// isObjectKey reports whether k is an object's key, not the store's record of one
// (kept under "\x00bg" + the object's key, so with the same suffix, and deleted in the
// same transaction as the object).
func isObjectKey(k string) bool { return !strings.Contains(k, "\x00") }

// counts returns the counts of the object keys that end with suffix.
func (c *countingBackend) counts(suffix string) (attempted, deleted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, n := range c.attempted {
		if isObjectKey(k) && strings.HasSuffix(k, suffix) {
			attempted += n
			deleted += c.deleted[k]
		}
	}
	return attempted, deleted
}

// inFlightOf returns the object keys ending with one of suffixes that a transaction of
// this store is deleting right now: sent to etcd, answer not back yet.
func (c *countingBackend) inFlightOf(suffixes []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.inFlight {
		if n == 0 || !isObjectKey(k) {
			continue
		}
		for _, s := range suffixes {
			if strings.HasSuffix(k, s) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// TestCluster_WritersOnEveryMember runs optimistic increments of one counter from
// goroutines spread over three stores on three members, with other writes between
// them, and a watch on each store. Every acknowledged increment counts, and the three
// watches see the same events in the same order.
func TestCluster_WritersOnEveryMember(t *testing.T) {
	members := newCluster(t, 3)
	ins := newInstances(t, endpointsOf(members), testPrefix(), "", store.Options{MaxUpdateRetries: 100000})
	ctx := t.Context()
	workers, increments := 12, 40
	if raceEnabled {
		increments = 8
	}

	counter := storetest.Project("counter")
	require.NoError(t, ins[0].s.Create(ctx, counter, store.CreateOptions{}))
	watches := make([]*store.Watcher, len(ins))
	for i, in := range ins {
		w, err := in.s.Watch(ctx, storetest.Project(""), store.WatchOptions{ResourceVersion: counter.ResourceVersion})
		require.NoError(t, err)
		defer w.Stop()
		watches[i] = w
	}

	var acked, conflicts atomic.Int64
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ins[g%len(ins)].s
			for i := range increments {
				err := s.GuaranteedUpdate(ctx, "", "counter", storetest.Project(""), func(obj resource.Object) error {
					p := obj.(*resource.Project)
					n, _ := strconv.Atoi(p.Spec.Description)
					p.Spec.Description = strconv.Itoa(n + 1)
					return nil
				}, store.UpdateOptions{})
				if errors.Is(err, resource.ErrConflict) {
					conflicts.Add(1)
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				acked.Add(1)
				if i%4 == 0 { // other writes between the increments
					assert.NoError(t, s.Create(ctx, storetest.Project(fmt.Sprintf("w%02d-%03d", g, i)), store.CreateOptions{}))
				}
			}
		}()
	}
	wg.Wait()
	require.False(t, t.Failed())

	final := storetest.Project("")
	require.NoError(t, ins[2].s.Get(ctx, "", "counter", final, store.GetOptions{}))
	assert.Equal(t, strconv.FormatInt(acked.Load(), 10), final.Spec.Description, "every acknowledged increment counts, no other")
	assert.Equal(t, 1+acked.Load(), final.Generation)
	finalRV, err := strconv.ParseInt(final.ResourceVersion, 10, 64)
	require.NoError(t, err)

	// Each watch, read up to the last increment.
	seen := make([][]string, len(ins))
	for i, w := range watches {
		for {
			ev := nextStoreEvent(t, w)
			require.NotEqual(t, store.Error, ev.Type, "%s: %v", ins[i].name, ev.Err)
			m := ev.Object.GetObjectMeta()
			desc := ev.Object.(*resource.Project).Spec.Description
			seen[i] = append(seen[i], fmt.Sprintf("%s %s %s %s", m.ResourceVersion, ev.Type, m.Name, desc))
			rv, err := strconv.ParseInt(m.ResourceVersion, 10, 64)
			require.NoError(t, err)
			if rv >= finalRV {
				break
			}
		}
	}
	assert.Equal(t, seen[0], seen[1], "store0 and store1 saw different events")
	assert.Equal(t, seen[0], seen[2], "store0 and store2 saw different events")
	var counts []string
	for _, line := range seen[0] {
		var rv, typ, name, desc string
		_, _ = fmt.Sscan(line, &rv, &typ, &name, &desc)
		if name == "counter" {
			counts = append(counts, desc)
		}
	}
	require.Len(t, counts, int(acked.Load()))
	for i, c := range counts {
		require.Equal(t, strconv.Itoa(i+1), c, "increment %d seen out of order", i+1)
	}
	t.Logf("RESULT name=CLUSTER-OCC-COUNTER stores=3 workers=%d acked=%d final=%s conflicts_surfaced=%d events=%d",
		workers, acked.Load(), final.Spec.Description, conflicts.Load(), len(seen[0]))
}

func nextStoreEvent(t *testing.T, w *store.Watcher) store.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch ended")
		return ev
	case <-time.After(60 * time.Second):
		require.FailNow(t, "no watch event")
		return store.Event{}
	}
}

// leaderSampler records, until stopped, how many of the open stores lead at once.
type leaderSampler struct {
	stop chan struct{}
	done chan struct{}
	max  atomic.Int64
	mu   sync.Mutex
	who  []string // the stores leading when max was reached
	last []string // the stores leading at the last sample
	log  []string // the changes of the stores leading
}

func sampleLeaders(ins []*instance) *leaderSampler {
	ls := &leaderSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(ls.done)
		for {
			var who []string
			for _, in := range ins {
				if !in.closed.Load() && in.s.Leading() {
					who = append(who, in.name)
				}
			}
			if fmt.Sprint(who) != fmt.Sprint(ls.last) {
				ls.mu.Lock()
				ls.log = append(ls.log, fmt.Sprintf("%s %v", time.Now().Format(time.StampMicro), who))
				ls.last = who
				ls.mu.Unlock()
			}
			if n := int64(len(who)); n > ls.max.Load() {
				ls.max.Store(n)
				ls.mu.Lock()
				ls.who = append(who, time.Now().Format(time.StampMicro))
				ls.mu.Unlock()
			}
			select {
			case <-ls.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return ls
}

// finish stops the sampler and returns the most stores seen leading at once, and
// which.
func (ls *leaderSampler) finish() (int64, []string) {
	close(ls.stop)
	<-ls.done
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.max.Load(), ls.who
}

// leader waits until exactly one of the open stores leads, and returns it.
func leader(t *testing.T, ins []*instance) *instance {
	t.Helper()
	var l *instance
	require.Eventually(t, func() bool {
		l = nil
		n := 0
		for _, in := range ins {
			if !in.closed.Load() && in.s.Leading() {
				l, n = in, n+1
			}
		}
		return n == 1
	}, 60*time.Second, 5*time.Millisecond, "no single leader")
	return l
}

// work is what one round of the elector test leaves to the leader: dependents of an
// owner that is deleted, and objects deleted with a grace period.
type work struct {
	owner      *resource.Project
	dependents []string
	graceful   []string
}

const workNamespace = "p-gc"

// prepare creates a round's objects, through every given store in turn, and deletes
// the graceful ones with a grace period of 30 s.
func prepare(t *testing.T, round int, ins []*instance) work {
	t.Helper()
	ctx := t.Context()
	w := work{owner: storetest.Project(fmt.Sprintf("owner-%d", round))}
	require.NoError(t, ins[0].s.Create(ctx, w.owner, store.CreateOptions{}))
	ref := []resource.OwnerReference{{APIVersion: w.owner.APIVersion, Kind: "Project", Name: w.owner.Name, UID: w.owner.UID}}
	grace := int64(30)
	for i := range 6 {
		s := ins[i%len(ins)].s
		d := storetest.Instance(workNamespace, fmt.Sprintf("dep-%d-%d", round, i))
		d.OwnerReferences = ref
		require.NoError(t, s.Create(ctx, d, store.CreateOptions{}))
		w.dependents = append(w.dependents, d.Name)
		g := storetest.Instance(workNamespace, fmt.Sprintf("slow-%d-%d", round, i))
		require.NoError(t, s.Create(ctx, g, store.CreateOptions{}))
		_, err := s.Delete(ctx, g, store.DeleteOptions{GracePeriodSeconds: &grace})
		require.NoError(t, err)
		w.graceful = append(w.graceful, g.Name)
	}
	return w
}

// finish deletes the round's owner through s and runs every open store's clock past
// the grace period.
func (w work) finish(t *testing.T, s *store.Store, ins []*instance) {
	t.Helper()
	_, err := s.Delete(t.Context(), w.owner, store.DeleteOptions{})
	require.NoError(t, err)
	for _, in := range ins {
		if !in.closed.Load() {
			in.clock.Step(time.Minute)
		}
	}
}

// requireDone waits until the round's objects are gone, as seen through via, and
// checks that each was removed by one transaction, of a store that had won the
// election, and that no other store even tried: the reaper and the collector act
// once per object, not once per store. It returns how many each store removed.
func (w work) requireDone(t *testing.T, via *instance, ins []*instance) map[string]int {
	t.Helper()
	names := append(append([]string{}, w.dependents...), w.graceful...)
	require.Eventually(t, func() bool {
		list := &resource.VirtualClusterInstanceList{}
		require.NoError(t, via.s.List(t.Context(), list, store.ListOptions{Namespace: workNamespace}))
		for _, item := range list.Items {
			if slices.Contains(names, item.Name) {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "the leader did not reap and collect %s's round", w.owner.Name)
	keys := make([]string, len(names))
	for i, name := range names {
		keys[i] = "/virtualclusterinstances/" + workNamespace + "/" + name
	}
	// The objects are gone in etcd; the transactions that removed them may not have
	// come back to their stores yet, and only then are they counted as done.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var busy []string
		for _, in := range ins {
			for _, k := range in.count.inFlightOf(keys) {
				busy = append(busy, in.name+" "+k)
			}
		}
		if len(busy) == 0 {
			break
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "deletes still in flight", "%s's round: %v", w.owner.Name, busy)
		}
	}
	removed := map[string]int{}
	for _, key := range keys {
		total := 0
		var tried []string
		for _, in := range ins {
			attempted, deleted := in.count.counts(key)
			total += deleted
			if deleted > 0 {
				removed[in.name] += deleted
			}
			if attempted > 0 {
				tried = append(tried, in.name)
				assert.True(t, in.led.Load(), "%s never led, yet tried to remove %s", in.name, key)
			}
		}
		assert.Equal(t, 1, total, "%s removed %d times", key, total)
		assert.Len(t, tried, 1, "stores that tried to remove %s: %v", key, tried)
	}
	return removed
}

// recordingElector marks its instance once it has won an election.
type recordingElector struct {
	e  *etcd.Elector
	in *instance
}

func (r recordingElector) Campaign(ctx context.Context) (<-chan struct{}, error) {
	lost, err := r.e.Campaign(ctx)
	if err == nil {
		r.in.led.Store(true)
	}
	return lost, err
}

// TestCluster_ElectorLeadsOnceAndFailsOver runs three stores with etcd electors on a
// three-member cluster. One leads at a time; it alone reaps and collects; when its
// store closes, and then when the member under the next leader stops, another store
// takes over and finishes the work left.
func TestCluster_ElectorLeadsOnceAndFailsOver(t *testing.T) {
	members := newCluster(t, 3)
	prefix := testPrefix()
	ins := newInstances(t, endpointsOf(members), prefix+"data/", prefix+"election", store.Options{})
	sampler := sampleLeaders(ins)
	defer func() {
		most, who := sampler.finish()
		assert.LessOrEqual(t, most, int64(1), "stores led at once: %v", who)
		t.Logf("leadership changes: %v", sampler.log)
	}()

	// Round 1: the leader does the work, the others do none of it.
	l1 := leader(t, ins)
	var others []*instance
	for _, in := range ins {
		if in != l1 {
			others = append(others, in)
		}
	}
	w1 := prepare(t, 1, ins)
	w1.finish(t, others[0].s, ins)
	t.Logf("round 1: %s led; removed by %v", l1.name, w1.requireDone(t, others[1], ins))

	// Round 2: the leader's store closes with work pending; another store takes over.
	w2 := prepare(t, 2, ins)
	l1.close()
	w2.finish(t, others[0].s, ins)
	l2 := leader(t, ins)
	require.NotSame(t, l1, l2)
	removed := w2.requireDone(t, others[0], ins)
	assert.Zero(t, removed[l1.name], "the closed store removed objects")
	t.Logf("round 2: %s took over; removed by %v", l2.name, removed)

	// Round 3: the member under the leader crashes; the last store takes over.
	var last *instance
	for _, in := range others {
		if in != l2 {
			last = in
		}
	}
	w3 := prepare(t, 3, []*instance{last})
	for i, in := range ins {
		if in == l2 {
			members[i].crash()
		}
	}
	w3.finish(t, last.s, []*instance{last})
	require.Eventually(t, func() bool { return last.s.Leading() }, 60*time.Second, 5*time.Millisecond,
		"the last store did not take over")
	removed = w3.requireDone(t, last, ins)
	assert.Equal(t, map[string]int{last.name: 12}, removed, "only the last store can reach etcd")
	t.Logf("round 3: %s took over; removed by %v", last.name, removed)
	l2.close() // its member is gone: closing does not wait for etcd
}

// TestCluster_StoppedMemberLosesNoAckedWrite stops the raft leader of a three-member
// cluster while stores on every member write, and checks that every acknowledged
// write is there afterwards, seen through every member still running.
func TestCluster_StoppedMemberLosesNoAckedWrite(t *testing.T) {
	members := newCluster(t, 3)
	prefix := testPrefix()
	all := []string{members[0].endpoints[0], members[1].endpoints[0], members[2].endpoints[0]}
	// One store per member, and one whose client knows every member.
	ins := newInstances(t, append(endpointsOf(members), all), prefix, "", store.Options{})
	ctx := t.Context()
	before := 15
	if raceEnabled {
		before = 5
	}

	type ackedWrite struct{ name, rv string }
	var mu sync.Mutex
	var acked []ackedWrite
	var failed atomic.Int64
	var stopped atomic.Bool
	ackedAfter := make([]atomic.Int64, len(ins))
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 * len(ins) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := g % len(ins)
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				v := storetest.Instance(workNamespace, fmt.Sprintf("w%d-%04d", g, i))
				wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				err := ins[in].s.Create(wctx, v, store.CreateOptions{})
				cancel()
				if err != nil {
					failed.Add(1) // not acknowledged: it may or may not be there
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked = append(acked, ackedWrite{v.Name, v.ResourceVersion})
				mu.Unlock()
				if stopped.Load() {
					ackedAfter[in].Add(1)
				}
			}
		}()
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	require.Eventually(t, func() bool { return ackedCount() >= before*2*len(ins) }, 60*time.Second, 5*time.Millisecond)

	var down int
	for i, m := range members {
		if m.e.Server.Leader() == m.e.Server.MemberID() {
			down = i
		}
	}
	members[down].crash()
	stopped.Store(true)
	atStop := ackedCount()
	require.Eventually(t, func() bool {
		for i := range members {
			if i != down && ackedAfter[i].Load() < int64(before) {
				return false
			}
		}
		return ackedAfter[len(ins)-1].Load() > 0
	}, 60*time.Second, 5*time.Millisecond, "writes through the members still running, and through the client of every member, go on")
	close(quit)
	wg.Wait()

	// Every acknowledged write is there, the same through each running member.
	for i, in := range ins[:len(members)] {
		if i == down {
			continue
		}
		list := &resource.VirtualClusterInstanceList{}
		require.NoError(t, in.s.List(ctx, list, store.ListOptions{Namespace: workNamespace}))
		have := map[string]string{}
		for _, item := range list.Items {
			have[item.Name] = item.ResourceVersion
		}
		lost := 0
		for _, a := range acked {
			if rv, ok := have[a.name]; !ok || rv != a.rv {
				lost++
			}
		}
		assert.Zero(t, lost, "%s: acknowledged writes lost", in.name)
		t.Logf("RESULT name=CLUSTER-MEMBER-STOP via=%s stopped=m%d acked=%d acked_before_stop=%d unacked=%d listed=%d lost=%d",
			in.name, down, len(acked), atStop, failed.Load(), len(list.Items), lost)
	}
	seen := map[string]bool{}
	for _, a := range acked {
		assert.False(t, seen[a.rv], "two acknowledged creates share revision %s", a.rv)
		seen[a.rv] = true
	}
}
