package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendCompactCases() []backendCase {
	return []backendCase{
		{"ReadsBelowCompactionAreCompacted", testBackendCompactedReads},
		{"WatchFromBelowCompactionIsCompacted", testBackendCompactedWatch},
		{"CompactionPointNeverGoesBack", testBackendCompactMonotonic},
		{"CompactAboveCurrentIsFutureRevision", testBackendCompactFuture},
	}
}

func testBackendCompactedReads(t *testing.T, b backend.Backend) {
	c := bkCompactor(t, b)
	ctx := t.Context()
	bkPut(t, b, "k", "1")
	r2 := bkPut(t, b, "k", "2")
	r3 := bkPut(t, b, "k", "3")
	r4 := bkPut(t, b, "other", "1")
	require.NoError(t, c.Compact(ctx, r3))

	oldest, err := c.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, r3, oldest, "CompactRevision is the oldest readable revision")
	_, err = b.Get(ctx, "k", r2)
	require.ErrorIs(t, err, backend.ErrCompacted)
	_, err = b.Get(ctx, "missing", r2)
	require.ErrorIs(t, err, backend.ErrCompacted, "compaction wins over not-found")
	_, err = b.Range(ctx, backend.RangeOptions{Revision: 1})
	require.ErrorIs(t, err, backend.ErrCompacted)
	assert.Equal(t, `k="3" create=1 mod=3`, bkKV(bkGet(t, b, "k", r3)), "the compaction revision is kept")
	res, err := b.Range(ctx, backend.RangeOptions{Revision: r3})
	require.NoError(t, err)
	assert.Equal(t, []string{`k="3" create=1 mod=3`}, bkKVs(res.KVs))
	res, err = b.Range(ctx, backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, r4, res.Revision, "the current state is kept")
	assert.Len(t, res.KVs, 2)

	require.NoError(t, c.Compact(ctx, r4), "compacting at the current revision")
	assert.Equal(t, `k="3" create=1 mod=3`, bkKV(bkGet(t, b, "k", 0)), "keeps the current state")
	_, err = b.Get(ctx, "k", r3)
	require.ErrorIs(t, err, backend.ErrCompacted)
	r5 := bkPut(t, b, "k", "5")
	assert.Equal(t, r4+1, r5, "revisions go on after compaction")
}

func testBackendCompactedWatch(t *testing.T, b backend.Backend) {
	c := bkCompactor(t, b)
	r1 := bkPut(t, b, "k", "1")
	r2 := bkPut(t, b, "k", "2")
	r3 := bkPut(t, b, "k", "3")
	require.NoError(t, c.Compact(t.Context(), r2))
	bkRequireWatchCompacted(t, b, backend.WatchOptions{StartRevision: r1})
	bkRequireWatchCompacted(t, b, backend.WatchOptions{StartRevision: r1, Prefix: "k"})

	w := bkWatch(t, b, backend.WatchOptions{StartRevision: r2})
	assert.Equal(t, []string{
		bkWithPrev(bkPutEv("k", "2", r1, r2), "k", "1", r1, r1),
		bkWithPrev(bkPutEv("k", "3", r1, r3), "k", "2", r1, r2),
	}, bkNextN(t, w, 2), "a watch from the compaction revision replays from it")
}

func testBackendCompactMonotonic(t *testing.T, b backend.Backend) {
	c := bkCompactor(t, b)
	ctx := t.Context()
	var last int64
	for range 5 {
		last = bkPut(t, b, "k", "v")
	}
	require.NoError(t, c.Compact(ctx, 3))
	require.NoError(t, c.Compact(ctx, 2), "compacting below the compaction point does nothing")
	require.NoError(t, c.Compact(ctx, 3), "compacting at it does nothing")
	oldest, err := c.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), oldest)
	_, err = b.Get(ctx, "k", 2)
	require.ErrorIs(t, err, backend.ErrCompacted, "revision 2 stays compacted")
	assert.Equal(t, last, bkRevision(t, b), "compaction creates no revision")
}

func testBackendCompactFuture(t *testing.T, b backend.Backend) {
	c := bkCompactor(t, b)
	r := bkPut(t, b, "k", "v")
	require.ErrorIs(t, c.Compact(t.Context(), r+1), backend.ErrFutureRevision)
	assert.Equal(t, `k="v" create=1 mod=1`, bkKV(bkGet(t, b, "k", r)), "the current state is kept")
}
