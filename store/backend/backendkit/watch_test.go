package backendkit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// history is a Source over an in-memory list of revisions, as a backend keeps one.
type history struct {
	mu         sync.Mutex
	revs       map[int64][]backend.Event
	rev        int64
	oldest     int64
	notify     chan struct{}
	closed     bool
	collectErr error
	collects   int // how many times Collect answered
	lostErrs   int // how many times Lost answered with an error
}

func newHistory() *history {
	return &history{revs: map[int64][]backend.Event{}, notify: make(chan struct{})}
}

func (h *history) wakeLocked() {
	close(h.notify)
	h.notify = make(chan struct{})
}

// commit adds a revision that puts keys, and returns it.
func (h *history) commit(keys ...string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rev++
	var evs []backend.Event
	for _, k := range keys {
		evs = append(evs, backend.Event{
			Type: backend.EventPut, Revision: h.rev,
			KV:     backend.KV{Key: k, Value: []byte("v"), CreateRevision: 1, ModRevision: h.rev},
			PrevKV: &backend.KV{Key: k, Value: []byte("old"), CreateRevision: 1, ModRevision: 1},
		})
	}
	h.revs[h.rev] = evs
	if h.oldest == 0 {
		h.oldest = 1
	}
	h.wakeLocked()
	return h.rev
}

// compact drops the revisions below oldest.
func (h *history) compact(oldest int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.oldest = oldest
	h.wakeLocked()
}

func (h *history) failCollect(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.collectErr = err
	h.wakeLocked()
}

func (h *history) Collect(prefix string, next int64) (backendkit.Batch, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.collects++
	if h.closed {
		return backendkit.Batch{}, backend.ErrClosed
	}
	if h.collectErr != nil {
		return backendkit.Batch{}, h.collectErr
	}
	cur := h.rev
	if next > cur {
		return backendkit.Batch{Upto: next - 1, Current: cur, Notify: h.notify}, nil
	}
	if next < h.oldest {
		return backendkit.Batch{}, fmt.Errorf("%w: collect from %d", backend.ErrCompacted, next)
	}
	events, upto := backendkit.Scan(prefix, next, cur, func(r int64) []backend.Event { return h.revs[r] })
	return backendkit.Batch{Events: events, Upto: upto, Current: cur, Notify: h.notify}, nil
}

func (h *history) Lost(need int64) (<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil
	}
	if need <= h.rev && need < h.oldest {
		h.lostErrs++
		return h.notify, fmt.Errorf("%w: lost %d", backend.ErrCompacted, need)
	}
	return h.notify, nil
}

// fixture is a hub over a history, with the done channel of its backend.
type fixture struct {
	h         *history
	hub       *backendkit.Hub
	done      chan struct{}
	closeOnce sync.Once
}

func newFixture(t *testing.T, buffer int) *fixture {
	t.Helper()
	f := &fixture{h: newHistory(), done: make(chan struct{})}
	f.hub = backendkit.NewHub(f.h, f.done, buffer)
	t.Cleanup(func() {
		f.close()
		f.hub.Wait()
	})
	return f
}

func (f *fixture) close() { f.closeOnce.Do(func() { close(f.done) }) }

func (h *history) collected() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.collects
}

// watch starts a watcher as a backend's Watch does: checks, then Start under the lock.
func (f *fixture) watch(t *testing.T, ctx context.Context, opts backend.WatchOptions) backend.Watcher {
	t.Helper()
	require.NoError(t, backendkit.CheckWatch(ctx, opts))
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	w, err := f.hub.Start(ctx, opts, f.h.rev, f.h.oldest)
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

func receive(t *testing.T, w backend.Watcher) backend.Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		require.True(t, ok, "the channel was closed: %v", w.Err())
		return ev
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no event")
	}
	return backend.Event{}
}

// ended waits for the channel to close, and returns the events left in it.
func ended(t *testing.T, w backend.Watcher) []backend.Event {
	t.Helper()
	var left []backend.Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return left
			}
			left = append(left, ev)
		case <-timeout:
			require.FailNow(t, "the watch did not end")
		}
	}
}

func TestCheckWatchRefusesNegativeStartAndDoneContext(t *testing.T) {
	err := backendkit.CheckWatch(context.Background(), backend.WatchOptions{StartRevision: -1})
	require.ErrorIs(t, err, backend.ErrInvalidArgument)
	assert.EqualError(t, err, "backend: invalid argument: negative start revision -1")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, backendkit.CheckWatch(ctx, backend.WatchOptions{}), context.Canceled)

	assert.NoError(t, backendkit.CheckWatch(context.Background(), backend.WatchOptions{StartRevision: 7}))
}

func TestStartResolvesTheStartRevision(t *testing.T) {
	hub := backendkit.NewHub(newHistory(), make(chan struct{}), 1)
	ctx := context.Background()

	_, err := hub.Start(ctx, backend.WatchOptions{StartRevision: 4}, 10, 5)
	require.ErrorIs(t, err, backend.ErrCompacted, "a start at or below the current revision and below the oldest kept")
	assert.EqualError(t, err, "backend: revision has been compacted: watch from revision 4, oldest kept 5")
	assert.Equal(t, 0, hub.Live(), "a refused watch starts no goroutine")

	for _, start := range []int64{5, 10, 11, 12} {
		w, err := hub.Start(ctx, backend.WatchOptions{StartRevision: start}, 10, 5)
		require.NoError(t, err, "start %d", start)
		w.Stop()
	}
	w, err := hub.Start(ctx, backend.WatchOptions{StartRevision: 3}, 2, 5)
	require.NoError(t, err, "a start past the current revision waits for it, whatever the oldest")
	w.Stop()
	w, err = hub.Start(ctx, backend.WatchOptions{}, 10, 11)
	require.NoError(t, err, "start 0 is the next revision, never compacted")
	w.Stop()
	assert.Equal(t, 0, hub.Live())
}

func TestWatcherDeliversMatchingEventsInOrderAcrossBatches(t *testing.T) {
	f := newFixture(t, 8)
	n := backendkit.BatchRevisions*2 + 10
	for i := 1; i <= n; i++ {
		if i%3 == 0 {
			f.h.commit("other/x")
			continue
		}
		f.h.commit(fmt.Sprintf("k/%d", i), fmt.Sprintf("k/%d/b", i))
	}
	w := f.watch(t, context.Background(), backend.WatchOptions{Prefix: "k/", StartRevision: 1})
	for i := 1; i <= n; i++ {
		if i%3 == 0 {
			continue
		}
		for _, key := range []string{fmt.Sprintf("k/%d", i), fmt.Sprintf("k/%d/b", i)} {
			ev := receive(t, w)
			require.Equal(t, int64(i), ev.Revision)
			require.Equal(t, key, ev.KV.Key, "the events of a revision in op order")
			require.Equal(t, backend.EventPut, ev.Type)
		}
	}
	rev := f.h.commit("k/live")
	ev := receive(t, w)
	assert.Equal(t, rev, ev.Revision, "after the history, the watcher follows new commits")
	assert.Equal(t, "k/live", ev.KV.Key)
}

func TestWatcherFromZeroSeesOnlyLaterChanges(t *testing.T) {
	f := newFixture(t, 8)
	f.h.commit("k/before")
	w := f.watch(t, context.Background(), backend.WatchOptions{})
	rev := f.h.commit("k/after")
	ev := receive(t, w)
	assert.Equal(t, rev, ev.Revision)
	assert.Equal(t, "k/after", ev.KV.Key)
}

func TestWatcherFromTheFutureWaitsForItsRevision(t *testing.T) {
	f := newFixture(t, 8)
	f.h.commit("k/1")
	w := f.watch(t, context.Background(), backend.WatchOptions{StartRevision: 3})
	f.h.commit("k/2")
	f.h.commit("k/3")
	ev := receive(t, w)
	assert.Equal(t, int64(3), ev.Revision)
	assert.Equal(t, "k/3", ev.KV.Key)
}

func TestProgressIsSentOnlyWhenAskedAndNewAndNotBeforeTheStart(t *testing.T) {
	// A progress follows the last event once the watcher has caught up: the
	// events of one revision may reach the reader one by one, and only it says that
	// the revision is complete.
	t.Run("asked", func(t *testing.T) {
		f := newFixture(t, 8)
		w := f.watch(t, context.Background(), backend.WatchOptions{Prefix: "k/", ProgressNotify: true})
		f.h.commit("other/1")
		ev := receive(t, w)
		assert.Equal(t, backend.Event{Type: backend.EventProgress, Revision: 1}, ev)
		f.h.commit("k/2")
		ev = receive(t, w)
		assert.Equal(t, backend.EventPut, ev.Type, "the event comes first")
		assert.Equal(t, int64(2), ev.Revision)
		assert.Equal(t, backend.Event{Type: backend.EventProgress, Revision: 2}, receive(t, w), "then the progress that completes it")
		f.h.commit("other/3")
		assert.Equal(t, backend.Event{Type: backend.EventProgress, Revision: 3}, receive(t, w))
	})
	t.Run("not before the revision before the start", func(t *testing.T) {
		f := newFixture(t, 8)
		f.h.commit("other/1")
		w := f.watch(t, context.Background(), backend.WatchOptions{Prefix: "k/", StartRevision: 5, ProgressNotify: true})
		f.h.commit("other/2")
		f.h.commit("other/3")
		f.h.commit("other/4")
		assert.Equal(t, backend.Event{Type: backend.EventProgress, Revision: 4}, receive(t, w))
	})
	t.Run("not asked", func(t *testing.T) {
		f := newFixture(t, 8)
		w := f.watch(t, context.Background(), backend.WatchOptions{Prefix: "k/"})
		f.h.commit("other/1")
		f.h.commit("k/2")
		ev := receive(t, w)
		assert.Equal(t, backend.EventPut, ev.Type)
		assert.Equal(t, int64(2), ev.Revision)
	})
}

func TestEachWatcherGetsItsOwnPrevKV(t *testing.T) {
	f := newFixture(t, 8)
	w1 := f.watch(t, context.Background(), backend.WatchOptions{})
	w2 := f.watch(t, context.Background(), backend.WatchOptions{})
	f.h.commit("k")
	ev1, ev2 := receive(t, w1), receive(t, w2)
	require.NotNil(t, ev1.PrevKV)
	require.NotNil(t, ev2.PrevKV)
	assert.NotSame(t, ev1.PrevKV, ev2.PrevKV)
	assert.NotSame(t, f.h.revs[1][0].PrevKV, ev1.PrevKV, "not the history's own")
	ev1.PrevKV.ModRevision = 99
	assert.Equal(t, int64(1), ev2.PrevKV.ModRevision)
	assert.Equal(t, int64(1), f.h.revs[1][0].PrevKV.ModRevision)
}

func TestWatchEnds(t *testing.T) {
	t.Run("Stop: nil error, idempotent", func(t *testing.T) {
		f := newFixture(t, 8)
		w := f.watch(t, context.Background(), backend.WatchOptions{})
		other := f.watch(t, context.Background(), backend.WatchOptions{})
		require.Equal(t, 2, f.hub.Live())
		w.Stop()
		assert.Equal(t, 1, f.hub.Live(), "Stop returns once the goroutine is done")
		assert.Empty(t, ended(t, w))
		assert.NoError(t, w.Err())
		w.Stop()
		f.h.commit("k")
		assert.Equal(t, "k", receive(t, other).KV.Key, "the other watcher goes on")
	})
	t.Run("context: nil error", func(t *testing.T) {
		f := newFixture(t, 8)
		ctx, cancel := context.WithCancel(context.Background())
		w := f.watch(t, ctx, backend.WatchOptions{})
		cancel()
		assert.Empty(t, ended(t, w))
		assert.NoError(t, w.Err())
	})
	t.Run("done: ErrClosed, Wait returns", func(t *testing.T) {
		f := newFixture(t, 8)
		ws := []backend.Watcher{
			f.watch(t, context.Background(), backend.WatchOptions{}),
			f.watch(t, context.Background(), backend.WatchOptions{StartRevision: 100}),
		}
		f.close()
		f.hub.Wait()
		assert.Equal(t, 0, f.hub.Live())
		for _, w := range ws {
			assert.Empty(t, ended(t, w))
			assert.ErrorIs(t, w.Err(), backend.ErrClosed)
		}
	})
	t.Run("done while the reader does not read: ErrClosed", func(t *testing.T) {
		f := newFixture(t, 0)
		w := f.watch(t, context.Background(), backend.WatchOptions{})
		f.h.commit("k")
		f.close()
		f.hub.Wait()
		assert.ErrorIs(t, w.Err(), backend.ErrClosed)
	})
	t.Run("the source's error", func(t *testing.T) {
		f := newFixture(t, 8)
		w := f.watch(t, context.Background(), backend.WatchOptions{})
		boom := errors.New("boom")
		f.h.failCollect(boom)
		assert.Empty(t, ended(t, w))
		assert.Same(t, boom, w.Err())
	})
	t.Run("the source closed: ErrClosed", func(t *testing.T) {
		f := newFixture(t, 8)
		f.h.commit("k/1")
		f.h.compact(2)
		f.h.commit("k/2")
		w := f.watch(t, context.Background(), backend.WatchOptions{StartRevision: 2})
		assert.Equal(t, int64(2), receive(t, w).Revision)
		f.h.mu.Lock()
		f.h.closed = true // Collect answers ErrClosed from now on
		f.h.mu.Unlock()
		f.h.commit("k/3")
		assert.Empty(t, ended(t, w))
		assert.ErrorIs(t, w.Err(), backend.ErrClosed)
	})
	t.Run("a start the source finds compacted: its error", func(t *testing.T) {
		f := newFixture(t, 8)
		f.h.commit("k/1")
		f.h.commit("k/2")
		f.h.compact(2)
		// Started as if the backend had not known yet (cur 0): revision 1 is gone.
		w, err := f.hub.Start(context.Background(), backend.WatchOptions{StartRevision: 1}, 0, 0)
		require.NoError(t, err)
		assert.Empty(t, ended(t, w))
		require.ErrorIs(t, w.Err(), backend.ErrCompacted)
		assert.EqualError(t, w.Err(), "backend: revision has been compacted: collect from 1")
	})
}

func TestStalledWatcherEndsOnceItsNextRevisionIsLost(t *testing.T) {
	f := newFixture(t, 0) // unbuffered: the watcher waits in send for a reader
	f.h.commit("k/1")
	w := f.watch(t, context.Background(), backend.WatchOptions{StartRevision: 1})
	// Once it has collected revision 1, the watcher waits in send for a reader.
	require.Eventually(t, func() bool { return f.h.collected() > 0 }, 10*time.Second, time.Millisecond)
	f.h.commit("k/2") // the watcher needs revision 2 once it has sent revision 1
	f.h.compact(2)    // revision 2 is still kept: it waits on
	f.h.commit("k/3")
	require.Never(t, func() bool { return f.hub.Live() == 0 }, 50*time.Millisecond, time.Millisecond)

	f.h.compact(3) // revision 2 is gone
	require.Eventually(t, func() bool { return f.hub.Live() == 0 }, 10*time.Second, time.Millisecond)
	assert.Empty(t, ended(t, w), "nothing is sent once the watch cannot go on without a gap")
	require.ErrorIs(t, w.Err(), backend.ErrCompacted)
	assert.EqualError(t, w.Err(), "backend: revision has been compacted: lost 2")
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	assert.Equal(t, 1, f.h.lostErrs)
}

func TestSlowReaderWhoseHistoryIsKeptLosesNothing(t *testing.T) {
	f := newFixture(t, 0)
	w := f.watch(t, context.Background(), backend.WatchOptions{})
	for i := 1; i <= 20; i++ {
		f.h.commit(fmt.Sprintf("k/%d", i)) // each commit wakes the stalled watcher
	}
	for i := 1; i <= 20; i++ {
		assert.Equal(t, int64(i), receive(t, w).Revision)
	}
}

func TestScanBatches(t *testing.T) {
	one := func(rev int64) []backend.Event {
		return []backend.Event{
			{Revision: rev, KV: backend.KV{Key: "a/" + fmt.Sprint(rev)}},
			{Revision: rev, KV: backend.KV{Key: "b/" + fmt.Sprint(rev)}},
		}
	}
	t.Run("prefix and order", func(t *testing.T) {
		events, upto := backendkit.Scan("b/", 3, 5, one)
		assert.Equal(t, int64(5), upto)
		var keys []string
		for _, ev := range events {
			keys = append(keys, ev.KV.Key)
		}
		assert.Equal(t, []string{"b/3", "b/4", "b/5"}, keys)
		events, _ = backendkit.Scan("", 3, 3, one)
		assert.Len(t, events, 2, "the empty prefix matches every key")
	})
	t.Run("nothing to look at", func(t *testing.T) {
		called := false
		events, upto := backendkit.Scan("", 7, 6, func(int64) []backend.Event { called = true; return nil })
		assert.Empty(t, events)
		assert.Equal(t, int64(6), upto)
		assert.False(t, called)
	})
	t.Run("at most BatchRevisions revisions", func(t *testing.T) {
		events, upto := backendkit.Scan("none/", 10, 1_000_000, one)
		assert.Empty(t, events)
		assert.Equal(t, int64(10+backendkit.BatchRevisions-1), upto)
	})
	t.Run("no revision more once BatchEvents are held", func(t *testing.T) {
		// Three events a revision: the batch reaches BatchEvents within the revision
		// that carries it there or past it, and stops after that revision.
		three := func(rev int64) []backend.Event { return make([]backend.Event, 3) }
		events, upto := backendkit.Scan("", 1, 1_000_000, three)
		revs := (backendkit.BatchEvents + 2) / 3
		assert.Equal(t, int64(revs), upto)
		assert.Len(t, events, 3*revs)
		assert.GreaterOrEqual(t, len(events), backendkit.BatchEvents)
	})
	t.Run("a batch that reaches BatchEvents exactly takes no revision more", func(t *testing.T) {
		two := func(rev int64) []backend.Event { return make([]backend.Event, 2) }
		events, upto := backendkit.Scan("", 1, 1_000_000, two)
		assert.Len(t, events, backendkit.BatchEvents)
		assert.Equal(t, int64(backendkit.BatchEvents/2), upto)
	})
	t.Run("one revision larger than a batch is taken whole", func(t *testing.T) {
		big := func(rev int64) []backend.Event { return make([]backend.Event, backendkit.BatchEvents+5) }
		events, upto := backendkit.Scan("", 4, 9, big)
		assert.Equal(t, int64(4), upto)
		assert.Len(t, events, backendkit.BatchEvents+5)
	})
}
