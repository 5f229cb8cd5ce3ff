package badger_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
)

func open(t *testing.T, dir string, opts badger.Options) *badger.Backend {
	t.Helper()
	b, err := badger.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func put(t *testing.T, b backend.Backend, key, value string) int64 {
	t.Helper()
	res, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: key, Value: []byte(value)}}})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	return res.Revision
}

func kvString(kv backend.KV) string {
	return fmt.Sprintf("%s=%q create=%d mod=%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

func evString(ev backend.Event) string {
	s := fmt.Sprintf("%s @%d %s", ev.Type, ev.Revision, kvString(ev.KV))
	if ev.PrevKV != nil {
		s += " prev " + kvString(*ev.PrevKV)
	}
	return s
}

// history is a random workload and the state after each of its revisions.
type history struct {
	states []map[string]backend.KV // states[r] is the state at revision r
	events []string                // every event, in order, as evString renders it
}

// writeRandom applies n random transactions of puts and deletes over a few keys, and
// records the states and events they produce, starting from h's last state.
func writeRandom(t *testing.T, b backend.Backend, h *history, rng *rand.Rand, n int) {
	t.Helper()
	keys := []string{"a/1", "a/2", "a/\x00x", "a/\xff", "b/1", "b/2", "c"}
	if len(h.states) == 0 {
		h.states = []map[string]backend.KV{{}}
	}
	for range n {
		var ops []backend.Op
		for _, k := range rng.Perm(len(keys))[:1+rng.IntN(3)] {
			ops = append(ops, backend.Op{Key: keys[k], Value: fmt.Appendf(nil, "v%d", rng.IntN(1000)), Delete: rng.IntN(4) == 0})
		}
		res, err := b.Txn(t.Context(), backend.Txn{Ops: ops})
		require.NoError(t, err)
		require.True(t, res.Succeeded)
		state := h.states[len(h.states)-1]
		next := maps.Clone(state)
		var evs []string
		for _, op := range ops {
			prev, ok := next[op.Key]
			var prevKV *backend.KV
			if ok {
				prevKV = &prev
			}
			switch {
			case op.Delete && ok:
				delete(next, op.Key)
				evs = append(evs, evString(backend.Event{Type: backend.EventDelete, Revision: res.Revision,
					KV: backend.KV{Key: op.Key, ModRevision: res.Revision}, PrevKV: prevKV}))
			case !op.Delete:
				kv := backend.KV{Key: op.Key, Value: op.Value, CreateRevision: res.Revision, ModRevision: res.Revision}
				if ok {
					kv.CreateRevision = prev.CreateRevision
				}
				next[op.Key] = kv
				evs = append(evs, evString(backend.Event{Type: backend.EventPut, Revision: res.Revision, KV: kv, PrevKV: prevKV}))
			}
		}
		if len(evs) == 0 {
			require.Equal(t, int64(len(h.states)-1), res.Revision)
			continue
		}
		require.Equal(t, int64(len(h.states)), res.Revision)
		h.states = append(h.states, next)
		h.events = append(h.events, evs...)
	}
}

func stateStrings(m map[string]backend.KV) []string {
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, kvString(m[k]))
	}
	return out
}

// requireReadsMatch checks a Range and a Get of every key at every revision from
// from on against the recorded states.
func requireReadsMatch(t *testing.T, b backend.Backend, h *history, from int64) {
	t.Helper()
	for rev := from; rev < int64(len(h.states)); rev++ {
		res, err := b.Range(t.Context(), backend.RangeOptions{Revision: rev})
		require.NoError(t, err, "Range at %d", rev)
		got := []string{}
		for _, kv := range res.KVs {
			got = append(got, kvString(kv))
		}
		require.Equal(t, stateStrings(h.states[rev]), got, "Range at revision %d", rev)
		for _, k := range []string{"a/1", "a/2", "a/\x00x", "a/\xff", "b/1", "b/2", "c"} {
			kv, err := b.Get(t.Context(), k, rev)
			if want, ok := h.states[rev][k]; ok {
				require.NoError(t, err)
				require.Equal(t, kvString(want), kvString(kv), "Get %q at %d", k, rev)
			} else {
				require.ErrorIs(t, err, backend.ErrKeyNotFound, "Get %q at %d", k, rev)
			}
		}
	}
}

// watchAll reads every event from revision from to the current one.
func watchAll(t *testing.T, b backend.Backend, from int64, n int) []string {
	t.Helper()
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: from})
	require.NoError(t, err)
	defer w.Stop()
	out := make([]string, 0, n)
	for len(out) < n {
		select {
		case ev, ok := <-w.Events():
			require.True(t, ok, "watch ended: %v", w.Err())
			out = append(out, evString(ev))
		case <-time.After(30 * time.Second):
			require.FailNow(t, "watch hangs")
		}
	}
	return out
}

func TestOpen_ReopenKeepsDataRevisionsHistoryAndEvents(t *testing.T) {
	dir := t.TempDir()
	b, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	var h history
	writeRandom(t, b, &h, rand.New(rand.NewPCG(1, 2)), 200)
	last := int64(len(h.states) - 1)
	require.NoError(t, b.Close())

	b = open(t, dir, badger.Options{})
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, last, rev, "the revision survives the restart")
	requireReadsMatch(t, b, &h, 1)
	assert.Equal(t, h.events, watchAll(t, b, 1, len(h.events)),
		"a watch from revision 1 after the restart replays every event from the log")

	writeRandom(t, b, &h, rand.New(rand.NewPCG(3, 4)), 20)
	assert.Greater(t, int64(len(h.states)-1), last, "revisions go on from where they were")
	requireReadsMatch(t, b, &h, 1)
}

func TestOpen_RevisionKeepsGrowingAcrossReopens(t *testing.T) {
	dir := t.TempDir()
	var last int64
	for round := range 5 {
		b, err := badger.Open(dir, badger.Options{NoSync: round%2 == 1})
		require.NoError(t, err)
		rev, err := b.Revision(t.Context())
		require.NoError(t, err)
		require.Equal(t, last, rev, "round %d opens at the last revision", round)
		for i := range 3 {
			r := put(t, b, fmt.Sprintf("k/%d", i), fmt.Sprint(round))
			require.Equal(t, last+1, r, "round %d: the next revision is one more", round)
			last = r
		}
		require.NoError(t, b.Close())
	}
}

func TestOpen_LockedDirectoryIsAClearError(t *testing.T) {
	dir := t.TempDir()
	first := open(t, dir, badger.Options{})
	put(t, first, "k", "v")
	_, err := badger.Open(dir, badger.Options{})
	require.ErrorIs(t, err, badger.ErrLocked)
	assert.Contains(t, err.Error(), dir, "the error names the directory")
	put(t, first, "k", "still works")
}

func TestOpen_ArgumentsAreChecked(t *testing.T) {
	_, err := badger.Open("", badger.Options{})
	require.ErrorIs(t, err, backend.ErrInvalidArgument, "a durable backend needs a directory")
	_, err = badger.Open(t.TempDir(), badger.Options{InMemory: true})
	require.ErrorIs(t, err, backend.ErrInvalidArgument, "an in-memory backend takes none")
}

func TestCompact_PurgesHistoryAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	b, err := badger.Open(dir, badger.Options{CompactionInterval: -1})
	require.NoError(t, err)
	var h history
	writeRandom(t, b, &h, rand.New(rand.NewPCG(5, 6)), 1500) // several purge chunks
	last := int64(len(h.states) - 1)
	_, histBefore, eventsBefore, err := badger.KeyCounts(b)
	require.NoError(t, err)

	at := last - 40
	require.NoError(t, b.Compact(t.Context(), at))
	cur, hist, events, err := badger.KeyCounts(b)
	require.NoError(t, err)
	assert.Equal(t, len(h.states[last]), cur)
	assert.Equal(t, int(last-at+1), events, "the events from the compaction point on are kept, and only they")
	assert.Less(t, hist, histBefore/10, "the replaced versions no revision needs are deleted")
	t.Logf("history keys %d -> %d, events %d -> %d", histBefore, hist, eventsBefore, events)
	requireReadsMatch(t, b, &h, at)
	_, err = b.Get(t.Context(), "a/1", at-1)
	require.ErrorIs(t, err, backend.ErrCompacted)
	assert.Equal(t, h.events[len(h.events)-eventCount(&h, at):], watchAll(t, b, at, eventCount(&h, at)))
	require.NoError(t, b.Close())

	b = open(t, dir, badger.Options{CompactionInterval: -1})
	oldest, err := b.CompactRevision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, at, oldest, "the compaction point survives the restart")
	_, err = b.Range(t.Context(), backend.RangeOptions{Revision: at - 1})
	require.ErrorIs(t, err, backend.ErrCompacted)
	_, err = b.Watch(t.Context(), backend.WatchOptions{StartRevision: at - 1})
	require.ErrorIs(t, err, backend.ErrCompacted)
	requireReadsMatch(t, b, &h, at)
	assert.Equal(t, h.events[len(h.events)-eventCount(&h, at):], watchAll(t, b, at, eventCount(&h, at)),
		"a watch from the compaction point after the restart replays from the event log")
}

// eventCount returns how many of h's events are at or after revision from.
func eventCount(h *history, from int64) int {
	n := 0
	for rev := from; rev < int64(len(h.states)); rev++ {
		prev, cur := h.states[rev-1], h.states[rev]
		for k, kv := range cur {
			if p, ok := prev[k]; !ok || p.ModRevision != kv.ModRevision {
				n++
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				n++
			}
		}
	}
	return n
}

func TestCompact_BackgroundKeepsHistoryRevisions(t *testing.T) {
	const keep = 50
	b := open(t, t.TempDir(), badger.Options{HistoryRevisions: keep, CompactionInterval: 5 * time.Millisecond, NoSync: true})
	var last int64
	for i := range 300 {
		last = put(t, b, fmt.Sprintf("k/%d", i%7), fmt.Sprint(i))
	}
	require.Eventually(t, func() bool {
		oldest, err := b.CompactRevision(t.Context())
		return err == nil && oldest == last-keep+1
	}, 30*time.Second, 5*time.Millisecond, "the background compaction keeps the last %d revisions", keep)
	require.Eventually(t, func() bool {
		_, _, events, err := badger.KeyCounts(b)
		return err == nil && events == keep
	}, 30*time.Second, 5*time.Millisecond, "and deletes the older events")
	_, err := b.Get(t.Context(), "k/1", last-keep)
	require.ErrorIs(t, err, backend.ErrCompacted)
	kv, err := b.Get(t.Context(), "k/1", last-keep+1)
	require.NoError(t, err)
	assert.NotEmpty(t, kv.Value)
}

// TestWatch_StalledWatcherReadsFromDiskAndEndsAtCompaction writes more revisions
// than the in-memory ring holds while a watcher does not read: the watcher then
// catches up from the event log without a gap, and a compaction past it ends it with
// ErrCompacted.
func TestWatch_StalledWatcherReadsFromDiskAndEndsAtCompaction(t *testing.T) {
	b := open(t, t.TempDir(), badger.Options{NoSync: true, CompactionInterval: -1})
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1, Prefix: "k/"})
	require.NoError(t, err)
	defer w.Stop()
	const writes = 6000 // more than the ring's 4096 revisions
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes / 4 {
				_, err := b.Txn(context.Background(), backend.Txn{Ops: []backend.Op{
					{Key: fmt.Sprintf("k/%d/%d", g, i%5), Value: []byte("v")}, {Key: "other", Value: []byte("x")}}})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	want := int64(1)
	for want <= writes/2 {
		ev := <-w.Events()
		require.Equal(t, want, ev.Revision, "no gap while catching up from disk")
		want++
	}
	require.NoError(t, b.Compact(t.Context(), writes))
	for ev := range w.Events() {
		require.Equal(t, want, ev.Revision, "no gap before the end")
		want++
	}
	require.ErrorIs(t, w.Err(), backend.ErrCompacted)
	require.Eventually(t, func() bool { return badger.LiveWatchers(b) == 0 }, 10*time.Second, time.Millisecond)
}

// TestTxn_ConcurrentWritersShareCommits runs 16 writers with synced commits: their
// transactions are grouped into fewer badger commits, and every revision belongs to
// exactly one of them.
func TestTxn_ConcurrentWritersShareCommits(t *testing.T) {
	b := open(t, t.TempDir(), badger.Options{})
	const writers, each = 16, 40
	revs := make(chan int64, writers*each)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := b.Txn(context.Background(), backend.Txn{
					Compares: []backend.Compare{{Key: fmt.Sprintf("w/%d/%d", g, i), ModRevision: 0}},
					Ops:      []backend.Op{{Key: fmt.Sprintf("w/%d/%d", g, i), Value: []byte("v")}},
				})
				if assert.NoError(t, err) && assert.True(t, res.Succeeded) {
					revs <- res.Revision
				}
			}
		}()
	}
	wg.Wait()
	close(revs)
	var got []int64
	for r := range revs {
		got = append(got, r)
	}
	slices.Sort(got)
	for i, r := range got {
		require.Equal(t, int64(i+1), r, "revisions are consecutive and unique")
	}
	batches, txns := badger.Batches(b)
	assert.Equal(t, int64(writers*each), txns)
	assert.Less(t, batches, txns, "concurrent transactions share badger commits")
	t.Logf("%d transactions in %d commits (%.1f per commit), %d committed by their writer", txns, batches, float64(txns)/float64(batches), badger.InlineCommits(b))
	assert.Less(t, badger.InlineCommits(b), txns/2, "concurrent writers go through the committer")
}

// TestTxn_LoneWriterCommitsItself: a writer alone commits its own transactions (no
// trip through the committer goroutine), one badger commit each, and a second writer
// that comes along is served as before.
func TestTxn_LoneWriterCommitsItself(t *testing.T) {
	b := open(t, t.TempDir(), badger.Options{})
	for i := range 20 {
		assert.Equal(t, int64(i+1), put(t, b, fmt.Sprintf("k/%d", i), "v"))
	}
	batches, txns := badger.Batches(b)
	assert.Equal(t, int64(20), txns)
	assert.Equal(t, int64(20), batches)
	assert.Equal(t, int64(20), badger.InlineCommits(b))

	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				_, err := b.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("w/%d/%d", g, i), Value: []byte("v")}}})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(120), rev)
	res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "w/"})
	require.NoError(t, err)
	assert.Len(t, res.KVs, 100)
}

func TestTxn_TooLargeIsRejectedWithoutARevision(t *testing.T) {
	b := open(t, "", badger.Options{InMemory: true, MemTableSize: 4 << 20})
	r := put(t, b, "k", "v")
	var ops []backend.Op
	for i := range 40 {
		ops = append(ops, backend.Op{Key: fmt.Sprintf("big/%d", i), Value: make([]byte, 100<<10)})
	}
	_, err := b.Txn(t.Context(), backend.Txn{Ops: ops})
	require.ErrorIs(t, err, backend.ErrInvalidArgument)
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, r, rev)
	r = put(t, b, "k", "w")

	// Small values, but too many entries for one badger transaction: the committer
	// finds out, and answers that transaction alone with the error.
	var keys []string
	for i := range 4500 { // a deletion writes two entries: 9000 are too many
		keys = append(keys, fmt.Sprintf("many/%04d", i))
	}
	for chunk := range slices.Chunk(keys, 500) {
		var ops []backend.Op
		for _, k := range chunk {
			ops = append(ops, backend.Op{Key: k, Value: []byte("v")})
		}
		res, err := b.Txn(t.Context(), backend.Txn{Ops: ops})
		require.NoError(t, err)
		r = res.Revision
	}
	var dels []backend.Op
	for _, k := range keys {
		dels = append(dels, backend.Op{Key: k, Delete: true})
	}
	var wg sync.WaitGroup
	for i := range 8 { // in the same batches as the large one
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("small/%d", i)}}})
			assert.NoError(t, err)
		}()
	}
	_, err = b.Txn(t.Context(), backend.Txn{Ops: dels})
	wg.Wait()
	require.ErrorIs(t, err, backend.ErrInvalidArgument)
	rev, err = b.Revision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, r+8, rev, "the small transactions committed, the large one did not")
	res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "many/"})
	require.NoError(t, err)
	assert.Len(t, res.KVs, len(keys))
}

func TestBackend_ValuesAreCopied(t *testing.T) {
	b := open(t, "", badger.Options{InMemory: true})
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
	require.NoError(t, err)
	defer w.Stop()
	buf := []byte("abc")
	_, err = b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: "k", Value: buf}}})
	require.NoError(t, err)
	buf[0] = 'X'
	kv, err := b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(kv.Value), "the caller may reuse its buffer")
	assert.Equal(t, "abc", string((<-w.Events()).KV.Value))
	kv.Value[0] = 'Y'
	kv, err = b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(kv.Value), "a reader may not change the stored value")
}

func TestBackend_CloseWaitsForWatchersAndValueLogGCRuns(t *testing.T) {
	b, err := badger.Open(t.TempDir(), badger.Options{})
	require.NoError(t, err)
	put(t, b, "k", "v")
	for range 10 {
		_, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
		require.NoError(t, err)
	}
	require.NoError(t, b.RunValueLogGC(t.Context(), 0.5), "nothing to collect is not an error")
	require.Equal(t, 10, badger.LiveWatchers(b))
	require.NoError(t, b.Close())
	assert.Equal(t, 0, badger.LiveWatchers(b), "Close returns after every watcher goroutine exited")
	require.ErrorIs(t, b.RunValueLogGC(t.Context(), 0.5), backend.ErrClosed)
}

func TestOpen_RefusesADirectoryOlderThanItsDurableRevision(t *testing.T) {
	dir := t.TempDir()
	b, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	for i := range 5 {
		put(t, b, "k", fmt.Sprint(i))
	}
	require.NoError(t, b.Close())
	mark, err := os.ReadFile(filepath.Join(dir, "mgmt-durable-revision"))
	require.NoError(t, err)
	assert.Equal(t, "5\n", string(mark), "Close records the revision it made durable")

	// The same record next to data that lost its last revisions (here: all of them).
	lost := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(lost, "mgmt-durable-revision"), mark, 0o600))
	_, err = badger.Open(lost, badger.Options{})
	require.ErrorIs(t, err, badger.ErrDataLoss)
	assert.Contains(t, err.Error(), lost)
}

func TestOptions_LoggerReceivesBadgerMessages(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := badger.Open(t.TempDir(), badger.Options{Logger: log})
	require.NoError(t, err)
	put(t, b, "k", "v")
	require.NoError(t, b.Close())
	assert.Contains(t, buf.String(), "component=badger", "badger's messages go to the logger")

	buf.Reset()
	quiet := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err = badger.Open(t.TempDir(), badger.Options{Logger: quiet})
	require.NoError(t, err)
	put(t, b, "k", "v")
	require.NoError(t, b.Close())
	assert.Empty(t, buf.String(), "badger's informational messages are at debug level")
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of badger's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
}

func TestOpen_RefusesAnotherLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys map[string][]byte
	}{
		// What layout 1 left: a revision, and no layout recorded.
		{"layout 1", map[string][]byte{"m/rev": binary.BigEndian.AppendUint64(nil, 5)}},
		{"a later layout", map[string][]byte{"m/layout": binary.BigEndian.AppendUint64(nil, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := dgbadger.Open(dgbadger.DefaultOptions(dir).WithLogger(nil))
			require.NoError(t, err)
			require.NoError(t, db.Update(func(txn *dgbadger.Txn) error {
				for k, v := range tc.keys {
					if err := txn.Set([]byte(k), v); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, db.Close())
			_, err = badger.Open(dir, badger.Options{})
			require.ErrorIs(t, err, badger.ErrLayout)

			// Nothing was changed: the directory still reads as it was.
			db, err = dgbadger.Open(dgbadger.DefaultOptions(dir).WithLogger(nil))
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.View(func(txn *dgbadger.Txn) error {
				_, err := txn.Get([]byte("m/layout"))
				if _, ok := tc.keys["m/layout"]; !ok {
					assert.ErrorIs(t, err, dgbadger.ErrKeyNotFound, "no layout is recorded over old data")
					return nil
				}
				return err
			}))
		})
	}
	// A new directory gets the current layout and opens again.
	dir := t.TempDir()
	b := open(t, dir, badger.Options{})
	put(t, b, "k", "v")
	require.NoError(t, b.Close())
	b = open(t, dir, badger.Options{})
	kv, err := b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	assert.Equal(t, "v", string(kv.Value))
}

// TestRead_NeverReportsAnUnpublishedRevision holds the committer between the moment
// badger makes a commit visible and the moment the backend publishes its revision:
// a read in that window waits, so that no read reports a revision that Revision
// (and so a store checking a resourceVersion) has not reached.
func TestRead_NeverReportsAnUnpublishedRevision(t *testing.T) {
	b := open(t, "", badger.Options{InMemory: true})
	put(t, b, "k", "1")
	inWindow, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	badger.SetCommittedHook(b, func() {
		once.Do(func() {
			close(inWindow)
			<-release
		})
	})
	defer badger.SetCommittedHook(b, nil)
	go func() { put(t, b, "k", "2") }()
	<-inWindow

	type read struct {
		name     string
		rev, cur int64 // what the read reported, and Revision when it returned
	}
	reads := make(chan read, 3)
	go func() {
		res, err := b.Range(context.Background(), backend.RangeOptions{Prefix: "k"})
		assert.NoError(t, err)
		cur, _ := b.Revision(context.Background())
		reads <- read{"Range", res.Revision, cur}
	}()
	go func() {
		kv, err := b.Get(context.Background(), "k", 0)
		assert.NoError(t, err)
		cur, _ := b.Revision(context.Background())
		reads <- read{"Get", kv.ModRevision, cur}
	}()
	go func() {
		kv, err := b.GetHead(context.Background(), "k")
		assert.NoError(t, err)
		cur, _ := b.Revision(context.Background())
		reads <- read{"GetHead", kv.ModRevision, cur}
	}()
	got := 0
	select {
	case r := <-reads:
		// A read may have taken its snapshot before the commit: it reports the
		// revision before it, which is published.
		assert.Equal(t, int64(1), r.rev, "%s returned in the window with the new revision", r.name)
		assert.LessOrEqual(t, r.rev, r.cur, "%s reported revision %d while the current one was %d", r.name, r.rev, r.cur)
		got++
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	for ; got < 3; got++ {
		r := <-reads
		assert.LessOrEqual(t, r.rev, r.cur, "%s reported revision %d while the current one was %d", r.name, r.rev, r.cur)
	}
}
