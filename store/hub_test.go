package store

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/memdb"
)

// seen is what a test compares of an event.
type seen struct {
	Type EventType
	Name string
	RV   string
	Spec string
}

func (e seen) String() string { return fmt.Sprintf("%s %s@%s %q", e.Type, e.Name, e.RV, e.Spec) }

func describe(ev Event) seen {
	if ev.Type == Error {
		return seen{Type: Error, Name: ev.Err.Error()}
	}
	m := ev.Object.GetObjectMeta()
	spec := ""
	if p, ok := ev.Object.(*resource.Project); ok {
		spec = p.Spec.Description
	}
	if v, ok := ev.Object.(*resource.VirtualClusterInstance); ok {
		spec = v.Spec.Description
	}
	return seen{Type: ev.Type, Name: m.Namespace + "/" + m.Name, RV: m.ResourceVersion, Spec: spec}
}

// drain reads w until it has been quiet for a while (long, for slow machines: a
// watch that stops early shows as a difference).
func drain(w *Watcher, into *[]seen, slow bool) {
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			*into = append(*into, describe(ev))
			if slow && len(*into)%7 == 0 {
				time.Sleep(2 * time.Millisecond)
			}
		case <-time.After(drainIdle):
			return
		}
	}
}

// drainIdle is how long drain waits for another event before it takes the watch as
// done: long enough for a resumed watch to catch up from the backend on a loaded
// machine under the race detector (2 s was not, now and then).
const drainIdle = 5 * time.Second

// TestWatchHub_delivers_what_a_backend_watch_delivers runs random writes under
// watches served by the hub (a tiny ring, slow and stalled readers, so that watches
// fall behind it, end with 410 Expired and resume from their last resourceVersion,
// caught up from the backend and back on the hub) and compares every watch with the
// same watch of a store without the hub, each watch following the backend itself:
// the events must be the same, in the same order.
func TestWatchHub_delivers_what_a_backend_watch_delivers(t *testing.T) {
	for _, ring := range []int{8, 1024} {
		t.Run(fmt.Sprint("ring", ring), func(t *testing.T) { testHubAgainstBackend(t, ring) })
	}
}

func testHubAgainstBackend(t *testing.T, ring int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, b := newTestStore(t, Options{BookmarkInterval: 24 * time.Hour, WatchBuffer: 4, WatchCacheEvents: ring})
	ref, err := New(b, Options{BookmarkInterval: 24 * time.Hour})
	require.NoError(t, err)
	defer ref.Close()
	DisableHub(ref)

	r := rand.New(rand.NewSource(7))
	namespaces := []string{"p-a", "p-b"}
	teams := []string{"red", "blue", ""}
	write := func(i int) {
		name := fmt.Sprintf("o%d", r.Intn(6))
		ns := namespaces[r.Intn(2)]
		labels := map[string]string{}
		if team := teams[r.Intn(3)]; team != "" {
			labels["team"] = team
		}
		var err error
		switch r.Intn(6) {
		case 0, 1: // create or update an instance
			err = s.GuaranteedUpdate(ctx, ns, name, &resource.VirtualClusterInstance{}, func(o resource.Object) error {
				o.GetObjectMeta().Labels = labels
				o.(*resource.VirtualClusterInstance).Spec.Description = fmt.Sprint("d", i)
				return nil
			}, UpdateOptions{})
			if resource.StatusOf(err).Reason == resource.ReasonNotFound {
				err = s.Create(ctx, &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
					Spec: resource.VirtualClusterInstanceSpec{Description: fmt.Sprint("c", i)}}, CreateOptions{})
			}
		case 2: // several writes in one revision
			err = s.Txn(ctx, TxnOptions{}, func(tx *Tx) error {
				for j := 0; j < 3; j++ {
					v := &resource.VirtualClusterInstance{}
					n := fmt.Sprintf("t%d", j)
					if tx.Get(ns, n, v) == nil {
						v.Labels = labels
						v.Spec.Description = fmt.Sprint("t", i)
						if err := tx.Update(v, UpdateOptions{}); err != nil {
							return err
						}
						continue
					}
					if err := tx.Create(&resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: n, Labels: labels}}, CreateOptions{}); err != nil {
						return err
					}
				}
				return nil
			})
		case 3: // delete
			_, err = s.Delete(ctx, &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: name}}, DeleteOptions{})
		case 4: // another kind
			err = s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{GenerateName: "p-", Labels: labels}}, CreateOptions{})
		case 5: // delete a whole revision's worth
			err = s.Txn(ctx, TxnOptions{}, func(tx *Tx) error {
				for j := 0; j < 3; j++ {
					v := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("t%d", j)}}
					if _, err := tx.Delete(v, DeleteOptions{}); err != nil && resource.StatusOf(err).Reason != resource.ReasonNotFound {
						return err
					}
				}
				return nil
			})
		}
		if err != nil && resource.StatusOf(err).Reason != resource.ReasonNotFound && resource.StatusOf(err).Reason != resource.ReasonAlreadyExists {
			require.NoError(t, err, "write %d", i)
		}
	}
	for i := 0; i < 20; i++ {
		write(i)
	}
	rev, err := b.Revision(ctx)
	require.NoError(t, err)

	type pair struct {
		name string
		opts WatchOptions
		hub  *resumingWatch
		back *Watcher
		slow bool
	}
	var pairs []pair
	for _, o := range []WatchOptions{
		{ResourceVersion: formatRV(rev)},
		{ResourceVersion: formatRV(rev - 5)},
		{},
		{Namespace: "p-a"},
		{LabelSelector: "team=red"},
		{LabelSelector: "team!=red", Namespace: "p-b", ResourceVersion: formatRV(rev)},
		{FieldSelector: "metadata.name=t1"},
	} {
		if o.ResourceVersion == "" {
			// A client that may have to resume needs the revision of the initial events.
			o.SendInitialEvents, o.AllowBookmarks = true, true
		}
		for _, slow := range []bool{false, true} {
			hw := &resumingWatch{s: s, opts: o, lastRV: o.ResourceVersion}
			hw.start(t, ctx)
			bw, err := ref.Watch(ctx, &resource.VirtualClusterInstance{}, o)
			require.NoError(t, err)
			pairs = append(pairs, pair{name: fmt.Sprintf("%+v slow=%v", o, slow), opts: o, hub: hw, back: bw, slow: slow})
		}
	}
	hubStart := time.Now()
	for i := 20; i < 300; i++ {
		write(i)
		if i == 150 {
			// Nobody reads for a while: every watch falls behind the ring.
			time.Sleep(10 * time.Millisecond)
		}
	}
	got, want := make([][]seen, len(pairs)), make([][]seen, len(pairs))
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Add(2)
		go func() { defer wg.Done(); p.hub.drain(t, ctx, &got[i], p.slow) }()
		go func() { defer wg.Done(); drain(p.back, &want[i], false) }()
	}
	wg.Wait()
	resumes := 0
	for i, p := range pairs {
		p.hub.w.Stop()
		p.back.Stop()
		require.NotEmpty(t, want[i], p.name)
		require.Equal(t, want[i], got[i], p.name)
		resumes += p.hub.resumes
	}
	t.Logf("compared %d watches over %v; %d resumed after falling behind", len(pairs), time.Since(hubStart), resumes)
	if ring < 100 {
		// Nobody read during the writes: every watch served by the hub fell behind.
		assert.Positive(t, resumes, "watches fell behind the ring")
	}
}

// resumingWatch is a watch of instances that, when it ends with 410 Expired, goes on
// with a watch from the last resourceVersion it delivered, as a client does.
type resumingWatch struct {
	s       *Store
	example resource.Object // nil for instances
	opts    WatchOptions
	w       *Watcher
	lastRV  string
	resumes int
}

func (r *resumingWatch) start(t *testing.T, ctx context.Context) {
	if r.example == nil {
		r.example = &resource.VirtualClusterInstance{}
	}
	w, err := r.s.Watch(ctx, r.example, r.opts)
	require.NoError(t, err)
	r.w = w
}

// drain reads the watch, resuming it as needed, until it has been quiet for a while.
func (r *resumingWatch) drain(t *testing.T, ctx context.Context, into *[]seen, slow bool) {
	for {
		var part []seen
		drain(r.w, &part, slow)
		if n := len(part); n > 0 && part[n-1].Type == Error && strings.Contains(part[n-1].Name, "behind") {
			*into = append(*into, part[:n-1]...)
			for _, e := range part[:n-1] {
				// The initial events come in no revision order: a client takes the
				// revision of the bookmark that ends them.
				if r.lastRV != "" || e.Type == Bookmark {
					r.lastRV = e.RV
				}
			}
			r.w.Stop()
			require.NotEmpty(t, r.lastRV, "fell behind during the initial events: %v", part)
			r.opts.ResourceVersion = r.lastRV
			r.resumes++
			w, err := r.s.Watch(ctx, r.example, r.opts)
			if !assert.NoError(t, err) {
				return
			}
			r.w = w
			continue
		}
		*into = append(*into, part...)
		return
	}
}

// TestWatchHub_each_watch_gets_its_own_object checks that watches of one event get
// objects that share nothing with each other or with what reads return.
func TestWatchHub_each_watch_gets_its_own_object(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, Options{})
	var ws []*Watcher
	for i := 0; i < 3; i++ {
		w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: "0"})
		require.NoError(t, err)
		defer w.Stop()
		ws = append(ws, w)
	}
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}}
	require.NoError(t, s.Create(ctx, p, CreateOptions{}))
	var objs []*resource.Project
	for _, w := range ws {
		ev := <-w.ResultChan()
		require.Equal(t, Added, ev.Type)
		objs = append(objs, ev.Object.(*resource.Project))
	}
	objs[0].Labels["k"] = "changed"
	objs[0].Spec.Description = "changed"
	assert.Equal(t, "v", objs[1].Labels["k"])
	assert.Equal(t, "v", objs[2].Labels["k"])
	got := &resource.Project{}
	require.NoError(t, s.Get(ctx, "", "a", got, GetOptions{}))
	assert.Equal(t, "v", got.Labels["k"])
	assert.Equal(t, p, got)
	assert.Equal(t, p, objs[1])
}

// TestWatchHub_watches_outlive_the_store checks that a watch served by the hub goes
// on when the store is closed (the hub stops with it), as a watch always did.
func TestWatchHub_watches_outlive_the_store(t *testing.T) {
	ctx := context.Background()
	s, b := newTestStore(t, Options{})
	w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, CreateOptions{}))
	require.NoError(t, s.Close())
	// Another store writes; the watch of the closed one still sees it.
	s2, err := New(b, Options{})
	require.NoError(t, err)
	defer s2.Close()
	require.NoError(t, s2.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b"}}, CreateOptions{}))
	var names []string
	for len(names) < 2 {
		select {
		case ev := <-w.ResultChan():
			require.Equal(t, Added, ev.Type, "%v", ev.Err)
			names = append(names, ev.Object.GetObjectMeta().Name)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no event")
		}
	}
	assert.Equal(t, []string{"a", "b"}, names)
	// Closing the backend ends it with 503, as before.
	require.NoError(t, b.Close())
	ev := <-w.ResultChan()
	require.Equal(t, Error, ev.Type)
	assert.Equal(t, resource.ReasonServiceUnavailable, resource.StatusOf(ev.Err).Reason)
	_, ok := <-w.ResultChan()
	assert.False(t, ok)
}

// newTestStore returns a store over a new memdb backend, both closed when the test
// ends.
func newTestStore(t testing.TB, opts Options) (*Store, *memdb.Backend) {
	t.Helper()
	b := memdb.New(memdb.Options{})
	t.Cleanup(func() { _ = b.Close() })
	s, err := New(b, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, b
}

// TestWatchHub_a_stalled_reader_ends_without_holding_others checks that a watch
// whose reader stops reading ends with 410 Expired as soon as the ring moves past it,
// holding no more than its buffer, while the writers and a watch that reads go on.
func TestWatchHub_a_stalled_reader_ends_without_holding_others(t *testing.T) {
	ctx := t.Context()
	s, b := newTestStore(t, Options{WatchBuffer: 3, WatchCacheEvents: 64})
	rev, err := b.Revision(ctx)
	require.NoError(t, err)
	stalled, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)})
	require.NoError(t, err)
	defer stalled.Stop()
	reader := &resumingWatch{s: s, example: &resource.Project{}, opts: WatchOptions{ResourceVersion: fmt.Sprint(rev)}, lastRV: fmt.Sprint(rev)}
	reader.start(t, ctx)
	var got []seen
	done := make(chan struct{})
	go func() {
		defer close(done)
		reader.drain(t, ctx, &got, false)
	}()
	var want []string
	for i := range 300 { // far more than the ring holds
		name := fmt.Sprintf("p%03d", i)
		want = append(want, name)
		require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}, CreateOptions{}))
	}
	<-done
	reader.w.Stop()
	var names []string
	for _, e := range got {
		names = append(names, strings.TrimPrefix(e.Name, "/"))
	}
	assert.Equal(t, want, names, "the reading watch, resumed %d times", reader.resumes)
	names = nil
	// The stalled watch holds its buffer, then the error: it ended without its reader.
	var last Event
	for ev := range stalled.ResultChan() {
		if last = ev; ev.Type != Error {
			names = append(names, ev.Object.GetObjectMeta().Name)
		}
	}
	require.Equal(t, Error, last.Type)
	assert.Equal(t, 410, resource.CodeOf(last.Err))
	for i, n := range names {
		assert.Equal(t, want[i], n, "in order from the start")
	}
	assert.LessOrEqual(t, len(names), 3+1, "no more than its buffer and the event it was sending")
}

// TestWatchHub_a_watch_from_before_the_ring_catches_up_and_joins checks that a watch
// that starts before what the ring holds follows the backend only until it has
// caught up: then it is served by the ring, so that when its reader stops it ends
// with 410 Expired instead of following the backend on its own.
func TestWatchHub_a_watch_from_before_the_ring_catches_up_and_joins(t *testing.T) {
	ctx := t.Context()
	s, b := newTestStore(t, Options{WatchBuffer: 3, WatchCacheEvents: 8})
	rev, err := b.Revision(ctx)
	require.NoError(t, err)
	// Start the hub, then write more than its ring holds.
	first, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)})
	require.NoError(t, err)
	first.Stop()
	create := func(i int) {
		require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%03d", i)}}, CreateOptions{}))
	}
	for i := range 40 {
		create(i)
	}
	w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)})
	require.NoError(t, err)
	defer w.Stop()
	for i := range 40 {
		ev := <-w.ResultChan()
		require.Equal(t, Added, ev.Type, "%v", ev.Err)
		require.Equal(t, fmt.Sprintf("p%03d", i), ev.Object.GetObjectMeta().Name)
	}
	// Caught up: let it join the ring, then stop reading.
	time.Sleep(100 * time.Millisecond)
	for i := 40; i < 100; i++ {
		create(i)
	}
	var last Event
	n := 0
	for ev := range w.ResultChan() {
		last, n = ev, n+1
		require.Less(t, n, 20, "the watch follows the backend on its own")
	}
	require.Equal(t, Error, last.Type)
	assert.Equal(t, 410, resource.CodeOf(last.Err))
}

// TestWatchHub_a_bookmark_comes_before_the_deadline checks that a watch that asked for
// bookmarks gets one in the last two seconds before its context's deadline, long
// before BookmarkInterval, so that the watch that follows starts from a recent
// revision.
func TestWatchHub_a_bookmark_comes_before_the_deadline(t *testing.T) {
	s, b := newTestStore(t, Options{BookmarkInterval: time.Hour})
	for _, name := range []string{"a", "b"} {
		require.NoError(t, s.Create(t.Context(), &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}, CreateOptions{}))
	}
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	// From just before the create: a bookmark is only ever of a revision after the
	// watch's start, as in kube-apiserver.
	w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev - 1), AllowBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()
	var got []Event
	for ev := range w.ResultChan() {
		got = append(got, ev)
	}
	require.Len(t, got, 2, "the create, one bookmark, then the end")
	assert.Equal(t, Added, got[0].Type)
	assert.Equal(t, Bookmark, got[1].Type)
	assert.Equal(t, fmt.Sprint(rev), got[1].Object.GetObjectMeta().ResourceVersion)
}

// TestWatchHub_an_idle_watch_gets_no_bookmark checks kube-apiserver's rule that a
// watch gets bookmarks only of revisions after the one it started from: on an idle
// store it gets none, not even before its deadline.
func TestWatchHub_an_idle_watch_gets_no_bookmark(t *testing.T) {
	s, b := newTestStore(t, Options{BookmarkInterval: 100 * time.Millisecond})
	require.NoError(t, s.Create(t.Context(), &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, CreateOptions{}))
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev), AllowBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()
	var got []Event
	for ev := range w.ResultChan() {
		got = append(got, ev)
	}
	assert.Empty(t, got)
}

// TestWatchHub_keeps_its_events_within_a_byte_budget checks that large events leave
// the ring once the budget is spent, long before the ring's length is reached, that
// the charge the hub keeps is the sum of its events' charges, and that a watch from
// before the kept events still gets every event (from the backend).
func TestWatchHub_keeps_its_events_within_a_byte_budget(t *testing.T) {
	ctx := t.Context()
	const budget = 256 << 10
	s, b := newTestStore(t, Options{WatchCacheEvents: 1024, WatchCacheBytes: budget})
	rev, err := b.Revision(ctx)
	require.NoError(t, err)
	w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)})
	require.NoError(t, err)
	defer w.Stop()
	big := strings.Repeat("x", 20<<10)
	for i := range 40 {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%02d", i)}}
		p.Spec.Description = big
		require.NoError(t, s.Create(ctx, p, CreateOptions{}))
		ev := <-w.ResultChan()
		require.Equal(t, Added, ev.Type, "%v", ev.Err)
	}
	h := s.hub(rev)
	require.NotNil(t, h)
	h.mu.RLock()
	kept, charged := h.head-h.tail, h.bytes
	var sum int64
	for q := h.tail; q < h.head; q++ {
		sum += h.ring[q%int64(len(h.ring))].charge
	}
	h.mu.RUnlock()
	assert.LessOrEqual(t, charged, int64(budget))
	assert.Equal(t, sum, charged)
	assert.Greater(t, kept, int64(0))
	assert.Less(t, kept, int64(40), "every event is still kept: the budget bounds nothing")

	late, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)})
	require.NoError(t, err)
	defer late.Stop()
	for i := range 40 {
		ev := <-late.ResultChan()
		require.Equal(t, Added, ev.Type, "%v", ev.Err)
		require.Equal(t, fmt.Sprintf("p%02d", i), ev.Object.GetObjectMeta().Name)
	}
}
