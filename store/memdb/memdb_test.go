package memdb_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) backend.Backend {
		return memdb.New(memdb.Options{})
	})
}

// TestConformance_SmallBuffer runs the suite with unbuffered-like watch channels, so
// every watcher spends its time blocked on a send.
func TestConformance_SmallWatchBuffer(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite already ran with the defaults")
	}
	storetest.RunBackend(t, func(t *testing.T) backend.Backend {
		return memdb.New(memdb.Options{WatchBuffer: 1})
	})
}

func newBackend(t *testing.T, opts memdb.Options) *memdb.Backend {
	t.Helper()
	b := memdb.New(opts)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func put(t *testing.T, b *memdb.Backend, key, value string) int64 {
	t.Helper()
	res, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: key, Value: []byte(value)}}})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	return res.Revision
}

func TestBackend_HistoryBoundCompactsOldRevisions(t *testing.T) {
	const history = 50
	b := newBackend(t, memdb.Options{HistoryRevisions: history})
	ctx := t.Context()
	var last int64
	for i := range 3 * history {
		last = put(t, b, "k", fmt.Sprint(i))
	}
	oldest, err := b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, last-history+1, oldest, "the last HistoryRevisions revisions are kept")

	kv, err := b.Get(ctx, "k", oldest)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(oldest-1), string(kv.Value))
	_, err = b.Get(ctx, "k", oldest-1)
	require.ErrorIs(t, err, backend.ErrCompacted)
	_, err = b.Range(ctx, backend.RangeOptions{Revision: 1})
	require.ErrorIs(t, err, backend.ErrCompacted)

	_, err = b.Watch(ctx, backend.WatchOptions{StartRevision: oldest - 1})
	require.ErrorIs(t, err, backend.ErrCompacted, "a watch below the history fails at once")
	w, err := b.Watch(ctx, backend.WatchOptions{StartRevision: oldest})
	require.NoError(t, err)
	defer w.Stop()
	for r := oldest; r <= last; r++ {
		ev := <-w.Events()
		require.Equal(t, r, ev.Revision)
	}
}

// TestBackend_StalledWatcherEndsWithErrCompacted writes three times the history with
// a watcher nobody reads: the writes complete, and the watcher ends with
// ErrCompacted after a gap-free run of events.
func TestBackend_StalledWatcherEndsWithErrCompacted(t *testing.T) {
	const history = 100
	b := newBackend(t, memdb.Options{HistoryRevisions: history, WatchBuffer: 8})
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
	require.NoError(t, err)
	defer w.Stop()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3 * history {
			_, err := b.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: "k", Value: []byte(fmt.Sprint(i))}}})
			assert.NoError(t, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		require.FailNow(t, "writers blocked by a stalled watcher")
	}

	want := int64(1)
	for ev := range w.Events() {
		require.Equal(t, want, ev.Revision, "no gap before the end")
		want++
	}
	require.ErrorIs(t, w.Err(), backend.ErrCompacted)
	assert.Less(t, want, int64(3*history), "the watcher ended before the end of the writes")
	assert.Equal(t, 0, memdb.LiveWatchers(b), "its goroutine has exited")
}

// TestBackend_MemoryIsBoundedByHistory writes many large values to a few keys with a
// small history: the heap after many more writes stays near the heap after a few.
func TestBackend_MemoryIsBoundedByHistory(t *testing.T) {
	const (
		history = 64
		keys    = 8
		size    = 4 << 10
	)
	b := newBackend(t, memdb.Options{HistoryRevisions: history})
	w, err := b.Watch(t.Context(), backend.WatchOptions{}) // nobody reads it: it must not pin history
	require.NoError(t, err)
	defer w.Stop()
	value := make([]byte, size)
	write := func(n int) {
		for i := range n {
			_, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("k/%d", i%keys), Value: value}}})
			require.NoError(t, err)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	write(2 * history)
	base := heap()
	write(5000) // 20 MiB of values written in all
	after := heap()
	// Kept: about (history + keys) values of 4 KiB, well under 1 MiB; the watcher's
	// buffer holds at most DefaultWatchBuffer more. Unbounded history would keep 20 MiB.
	grown := int64(after) - int64(base)
	assert.Less(t, grown, int64(4<<20), "heap grew by %d bytes over 5000 writes of %d bytes", grown, size)
	t.Logf("heap %d before, %d after 5000 writes of %d bytes (history %d)", base, after, size, history)
}

func TestBackend_CompactReleasesHistory(t *testing.T) {
	b := newBackend(t, memdb.Options{})
	ctx := t.Context()
	var last int64
	for i := range 100 {
		last = put(t, b, "k", fmt.Sprint(i))
	}
	require.Equal(t, 100, memdb.KeptRevisions(b))
	require.NoError(t, b.Compact(ctx, last-9))
	assert.Equal(t, 10, memdb.KeptRevisions(b), "compaction drops the revisions below it")
}

func TestBackend_WatchFromFutureRevisionWaitsForIt(t *testing.T) {
	b := newBackend(t, memdb.Options{})
	r := put(t, b, "a", "1")
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: r + 3, ProgressNotify: true})
	require.NoError(t, err)
	defer w.Stop()
	put(t, b, "a", "2")
	r3 := put(t, b, "a", "3")
	ev := <-w.Events()
	require.Equal(t, backend.EventProgress, ev.Type, "progress once the revision before the start is reached")
	require.Equal(t, r3, ev.Revision)
	r4 := put(t, b, "a", "4")
	ev = <-w.Events()
	require.Equal(t, backend.EventPut, ev.Type)
	require.Equal(t, r4, ev.Revision, "the first event is at StartRevision")
}

func TestBackend_CancelledContextChangesNothing(t *testing.T) {
	b := newBackend(t, memdb.Options{})
	r := put(t, b, "k", "1")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "k", Value: []byte("2")}}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Get(ctx, "k", 0)
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Range(ctx, backend.RangeOptions{})
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Revision(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, b.Compact(ctx, r), context.Canceled)
	_, err = b.CompactRevision(ctx)
	require.ErrorIs(t, err, context.Canceled)

	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	require.Equal(t, r, rev)
	kv, err := b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	require.Equal(t, "1", string(kv.Value))
}

// A value given to Txn is the backend's (backend.Op): it is kept as given, not
// copied, which spares a write an allocation the size of the object.
func TestBackend_KeepsValuesWithoutACopy(t *testing.T) {
	b := newBackend(t, memdb.Options{})
	buf := []byte("abc")
	_, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: "k", Value: buf}, {Key: "empty"}}})
	require.NoError(t, err)
	kv, err := b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	assert.Same(t, &buf[0], &kv.Value[0], "the stored value is the given buffer")
	kv, err = b.Get(t.Context(), "empty", 0)
	require.NoError(t, err)
	assert.NotNil(t, kv.Value, "a nil value is stored as an empty one")
	assert.Empty(t, kv.Value)
}

func TestBackend_CloseWaitsForWatchers(t *testing.T) {
	b := memdb.New(memdb.Options{})
	put(t, b, "k", "1")
	for range 10 {
		_, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
		require.NoError(t, err)
	}
	require.Equal(t, 10, memdb.LiveWatchers(b))
	require.NoError(t, b.Close())
	assert.Equal(t, 0, memdb.LiveWatchers(b), "Close returns after every watcher goroutine exited")
}

func TestNew_ZeroOptionsAreDefaults(t *testing.T) {
	b := newBackend(t, memdb.Options{})
	var last int64
	for range memdb.DefaultHistoryRevisions + 5 {
		last = put(t, b, "k", "v")
	}
	oldest, err := b.CompactRevision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, last-memdb.DefaultHistoryRevisions+1, oldest)
}

// TestBackend_HistoryBytesBoundsTheHistory writes values so large that the byte
// budget, not the count, decides what is kept: each revision is charged what it wrote
// and what it replaced, the oldest go first, the current one always stays, and reads
// and watches of what was discarded fail with ErrCompacted.
func TestBackend_HistoryBytesBoundsTheHistory(t *testing.T) {
	value := func(i int) string { return fmt.Sprintf("%03d", i) + string(make([]byte, 297)) } // 300 bytes
	cases := []struct {
		name   string
		budget int64
		kept   int64 // revisions kept after many writes of one key
	}{
		// After the first, each revision writes 300 bytes and replaces 300.
		{name: "two revisions fit", budget: 1300, kept: 2},
		{name: "one revision fits", budget: 700, kept: 1},
		{name: "the current revision stays however large", budget: 10, kept: 1},
		{name: "no byte bound", budget: -1, kept: 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			b := newBackend(t, memdb.Options{HistoryRevisions: 20, HistoryBytes: tc.budget})
			var last int64
			for i := range 40 {
				last = put(t, b, "k", value(i))
			}
			oldest, err := b.CompactRevision(ctx)
			require.NoError(t, err)
			assert.Equal(t, last-tc.kept+1, oldest)
			assert.Equal(t, int(tc.kept), memdb.KeptRevisions(b))
			charged, recounted := memdb.HistoryBytes(b)
			assert.Equal(t, recounted, charged)
			if tc.budget > 0 && tc.kept > 1 {
				assert.LessOrEqual(t, charged, tc.budget)
			}
			kv, err := b.Get(ctx, "k", oldest)
			require.NoError(t, err)
			assert.Equal(t, value(int(oldest-1)), string(kv.Value))
			_, err = b.Get(ctx, "k", oldest-1)
			require.ErrorIs(t, err, backend.ErrCompacted)
			_, err = b.Watch(ctx, backend.WatchOptions{StartRevision: oldest - 1})
			require.ErrorIs(t, err, backend.ErrCompacted)
		})
	}
}

// TestBackend_HistoryBytesAccounting mixes creates, updates, deletes, compactions and
// the count bound's wrap-around, and checks that the bytes charged stay the sum over
// the kept revisions and within the budget.
func TestBackend_HistoryBytesAccounting(t *testing.T) {
	ctx := t.Context()
	const budget = 5000
	b := newBackend(t, memdb.Options{HistoryRevisions: 16, HistoryBytes: budget})
	for i := range 500 {
		key := fmt.Sprintf("k%d", i%7)
		switch {
		case i%11 == 0:
			_, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: key, Delete: true}}})
			require.NoError(t, err)
		case i%37 == 0:
			rev, err := b.Revision(ctx)
			require.NoError(t, err)
			require.NoError(t, b.Compact(ctx, rev-3))
		default:
			put(t, b, key, string(make([]byte, (i*131)%900)))
		}
		charged, recounted := memdb.HistoryBytes(b)
		require.Equal(t, recounted, charged, "after write %d", i)
		if memdb.KeptRevisions(b) > 1 {
			require.LessOrEqual(t, charged, int64(budget), "after write %d", i)
		}
	}
}

// TestBackend_HistoryBytesDefault checks the default budget: 1 MiB values written
// over and over keep DefaultHistoryBytes / 2 MiB revisions, far fewer than the count.
func TestBackend_HistoryBytesDefault(t *testing.T) {
	ctx := t.Context()
	b := newBackend(t, memdb.Options{})
	big := make([]byte, 1<<20)
	var last int64
	for range 48 {
		res, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "k", Value: big}}})
		require.NoError(t, err)
		last = res.Revision
	}
	oldest, err := b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(memdb.DefaultHistoryBytes/(2<<20)), last-oldest+1)
}
