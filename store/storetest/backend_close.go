package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendCloseCases() []backendCase {
	return []backendCase{
		{"CloseEndsWatchersWithErrClosed", testBackendCloseEndsWatchers},
		{"CallsAfterCloseReturnErrClosed", testBackendCallsAfterClose},
	}
}

func testBackendCloseEndsWatchers(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "a/1", "1")
	idle := bkWatch(t, b, backend.WatchOptions{})                                       // caught up
	unread := bkWatch(t, b, backend.WatchOptions{StartRevision: r1})                    // events pending
	filtered := bkWatch(t, b, backend.WatchOptions{Prefix: "b/", ProgressNotify: true}) // may hold a progress
	for range 20 {
		bkPut(t, b, "a/1", "1")
	}
	require.NoError(t, b.Close())
	for name, w := range map[string]backend.Watcher{"idle": idle, "unread": unread, "filtered": filtered} {
		evs, err := bkDrain(t, w)
		assert.ErrorIs(t, err, backend.ErrClosed, "%s watcher ends with ErrClosed", name)
		for i, ev := range evs {
			if name == "unread" {
				assert.Equal(t, r1+int64(i), ev.Revision, "what was delivered before Close has no gap")
			}
		}
		w.Stop() // still safe
		assert.ErrorIs(t, w.Err(), backend.ErrClosed, "Stop after the end does not change Err")
	}
}

func testBackendCallsAfterClose(t *testing.T, b backend.Backend) {
	r := bkPut(t, b, "k", "v")
	require.NoError(t, b.Close())
	ctx := t.Context()
	_, err := b.Get(ctx, "k", 0)
	assert.ErrorIs(t, err, backend.ErrClosed, "Get")
	_, err = b.Get(ctx, "k", r)
	assert.ErrorIs(t, err, backend.ErrClosed, "Get at a revision")
	_, err = b.Range(ctx, backend.RangeOptions{})
	assert.ErrorIs(t, err, backend.ErrClosed, "Range")
	_, err = b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "k", Value: []byte("w")}}})
	assert.ErrorIs(t, err, backend.ErrClosed, "Txn")
	w, err := b.Watch(ctx, backend.WatchOptions{})
	assert.ErrorIs(t, err, backend.ErrClosed, "Watch")
	if w != nil {
		w.Stop()
	}
	_, err = b.Revision(ctx)
	assert.ErrorIs(t, err, backend.ErrClosed, "Revision")
	if c, ok := b.(backend.Compactor); ok {
		assert.ErrorIs(t, c.Compact(ctx, r), backend.ErrClosed, "Compact")
		_, err = c.CompactRevision(ctx)
		assert.ErrorIs(t, err, backend.ErrClosed, "CompactRevision")
	} else {
		t.Logf("%T does not implement backend.Compactor: Compact after Close not checked", b)
	}
	assert.ErrorIs(t, b.Close(), backend.ErrClosed, "a second Close")
}
