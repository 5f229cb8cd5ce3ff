package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendWatchCases() []backendCase {
	return []backendCase{
		{"ReplaysFromStartRevisionThenStreamsLive", testBackendWatchReplayThenLive},
		{"StartRevisionZeroMeansAfterCurrent", testBackendWatchFromZero},
		{"EventsOfATxnShareItsRevisionInOpOrder", testBackendWatchTxnEvents},
		{"EventsCarryPrevKVAndDeletesTheirRevision", testBackendWatchPrevKV},
		{"PrefixFiltersEvents", testBackendWatchPrefix},
		{"FailedAndNoopTxnsSendNothing", testBackendWatchNoopTxns},
		{"ProgressNotify", testBackendWatchProgress},
		{"StalledWatcherDoesNotBlockWriters", testBackendWatchStalled},
		{"StopEndsWatchWithNilErr", testBackendWatchStop},
		{"ContextCancelEndsWatchWithNilErr", testBackendWatchContextCancel},
	}
}

func testBackendWatchReplayThenLive(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "a", "1")
	r2 := bkPut(t, b, "b", "1", "c", "1")
	r3 := bkPut(t, b, "a", "2")
	w := bkWatch(t, b, backend.WatchOptions{StartRevision: r1})
	assert.Equal(t, []string{
		bkPutEv("a", "1", r1, r1),
		bkPutEv("b", "1", r2, r2),
		bkPutEv("c", "1", r2, r2),
		bkWithPrev(bkPutEv("a", "2", r1, r3), "a", "1", r1, r1),
	}, bkNextN(t, w, 4), "replay of the committed revisions from StartRevision")

	r4 := bkDel(t, b, "b")
	r5 := bkPut(t, b, "b", "2")
	assert.Equal(t, []string{
		bkWithPrev(bkDelEv("b", r4), "b", "1", r2, r2),
		bkPutEv("b", "2", r5, r5),
	}, bkNextN(t, w, 2), "then the live changes, with no gap at the switch")

	w2 := bkWatch(t, b, backend.WatchOptions{StartRevision: r3})
	assert.Equal(t, []string{
		bkWithPrev(bkPutEv("a", "2", r1, r3), "a", "1", r1, r1),
		bkWithPrev(bkDelEv("b", r4), "b", "1", r2, r2),
		bkPutEv("b", "2", r5, r5),
	}, bkNextN(t, w2, 3), "StartRevision is inclusive")

	w3 := bkWatch(t, b, backend.WatchOptions{StartRevision: r5 + 1})
	r6 := bkPut(t, b, "d", "1")
	assert.Equal(t, []string{bkPutEv("d", "1", r6, r6)}, bkNextN(t, w3, 1), "a watch from current+1 sees the next change")
}

func testBackendWatchFromZero(t *testing.T, b backend.Backend) {
	bkPut(t, b, "x", "1")
	w := bkWatch(t, b, backend.WatchOptions{})
	r2 := bkPut(t, b, "y", "1")
	assert.Equal(t, []string{bkPutEv("y", "1", r2, r2)}, bkNextN(t, w, 1), "only changes after the current revision")
}

func testBackendWatchTxnEvents(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "b", "0")
	w := bkWatch(t, b, backend.WatchOptions{StartRevision: r1 + 1})
	res := bkTxn(t, b, backend.Txn{Ops: []backend.Op{
		{Key: "c", Value: []byte("1")}, {Key: "a", Value: []byte("1")}, {Key: "b", Delete: true}, {Key: "d", Delete: true},
	}})
	require.True(t, res.Succeeded)
	r := res.Revision
	assert.Equal(t, []string{
		bkPutEv("c", "1", r, r),
		bkPutEv("a", "1", r, r),
		bkWithPrev(bkDelEv("b", r), "b", "0", r1, r1),
	}, bkNextN(t, w, 3), "one revision, events in op order, none for the absent key")
	r2 := bkPut(t, b, "e", "1")
	assert.Equal(t, []string{bkPutEv("e", "1", r2, r2)}, bkNextN(t, w, 1))
}

func testBackendWatchPrevKV(t *testing.T, b backend.Backend) {
	w := bkWatch(t, b, backend.WatchOptions{StartRevision: 1})
	r1 := bkPut(t, b, "k", "1")
	r2 := bkPut(t, b, "k", "2")
	r3 := bkDel(t, b, "k")
	r4 := bkPut(t, b, "k", "3")
	evs := make([]backend.Event, 0, 4)
	for range 4 {
		evs = append(evs, bkNext(t, w, false))
	}
	assert.Equal(t, []string{
		bkPutEv("k", "1", r1, r1),
		bkWithPrev(bkPutEv("k", "2", r1, r2), "k", "1", r1, r1),
		bkWithPrev(bkDelEv("k", r3), "k", "2", r1, r2),
		bkPutEv("k", "3", r4, r4),
	}, []string{bkEv(evs[0]), bkEv(evs[1]), bkEv(evs[2]), bkEv(evs[3])})
	assert.Nil(t, evs[0].PrevKV, "a create has no PrevKV")
	assert.Nil(t, evs[3].PrevKV, "a re-create after a delete has no PrevKV")
	assert.Empty(t, evs[2].KV.Value, "a delete carries no value")
	assert.Equal(t, evs[2].Revision, evs[2].KV.ModRevision, "a delete carries its own revision")
}

func testBackendWatchPrefix(t *testing.T, b backend.Backend) {
	w := bkWatch(t, b, backend.WatchOptions{Prefix: "a/", StartRevision: 1})
	all := bkWatch(t, b, backend.WatchOptions{StartRevision: 1})
	r1 := bkPut(t, b, "a", "1")
	r2 := bkPut(t, b, "a/1", "1")
	r3 := bkPut(t, b, "ab", "1")
	r4 := bkPut(t, b, "b/1", "1", "a/2", "1", "a/", "1")
	r5 := bkDel(t, b, "a/1", "b/1")
	r6 := bkPut(t, b, "a/3", "1")
	assert.Equal(t, []string{
		bkPutEv("a/1", "1", r2, r2),
		bkPutEv("a/2", "1", r4, r4),
		bkPutEv("a/", "1", r4, r4),
		bkWithPrev(bkDelEv("a/1", r5), "a/1", "1", r2, r2),
		bkPutEv("a/3", "1", r6, r6),
	}, bkNextN(t, w, 5), "only keys under the prefix")
	assert.Equal(t, []string{
		bkPutEv("a", "1", r1, r1),
		bkPutEv("a/1", "1", r2, r2),
		bkPutEv("ab", "1", r3, r3),
		bkPutEv("b/1", "1", r4, r4),
	}, bkNextN(t, all, 4), "an empty prefix selects every key")
}

func testBackendWatchNoopTxns(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "k", "1")
	w := bkWatch(t, b, backend.WatchOptions{StartRevision: r1 + 1})
	res := bkTxn(t, b, backend.Txn{Compares: []backend.Compare{{Key: "k", ModRevision: r1 + 5}}, Ops: []backend.Op{{Key: "k", Value: []byte("x")}}})
	require.False(t, res.Succeeded)
	bkTxn(t, b, backend.Txn{Ops: []backend.Op{{Key: "absent", Delete: true}}})
	bkTxn(t, b, backend.Txn{})
	r2 := bkPut(t, b, "z", "1")
	require.Equal(t, r1+1, r2)
	assert.Equal(t, []string{bkPutEv("z", "1", r2, r2)}, bkNextN(t, w, 1),
		"the first event is the next real change")
}

// testBackendWatchProgress checks the progress events of a watcher of a prefix:
// one when writes to other keys moved the revision past what it delivered, one that
// completes the revision of its last event (a transaction's events may reach the
// reader one by one), none when it has nothing new to report, and never one ahead of
// an event.
func testBackendWatchProgress(t *testing.T, b backend.Backend) {
	bkPut(t, b, "b/0", "1")
	w := bkWatch(t, b, backend.WatchOptions{Prefix: "a/", ProgressNotify: true})
	var lastEvent, lastProgress int64
	next := func() backend.Event {
		t.Helper()
		ev := bkNext(t, w, true)
		require.GreaterOrEqual(t, ev.Revision, lastEvent, "events in revision order")
		if ev.Type == backend.EventProgress {
			require.Greater(t, ev.Revision, lastProgress, "each progress reports a newer revision")
			require.GreaterOrEqual(t, ev.Revision, lastEvent, "a progress is not older than the last event")
			require.Empty(t, ev.KV.Key, "a progress carries no key")
			lastProgress = ev.Revision
		} else {
			require.Greater(t, ev.Revision, lastProgress, "no event at or below a progress revision")
			lastEvent = ev.Revision
		}
		return ev
	}

	r2 := bkPut(t, b, "b/1", "1")
	for {
		ev := next()
		require.Equal(t, backend.EventProgress, ev.Type, "nothing under a/ was written")
		if ev.Revision >= r2 {
			require.Equal(t, r2, ev.Revision)
			break
		}
	}
	r3 := bkPut(t, b, "a/1", "1", "a/2", "2")
	ev := next()
	assert.Equal(t, bkPutEv("a/1", "1", r3, r3), bkEv(ev), "an event, not a progress, reports a/1")
	ev = next()
	assert.Equal(t, bkPutEv("a/2", "2", r3, r3), bkEv(ev), "then the transaction's other event")
	ev = next()
	assert.Equal(t, backend.EventProgress, ev.Type, "a progress says the transaction's events are all there")
	assert.Equal(t, r3, ev.Revision)
	r4 := bkPut(t, b, "b/2", "1")
	ev = next()
	assert.Equal(t, backend.EventProgress, ev.Type, "a write elsewhere is reported as progress")
	assert.Equal(t, r4, ev.Revision)
	r5 := bkPut(t, b, "a/3", "1")
	ev = next()
	assert.Equal(t, bkPutEv("a/3", "1", r5, r5), bkEv(ev), "no second progress for r4")
}

// testBackendWatchStalled starts a watcher that is never read, writes many
// transactions, which must all complete, and then reads the watcher: it must deliver
// a gap-free run of the events from its start, and then either go on or end with
// ErrCompacted. With a Compactor, compaction to the current revision makes it fall
// behind for sure.
func testBackendWatchStalled(t *testing.T, b backend.Backend) {
	const writes = 3000
	start := bkRevision(t, b) + 1
	w := bkWatch(t, b, backend.WatchOptions{StartRevision: start})

	done := make(chan error, 1)
	go func() {
		for i := range writes {
			res, err := b.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("k/%d", i%10), Value: []byte("v")}}})
			if err == nil && !res.Succeeded {
				err = fmt.Errorf("txn %d did not succeed", i)
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * bkHangTimeout):
		require.FailNow(t, "writers are blocked by a watcher that does not read")
	}
	end := bkRevision(t, b)
	require.Equal(t, start+writes-1, end)

	c, compacts := b.(backend.Compactor)
	if compacts {
		require.NoError(t, c.Compact(t.Context(), end))
	} else {
		t.Logf("%T does not implement backend.Compactor: the stalled watcher ends only if its history bound is below %d revisions", b, writes)
	}

	want := start
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				require.ErrorIs(t, w.Err(), backend.ErrCompacted, "a watcher that fell behind ends with ErrCompacted")
				require.Less(t, want, end+1, "a watcher that delivered everything has not fallen behind")
				t.Logf("stalled watcher delivered revisions %d..%d of %d..%d, then ended with ErrCompacted", start, want-1, start, end)
				return
			}
			require.NotEqual(t, backend.EventProgress, ev.Type)
			require.Equal(t, want, ev.Revision, "the delivered events have no gap")
			want++
			if want > end {
				if compacts {
					t.Logf("%T buffered all %d events of the stalled watcher; it had not fallen behind", b, writes)
				}
				return
			}
		case <-time.After(bkHangTimeout):
			require.FailNow(t, "stalled watcher neither delivers nor ends")
		}
	}
}

func testBackendWatchStop(t *testing.T, b backend.Backend) {
	w, err := b.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
	require.NoError(t, err)
	for range 10 {
		bkPut(t, b, "k", "v")
	}
	w.Stop()
	evs, err := bkDrain(t, w)
	assert.NoError(t, err, "Stop ends the watch with a nil Err")
	assert.LessOrEqual(t, len(evs), 10)
	w.Stop() // idempotent
	assert.NoError(t, w.Err())
	bkPut(t, b, "k", "v") // writers are unaffected
}

func testBackendWatchContextCancel(t *testing.T, b backend.Backend) {
	ctx, cancel := context.WithCancel(t.Context())
	w, err := b.Watch(ctx, backend.WatchOptions{StartRevision: 1})
	require.NoError(t, err)
	defer w.Stop()
	r1 := bkPut(t, b, "k", "v")
	assert.Equal(t, []string{bkPutEv("k", "v", r1, r1)}, bkNextN(t, w, 1))
	cancel()
	_, err = bkDrain(t, w)
	assert.NoError(t, err, "a cancelled context ends the watch with a nil Err")

	_, err = b.Watch(ctx, backend.WatchOptions{})
	assert.ErrorIs(t, err, context.Canceled, "Watch with a done context fails")
}
