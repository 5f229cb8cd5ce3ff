package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

// bkHangTimeout bounds every wait of the backend suite. It only turns a hang into a
// failure: no case depends on how fast a backend is.
const bkHangTimeout = 60 * time.Second

// bkTxn runs txn and fails the test on an error.
func bkTxn(t *testing.T, b backend.Backend, txn backend.Txn) backend.TxnResult {
	t.Helper()
	res, err := b.Txn(t.Context(), txn)
	require.NoError(t, err)
	return res
}

// bkPut writes key=value pairs (alternating arguments) in one transaction and returns
// its revision.
func bkPut(t *testing.T, b backend.Backend, kvs ...string) int64 {
	t.Helper()
	require.True(t, len(kvs) > 0 && len(kvs)%2 == 0, "put needs key, value pairs")
	var ops []backend.Op
	for i := 0; i < len(kvs); i += 2 {
		ops = append(ops, backend.Op{Key: kvs[i], Value: []byte(kvs[i+1])})
	}
	res := bkTxn(t, b, backend.Txn{Ops: ops})
	require.True(t, res.Succeeded, "a transaction without compares must succeed")
	require.Equal(t, -1, res.FailedCompare)
	return res.Revision
}

// bkDel deletes keys in one transaction and returns its revision.
func bkDel(t *testing.T, b backend.Backend, keys ...string) int64 {
	t.Helper()
	var ops []backend.Op
	for _, k := range keys {
		ops = append(ops, backend.Op{Key: k, Delete: true})
	}
	res := bkTxn(t, b, backend.Txn{Ops: ops})
	require.True(t, res.Succeeded)
	return res.Revision
}

// bkRevision returns b's revision.
func bkRevision(t *testing.T, b backend.Backend) int64 {
	t.Helper()
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	return rev
}

// bkGet reads key at rev and fails the test on an error.
func bkGet(t *testing.T, b backend.Backend, key string, rev int64) backend.KV {
	t.Helper()
	kv, err := b.Get(t.Context(), key, rev)
	require.NoError(t, err, "Get(%q, %d)", key, rev)
	return kv
}

// bkWatch starts a watcher that is stopped when the test ends.
func bkWatch(t *testing.T, b backend.Backend, opts backend.WatchOptions) backend.Watcher {
	t.Helper()
	w, err := b.Watch(t.Context(), opts)
	require.NoError(t, err, "Watch(%+v)", opts)
	t.Cleanup(w.Stop)
	return w
}

// bkNext returns the next event of w. It fails the test when the watch ends, on a
// hang, and on a progress event unless allowProgress (a watcher that did not ask for
// progress must never get one).
func bkNext(t *testing.T, w backend.Watcher, allowProgress bool) backend.Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		require.True(t, ok, "watch ended early: %v", w.Err())
		if !allowProgress {
			require.NotEqual(t, backend.EventProgress, ev.Type, "progress event sent to a watcher that did not ask for it")
		}
		return ev
	case <-time.After(bkHangTimeout):
		require.FailNow(t, "no event within the hang timeout")
		return backend.Event{}
	}
}

// bkNextN returns the next n events of w as strings (see bkEv).
func bkNextN(t *testing.T, w backend.Watcher, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		out = append(out, bkEv(bkNext(t, w, false)))
	}
	return out
}

// bkDrain reads w until its channel is closed, and returns what it read and Err.
func bkDrain(t *testing.T, w backend.Watcher) ([]backend.Event, error) {
	t.Helper()
	var evs []backend.Event
	timer := time.NewTimer(bkHangTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return evs, w.Err()
			}
			evs = append(evs, ev)
		case <-timer.C:
			require.FailNow(t, "watch did not end within the hang timeout")
		}
	}
}

// bkRequireWatchCompacted checks that a watch with opts cannot start because what it
// needs is compacted: Watch returns ErrCompacted, or the watcher ends at once with
// ErrCompacted, delivering nothing.
func bkRequireWatchCompacted(t *testing.T, b backend.Backend, opts backend.WatchOptions) {
	t.Helper()
	w, err := b.Watch(t.Context(), opts)
	if err != nil {
		require.ErrorIs(t, err, backend.ErrCompacted)
		return
	}
	defer w.Stop()
	evs, err := bkDrain(t, w)
	require.Empty(t, evs, "a watch below the compaction point delivered events")
	require.ErrorIs(t, err, backend.ErrCompacted)
}

// bkEv renders an event on one line, for comparisons with readable diffs. A
// delete shows no CreateRevision (the contract does not define it there) and its
// value must be empty.
func bkEv(ev backend.Event) string {
	var s string
	switch ev.Type {
	case backend.EventPut:
		s = fmt.Sprintf("PUT %s=%q create=%d mod=%d @%d", ev.KV.Key, ev.KV.Value, ev.KV.CreateRevision, ev.KV.ModRevision, ev.Revision)
	case backend.EventDelete:
		s = fmt.Sprintf("DELETE %s value=%q mod=%d @%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision, ev.Revision)
	case backend.EventProgress:
		return fmt.Sprintf("PROGRESS @%d key=%q prev=%v", ev.Revision, ev.KV.Key, ev.PrevKV != nil)
	default:
		return fmt.Sprintf("UNKNOWN(%d) %+v", ev.Type, ev)
	}
	if ev.PrevKV == nil {
		return s + " prev=nil"
	}
	return s + fmt.Sprintf(" prev=%s=%q create=%d mod=%d", ev.PrevKV.Key, ev.PrevKV.Value, ev.PrevKV.CreateRevision, ev.PrevKV.ModRevision)
}

// bkPutEv is the bkEv of a put event without PrevKV.
func bkPutEv(key, value string, create, mod int64) string {
	return fmt.Sprintf("PUT %s=%q create=%d mod=%d @%d prev=nil", key, value, create, mod, mod)
}

// bkWithPrev appends a PrevKV to an event string made by bkPutEv or bkDelEv.
func bkWithPrev(ev, key, value string, create, mod int64) string {
	return strings.TrimSuffix(ev, " prev=nil") + fmt.Sprintf(" prev=%s=%q create=%d mod=%d", key, value, create, mod)
}

// bkDelEv is the bkEv of a delete event without PrevKV.
func bkDelEv(key string, rev int64) string {
	return fmt.Sprintf("DELETE %s value=\"\" mod=%d @%d prev=nil", key, rev, rev)
}

// bkKV renders a KV on one line.
func bkKV(kv backend.KV) string {
	return fmt.Sprintf("%s=%q create=%d mod=%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

// bkKVs renders KVs with bkKV.
func bkKVs(kvs []backend.KV) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, bkKV(kv))
	}
	return out
}

// bkCompactor returns b as a backend.Compactor, or skips the test, saying why.
func bkCompactor(t *testing.T, b backend.Backend) backend.Compactor {
	t.Helper()
	c, ok := b.(backend.Compactor)
	if !ok {
		t.Skipf("skipped: %T does not implement backend.Compactor", b)
	}
	return c
}
