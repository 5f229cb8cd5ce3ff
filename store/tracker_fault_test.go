package store_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// faultBackend wraps a backend to inject the failures the store's background work
// must survive: a watch whose reader is held back (a slow consumer), watch starts
// and ranges that fail, watches ended with an error, and a hook run after each range
// of the tracker's prefix.
type faultBackend struct {
	backend.Backend

	mu        sync.Mutex
	held      chan struct{}                   // while not nil, watch events are held back until it is closed
	heldOut   chan struct{}                   // while not nil, events of keys outside "/" (the store's records) are held back
	watchErr  error                           // returned by Watch while set
	rangeErr  error                           // returned by Range while set
	objectErr error                           // returned by Range of the prefix "/" while set
	afterScan func(opts backend.RangeOptions) // run after each Range of the prefix "/"
	watchers  []*faultWatcher

	ranges  atomic.Int64 // Range calls
	watches atomic.Int64 // Watch calls that started a watcher
}

func (b *faultBackend) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	b.ranges.Add(1)
	b.mu.Lock()
	err, hook := b.rangeErr, b.afterScan
	if err == nil && opts.Prefix == "/" {
		err = b.objectErr
	}
	b.mu.Unlock()
	if err != nil {
		return backend.RangeResult{}, err
	}
	res, err := b.Backend.Range(ctx, opts)
	if hook != nil && err == nil && opts.Prefix == "/" {
		hook(opts)
	}
	return res, err
}

func (b *faultBackend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	b.mu.Lock()
	err := b.watchErr
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	inner, err := b.Backend.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	b.watches.Add(1)
	w := &faultWatcher{b: b, inner: inner, out: make(chan backend.Event), stop: make(chan struct{})}
	b.mu.Lock()
	b.watchers = append(b.watchers, w)
	b.mu.Unlock()
	go w.forward()
	return w, nil
}

// hold holds back every watcher's events until release.
func (b *faultBackend) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held == nil {
		b.held = make(chan struct{})
	}
}

func (b *faultBackend) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		close(b.held)
		b.held = nil
	}
}

func (b *faultBackend) gate(ev backend.Event) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heldOut != nil && ev.Type != backend.EventProgress && !strings.HasPrefix(ev.KV.Key, "/") {
		return b.heldOut
	}
	return b.held
}

// holdRecords holds back the events of keys outside the object keyspace (the
// records the store writes beside objects, in the same transaction) until
// releaseRecords; every later event waits behind them, in order.
func (b *faultBackend) holdRecords() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heldOut == nil {
		b.heldOut = make(chan struct{})
	}
}

func (b *faultBackend) releaseRecords() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heldOut != nil {
		close(b.heldOut)
		b.heldOut = nil
	}
}

func (b *faultBackend) setWatchErr(err error) {
	b.mu.Lock()
	b.watchErr = err
	b.mu.Unlock()
}

func (b *faultBackend) setRangeErr(err error) {
	b.mu.Lock()
	b.rangeErr = err
	b.mu.Unlock()
}

func (b *faultBackend) setObjectErr(err error) {
	b.mu.Lock()
	b.objectErr = err
	b.mu.Unlock()
}

func (b *faultBackend) setAfterScan(fn func(opts backend.RangeOptions)) {
	b.mu.Lock()
	b.afterScan = fn
	b.mu.Unlock()
}

// endWatches ends every open watcher with err.
func (b *faultBackend) endWatches(err error) {
	b.mu.Lock()
	ws := b.watchers
	b.watchers = nil
	b.mu.Unlock()
	for _, w := range ws {
		w.end(err)
	}
}

type faultWatcher struct {
	b     *faultBackend
	inner backend.Watcher
	out   chan backend.Event
	stop  chan struct{}
	once  sync.Once

	mu  sync.Mutex
	err error // set by end, returned instead of the inner watcher's
}

func (w *faultWatcher) forward() {
	defer close(w.out)
	for ev := range w.inner.Events() {
		if g := w.b.gate(ev); g != nil {
			select {
			case <-g:
			case <-w.stop:
				return
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

func (w *faultWatcher) end(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.Stop()
}

func (w *faultWatcher) Events() <-chan backend.Event { return w.out }

func (w *faultWatcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.inner.Err()
}

func (w *faultWatcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

var errInjected = fmt.Errorf("injected failure: %w", backend.ErrInvalidArgument)

// faultEnv is a store over a faultBackend over memdb keeping little history.
type faultEnv struct {
	t   *testing.T
	ctx context.Context
	mem *memdb.Backend
	fb  *faultBackend
	s   *store.Store
}

func newFaultEnv(t *testing.T, opts store.Options) *faultEnv {
	t.Helper()
	return newFaultEnvHistory(t, opts, 50)
}

func newFaultEnvHistory(t *testing.T, opts store.Options, history int) *faultEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	mem := memdb.New(memdb.Options{HistoryRevisions: history})
	t.Cleanup(func() { _ = mem.Close() })
	fb := &faultBackend{Backend: mem}
	s, err := store.New(fb, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return &faultEnv{t: t, ctx: ctx, mem: mem, fb: fb, s: s}
}

// label sets label team=value on project name, creating it if need be.
func (e *faultEnv) label(name, value string) {
	e.t.Helper()
	p := &resource.Project{}
	err := e.s.Get(e.ctx, "", name, p, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		p = &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name, Labels: map[string]string{"team": value}}}
		require.NoError(e.t, e.s.Create(e.ctx, p, store.CreateOptions{}))
		return
	}
	require.NoError(e.t, err)
	p.Labels = map[string]string{"team": value}
	require.NoError(e.t, e.s.Update(e.ctx, p, store.UpdateOptions{}))
}

// team lists, through the label index, the projects of a team.
func (e *faultEnv) team(value string) ([]string, error) {
	l := &resource.ProjectList{}
	if err := e.s.List(e.ctx, l, store.ListOptions{LabelSelector: "team=" + value}); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out, nil
}

// fallBehind holds the watch back while writing far more than the backend keeps, so
// that the tracker's watch ends with ErrCompacted once released.
func (e *faultEnv) fallBehind(value string, n int) {
	e.t.Helper()
	e.fb.hold()
	const writes = 700
	for i := range writes {
		v := value
		if i < writes-n {
			v = fmt.Sprintf("%s-%d", value, i/n%2) // every write changes the object
		}
		e.label(fmt.Sprintf("p%03d", i%n), v)
	}
}

// unhealthy waits until Healthy reports an error wrapping ErrBackground and cause
// (when not nil), and returns it.
func (e *faultEnv) unhealthy(cause error) error {
	e.t.Helper()
	var err error
	require.Eventually(e.t, func() bool {
		err = e.s.Healthy(e.ctx)
		return errors.Is(err, store.ErrBackground) && (cause == nil || errors.Is(err, cause))
	}, 10*time.Second, time.Millisecond, "last: %v", &err)
	assert.Equal(e.t, resource.ReasonServiceUnavailable, resource.ReasonOf(err))
	return err
}

// healthy waits until the store settles and Healthy reports nil.
func (e *faultEnv) healthy() {
	e.t.Helper()
	require.NoError(e.t, e.s.Settle(e.ctx))
	require.Eventually(e.t, func() bool { return e.s.Healthy(e.ctx) == nil }, 10*time.Second, time.Millisecond)
}

// TestTracker_failures_show_in_health injects each failure the background work can
// meet, checks that Healthy reports it (and the label index refuses rather than
// hangs while it cannot follow the backend), and that the store recovers by itself
// once the failure is gone, with nothing lost.
func TestTracker_failures_show_in_health(t *testing.T) {
	t.Run("watch cannot start again", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.label("p000", "red")
		e.healthy()
		e.fb.setWatchErr(errInjected)
		e.fb.endWatches(errInjected)
		e.unhealthy(errInjected)
		e.label("p001", "red") // writes go on
		_, err := e.team("red")
		assert.ErrorIs(t, err, store.ErrBackground, "the label index refuses while it cannot follow")
		e.fb.setWatchErr(nil)
		e.healthy()
		got, err := e.team("red")
		require.NoError(t, err)
		assert.Equal(t, []string{"p000", "p001"}, got)
	})
	t.Run("watch ends with an error and resumes without a rebuild", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.label("p000", "red")
		e.healthy()
		scans := e.fb.ranges.Load()
		e.fb.setWatchErr(errInjected)
		e.fb.endWatches(errInjected)
		e.unhealthy(errInjected)
		e.label("p001", "red")
		e.fb.setWatchErr(nil)
		e.healthy()
		assert.Equal(t, scans, e.fb.ranges.Load(), "resumed where it stopped: no scan")
		got, err := e.team("red")
		require.NoError(t, err)
		assert.Equal(t, []string{"p000", "p001"}, got)
	})
	t.Run("watch ends without a reason", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.label("p000", "red")
		e.healthy()
		e.fb.endWatches(nil)
		e.label("p001", "red")
		e.healthy()
		got, err := e.team("red")
		require.NoError(t, err)
		assert.Equal(t, []string{"p000", "p001"}, got)
	})
	t.Run("slow consumer falls behind the history", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		scans := e.fb.ranges.Load()
		e.fallBehind("blue", 30)
		e.fb.release()
		e.healthy()
		assert.Greater(t, e.fb.ranges.Load(), scans, "rebuilt its index")
		got, err := e.team("blue")
		require.NoError(t, err)
		assert.Len(t, got, 30)
	})
	t.Run("compaction past the watch", func(t *testing.T) {
		// History enough for every write: only the compaction loses what the
		// watch needs next (more than its channel and batch hold).
		e := newFaultEnvHistory(t, store.Options{}, 100000)
		e.label("p000", "red")
		e.healthy()
		scans := e.fb.ranges.Load()
		e.fallBehind("blue", 30)
		rev, err := e.mem.Revision(e.ctx)
		require.NoError(t, err)
		require.NoError(t, e.mem.Compact(e.ctx, rev))
		e.fb.release()
		e.healthy()
		assert.Greater(t, e.fb.ranges.Load(), scans, "rebuilt its index")
		got, err := e.team("blue")
		require.NoError(t, err)
		assert.Len(t, got, 30)
	})
	t.Run("scan fails during a rebuild", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.fb.setRangeErr(errInjected)
		e.fallBehind("blue", 30)
		e.fb.release()
		e.unhealthy(errInjected)
		e.fb.setRangeErr(nil)
		e.healthy()
		got, err := e.team("blue")
		require.NoError(t, err)
		assert.Len(t, got, 30)
	})
	t.Run("label build fails", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.healthy()
		e.fb.setObjectErr(errInjected)
		e.fallBehind("blue", 30)
		e.fb.release()
		e.unhealthy(errInjected)
		got, err := e.team("blue")
		require.NoError(t, err, "lists scan meanwhile")
		assert.Len(t, got, 30)
		e.fb.setObjectErr(nil)
		e.healthy()
		got, err = e.team("blue")
		require.NoError(t, err)
		assert.Len(t, got, 30)
	})
	t.Run("watch falls behind again during the rebuild", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.fallBehind("blue", 30)
		var mu sync.Mutex
		pages := 0
		e.fb.setAfterScan(func(backend.RangeOptions) {
			mu.Lock()
			defer mu.Unlock()
			if pages++; pages == 1 {
				// Hold the rebuild's own watch and write past the history.
				e.fallBehind("green", 30)
				go func() {
					time.Sleep(50 * time.Millisecond)
					e.fb.release()
				}()
			}
		})
		e.fb.release()
		e.healthy()
		mu.Lock()
		assert.GreaterOrEqual(t, pages, 2, "a second rebuild")
		mu.Unlock()
		got, err := e.team("green")
		require.NoError(t, err)
		assert.Len(t, got, 30)
	})
	t.Run("backend closed", func(t *testing.T) {
		e := newFaultEnv(t, store.Options{})
		e.label("p000", "red")
		e.healthy()
		require.NoError(t, e.mem.Close())
		err := e.s.Healthy(e.ctx)
		assert.ErrorIs(t, err, backend.ErrClosed)
		assert.Equal(t, resource.ReasonServiceUnavailable, resource.ReasonOf(err))
		e.unhealthy(backend.ErrClosed)
	})
	t.Run("open fails on a failing scan", func(t *testing.T) {
		mem := memdb.New(memdb.Options{})
		defer mem.Close()
		_, err := store.New(&faultBackend{Backend: mem, rangeErr: errInjected}, store.Options{})
		assert.ErrorIs(t, err, errInjected)
		_, err = store.New(&faultBackend{Backend: mem, watchErr: errInjected}, store.Options{})
		assert.ErrorIs(t, err, errInjected)
	})
	// The collector's failures: a hook refuses or panics on its delete of a
	// dependent whose owner is gone.
	for _, tc := range []struct {
		name string
		fail func()
	}{
		{name: "collector fails", fail: func() { panic("unreachable") }},
		{name: "collector panics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refuse atomic.Bool
			hook := store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
				if refuse.Load() && req.Operation == store.OperationDelete && req.OldObject.GetObjectMeta().Name == "dep" {
					if tc.fail == nil {
						panic("injected panic")
					}
					return errInjected
				}
				return nil
			})
			e := newFaultEnv(t, store.Options{Validating: []store.ValidatingAdmitter{hook}})
			owner := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "owner"}}
			require.NoError(t, e.s.Create(e.ctx, owner, store.CreateOptions{}))
			dep := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "dep", OwnerReferences: []resource.OwnerReference{{
				APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID}}}}
			require.NoError(t, e.s.Create(e.ctx, dep, store.CreateOptions{}))
			e.healthy()
			refuse.Store(true)
			_, err := e.s.Delete(e.ctx, owner, store.DeleteOptions{})
			require.NoError(t, err)
			if tc.fail != nil {
				e.unhealthy(errInjected)
			} else {
				assert.ErrorContains(t, e.unhealthy(nil), "injected panic")
			}
			refuse.Store(false)
			e.healthy()
			err = e.s.Get(e.ctx, "", "dep", &resource.Project{}, store.GetOptions{})
			assert.ErrorIs(t, err, resource.ErrNotFound, "collected once the failure is gone")
		})
	}
}

// TestTracker_collects_after_missed_events deletes an owner while the tracker's
// watch is held back past the kept history: the rebuild, which never sees that
// delete, must still get the dependent collected.
func TestTracker_collects_after_missed_events(t *testing.T) {
	e := newFaultEnv(t, store.Options{})
	owner := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "owner"}}
	require.NoError(t, e.s.Create(e.ctx, owner, store.CreateOptions{}))
	dep := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "dep", OwnerReferences: []resource.OwnerReference{{
		APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID}}}}
	require.NoError(t, e.s.Create(e.ctx, dep, store.CreateOptions{}))
	e.healthy()
	// The held watch keeps its first event and a channel's worth: the delete comes
	// after them, and far more after it.
	e.fallBehind("red", 30)
	_, err := e.s.Delete(e.ctx, owner, store.DeleteOptions{})
	require.NoError(t, err)
	e.fallBehind("blue", 30)
	e.fb.release()
	e.healthy()
	err = e.s.Get(e.ctx, "", "dep", &resource.Project{}, store.GetOptions{})
	assert.ErrorIs(t, err, resource.ErrNotFound)
}

// TestTracker_repairs_missing_records opens a store on a backend whose objects were
// written without background records (by a store from before records existed): the
// label build writes the missing ones, after which the collector acts on them.
func TestTracker_repairs_missing_records(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem := memdb.New(memdb.Options{})
	defer mem.Close()
	// An object whose owner is gone, and one terminating whose grace period is over,
	// written as an old store would: the object alone.
	objs := map[string]string{
		"/management.service/projects/dep":   `{"kind":"Project","apiVersion":"management.service/v1","metadata":{"name":"dep","uid":"u-dep","creationTimestamp":"2020-01-01T00:00:00Z","ownerReferences":[{"apiVersion":"management.service/v1","kind":"Project","name":"gone","uid":"u-gone"}]}}`,
		"/management.service/projects/old":   `{"kind":"Project","apiVersion":"management.service/v1","metadata":{"name":"old","uid":"u-old","creationTimestamp":"2020-01-01T00:00:00Z","deletionTimestamp":"2020-01-01T00:00:01Z","deletionGracePeriodSeconds":0}}`,
		"/management.service/projects/plain": `{"kind":"Project","apiVersion":"management.service/v1","metadata":{"name":"plain","uid":"u-plain","creationTimestamp":"2020-01-01T00:00:00Z"}}`,
	}
	for key, value := range objs {
		_, err := mem.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: key, Value: []byte(value)}}})
		require.NoError(t, err)
	}
	s, err := store.New(mem, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Settle(ctx))
	for name, gone := range map[string]bool{"dep": true, "old": true, "plain": false} {
		err := s.Get(ctx, "", name, &resource.Project{}, store.GetOptions{})
		if gone {
			assert.ErrorIs(t, err, resource.ErrNotFound, name)
		} else {
			assert.NoError(t, err, name)
		}
	}
	res, err := mem.Range(ctx, backend.RangeOptions{Prefix: "\x00bg/"})
	require.NoError(t, err)
	assert.Empty(t, res.KVs, "the records went with their objects")
}

// TestTracker_open_reads_records_not_objects opens a store on a backend holding
// objects, some of them with owners: New reads the records only, and the label index,
// built after, serves selectors once ready, while lists scan before.
func TestTracker_open_reads_records_not_objects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem := memdb.New(memdb.Options{})
	defer mem.Close()
	first, err := store.New(mem, store.Options{})
	require.NoError(t, err)
	owner := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "owner", Labels: map[string]string{"team": "red"}}}
	require.NoError(t, first.Create(ctx, owner, store.CreateOptions{}))
	for i := range 50 {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%02d", i), Labels: map[string]string{"team": "red"}}}
		if i%10 == 0 {
			p.OwnerReferences = []resource.OwnerReference{{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID}}
		}
		require.NoError(t, first.Create(ctx, p, store.CreateOptions{}))
	}
	require.NoError(t, first.Settle(ctx))
	require.NoError(t, first.Close())

	// Every read of objects blocks until the gate opens: a New that read objects
	// would not return.
	var objectRanges atomic.Int64
	gate := make(chan struct{})
	fb := &faultBackend{Backend: mem}
	fb.setAfterScan(func(backend.RangeOptions) {
		objectRanges.Add(1)
		<-gate
	})
	opened := make(chan *store.Store, 1)
	go func() {
		s, err := store.New(fb, store.Options{})
		assert.NoError(t, err)
		opened <- s
	}()
	var s *store.Store
	select {
	case s = <-opened:
	case <-time.After(10 * time.Second):
		close(gate)
		require.Fail(t, "New waits for a read of the objects")
	}
	close(gate)
	require.NotNil(t, s)
	defer s.Close()
	require.NoError(t, s.Settle(ctx))
	assert.Positive(t, objectRanges.Load(), "the label index was built after")
	l := &resource.ProjectList{}
	require.NoError(t, s.List(ctx, l, store.ListOptions{LabelSelector: "team=red"}))
	assert.Len(t, l.Items, 51)
	// The collector knows the dependents from their records: they go with their owner.
	_, err = s.Delete(ctx, owner, store.DeleteOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Settle(ctx))
	require.NoError(t, s.List(ctx, l, store.ListOptions{LabelSelector: "team=red"}))
	assert.Len(t, l.Items, 45)
}

// TestTracker_a_revision_counts_once_all_its_events_are_applied: a delete with a grace
// period writes the object and its record in one transaction. With the record's event
// held back after the object's, the tracker has not seen that revision whole: Settle
// must wait for it rather than return with the deadline unknown, and once the event
// arrives the reaper removes the object when the period is over.
func TestTracker_a_revision_counts_once_all_its_events_are_applied(t *testing.T) {
	clock := storetest.NewFakeClock(storetest.FixtureStart)
	e := newFaultEnv(t, store.Options{Clock: clock})
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	require.NoError(t, e.s.Create(e.ctx, p, store.CreateOptions{}))
	require.NoError(t, e.s.Settle(e.ctx))

	e.fb.holdRecords()
	grace := int64(30)
	_, err := e.s.Delete(e.ctx, p, store.DeleteOptions{GracePeriodSeconds: &grace})
	require.NoError(t, err)
	clock.Step(30 * time.Second)
	ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	require.Error(t, e.s.Settle(ctx), "Settle returned while the revision's record event was held back")

	e.fb.releaseRecords()
	require.NoError(t, e.s.Settle(e.ctx))
	err = e.s.Get(e.ctx, "", "a", &resource.Project{}, store.GetOptions{})
	assert.ErrorIs(t, err, resource.ErrNotFound, "the grace period is over: the reaper removed the project")
}
