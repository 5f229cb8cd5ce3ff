package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// rangeSpy records the ranges a store reads from its memdb backend under prefix, and
// runs after, when set, after each of them.
type rangeSpy struct {
	*memdb.Backend
	prefix string

	mu     sync.Mutex
	ranges []backend.RangeOptions
	after  func(n int) // n: how many ranges of prefix so far
}

func (r *rangeSpy) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	res, err := r.Backend.Range(ctx, opts)
	if opts.Prefix != r.prefix {
		return res, err
	}
	r.mu.Lock()
	r.ranges = append(r.ranges, opts)
	n, after := len(r.ranges), r.after
	r.mu.Unlock()
	if after != nil {
		after(n)
	}
	return res, err
}

func (r *rangeSpy) take() []backend.RangeOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ranges
	r.ranges, r.after = nil, nil
	return out
}

const vciPrefix = "/management.service/virtualclusterinstances/"

func newSpiedStore(t *testing.T, n int) (*store.Store, *rangeSpy) {
	t.Helper()
	mem := memdb.New(memdb.Options{HistoryRevisions: 100})
	spy := &rangeSpy{Backend: mem, prefix: vciPrefix}
	s, err := store.New(spy, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(); _ = mem.Close() })
	ctx := context.Background()
	for i := range n {
		require.NoError(t, s.Create(ctx, storetest.BenchInstance(i), store.CreateOptions{}))
	}
	require.NoError(t, s.Settle(ctx))
	spy.take()
	return s, spy
}

func nsNames(l *resource.VirtualClusterInstanceList) []string {
	out := make([]string, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].Namespace + "/" + l.Items[i].Name
	}
	return out
}

// A list without a limit reads the backend in chunks at one revision, and returns
// what one read of the whole range returns.
func TestListUnpagedReadsInChunks(t *testing.T) {
	ctx := context.Background()
	const n = 2500
	s, spy := newSpiedStore(t, n)

	// The reference: the same list with an exact revision and a limit above n,
	// which reads the backend once.
	rev, err := spy.Revision(ctx)
	require.NoError(t, err)
	want := &resource.VirtualClusterInstanceList{}
	require.NoError(t, s.List(ctx, want, store.ListOptions{Limit: n + 1}))
	require.Len(t, want.Items, n)
	spy.take()

	got := &resource.VirtualClusterInstanceList{}
	require.NoError(t, s.List(ctx, got, store.ListOptions{}))
	assert.Equal(t, want.Items, got.Items)
	assert.Equal(t, fmt.Sprint(rev), got.ResourceVersion)

	ranges := spy.take()
	require.Len(t, ranges, 3, "2,500 keys in chunks of 1,000")
	for i, r := range ranges {
		assert.Equal(t, 1000, r.Limit, "range %d", i)
		if i > 0 {
			assert.Equal(t, rev, r.Revision, "range %d reads at the first one's revision", i)
			assert.NotEmpty(t, r.Start)
		} else {
			assert.Zero(t, r.Revision)
		}
	}
}

// When the first chunk's revision is compacted away before a later chunk is read,
// the list starts over and reads the whole range at once: it answers with every
// object as of one revision, not an error, and with no object twice.
func TestListUnpagedRestartsWhenCompacted(t *testing.T) {
	ctx := context.Background()
	const n = 1500
	s, spy := newSpiedStore(t, n)

	var firstRev int64
	spy.after = func(k int) {
		if k != 1 {
			return
		}
		// Between the first and the second chunk: one more object, and the
		// history below it compacted.
		var err error
		firstRev, err = spy.Revision(ctx)
		assert.NoError(t, err)
		assert.NoError(t, s.Create(ctx, storetest.BenchInstance(n), store.CreateOptions{}))
		cur, err := spy.Revision(ctx)
		assert.NoError(t, err)
		assert.NoError(t, spy.Compact(ctx, cur))
	}
	got := &resource.VirtualClusterInstanceList{}
	require.NoError(t, s.List(ctx, got, store.ListOptions{}))
	assert.Len(t, got.Items, n+1, "the object created meanwhile is in the list read again")
	seen := map[string]bool{}
	for _, name := range nsNames(got) {
		assert.False(t, seen[name], "%s listed twice", name)
		seen[name] = true
	}
	assert.NotEqual(t, fmt.Sprint(firstRev), got.ResourceVersion)

	ranges := spy.take()
	require.Len(t, ranges, 3, "a chunk, the compacted chunk, then the whole range")
	assert.Equal(t, 1000, ranges[1].Limit)
	assert.Equal(t, firstRev, ranges[1].Revision)
	assert.Zero(t, ranges[2].Limit, "the whole range")
	assert.Zero(t, ranges[2].Revision, "at the current revision")
	assert.Empty(t, ranges[2].Start)
}

// A list at an exact revision that is compacted away between two chunks is
// Expired, as a list at that revision is once it is compacted.
func TestListUnpagedExactCompacted(t *testing.T) {
	ctx := context.Background()
	const n = 1500
	s, spy := newSpiedStore(t, n)
	rev, err := spy.Revision(ctx)
	require.NoError(t, err)
	spy.after = func(k int) {
		if k != 1 {
			return
		}
		assert.NoError(t, s.Create(ctx, storetest.BenchInstance(n), store.CreateOptions{}))
		cur, err := spy.Revision(ctx)
		assert.NoError(t, err)
		assert.NoError(t, spy.Compact(ctx, cur))
	}
	got := &resource.VirtualClusterInstanceList{}
	err = s.List(ctx, got, store.ListOptions{ResourceVersion: fmt.Sprint(rev), ResourceVersionMatch: store.ResourceVersionMatchExact})
	require.Error(t, err)
	assert.Equal(t, resource.ReasonExpired, resource.ReasonOf(err), "%v", err)
	assert.Len(t, spy.take(), 3, "a chunk, the compacted chunk, the whole range at the asked revision")
}
