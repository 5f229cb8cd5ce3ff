package storetest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendReadCases() []backendCase {
	return []backendCase{
		{"GetMissingKeyIsKeyNotFound", testBackendGetMissing},
		{"GetAtPastRevisionSeesThatRevision", testBackendGetAtPastRevision},
		{"RangeAtEveryPastRevisionMatchesModel", testBackendRangeMatchesModel},
		{"ReadAboveCurrentRevisionIsFutureRevision", testBackendFutureRevision},
		{"RangeSelectsPrefixInByteOrder", testBackendRangePrefixOrder},
		{"RangeStartIsInclusiveAndInsidePrefix", testBackendRangeStart},
		{"RangePagesOverOneSnapshot", testBackendRangePaging},
		{"RangeLimitAndMore", testBackendRangeLimitMore},
		{"GetHeadMatchesGetWithoutTheValue", testBackendGetHead},
	}
}

// testBackendGetHead checks backend.HeadGetter, for the backends that implement it:
// at each step of a key's life, GetHead answers as Get at the current revision, with
// no value.
func testBackendGetHead(t *testing.T, b backend.Backend) {
	hg, ok := b.(backend.HeadGetter)
	if !ok {
		t.Skip("the backend does not implement backend.HeadGetter")
	}
	check := func(key string) {
		t.Helper()
		head, herr := hg.GetHead(t.Context(), key)
		kv, err := b.Get(t.Context(), key, 0)
		if err != nil {
			require.ErrorIs(t, err, backend.ErrKeyNotFound)
			require.ErrorIs(t, herr, backend.ErrKeyNotFound)
			return
		}
		require.NoError(t, herr)
		assert.Nil(t, head.Value)
		kv.Value = nil
		assert.Equal(t, kv, head)
	}
	check("k")
	bkPut(t, b, "k", "1")
	check("k")
	bkPut(t, b, "k", "2")
	bkPut(t, b, "other", "x")
	check("k")
	bkDel(t, b, "k")
	check("k")
	bkPut(t, b, "k", "3")
	check("k")
	check("k/")
	_, err := hg.GetHead(t.Context(), "")
	require.ErrorIs(t, err, backend.ErrInvalidArgument)
}

func testBackendGetMissing(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "a", "1")
	_, err := b.Get(t.Context(), "b", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound)
	_, err = b.Get(t.Context(), "b", r1)
	require.ErrorIs(t, err, backend.ErrKeyNotFound)
	_, err = b.Get(t.Context(), "a/", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound, "Get matches the whole key, not a prefix")
	_, err = b.Get(t.Context(), "", 0)
	require.ErrorIs(t, err, backend.ErrInvalidArgument)
}

func testBackendGetAtPastRevision(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "k", "1")
	r2 := bkPut(t, b, "k", "2")
	r3 := bkDel(t, b, "k")
	r4 := bkPut(t, b, "k", "4")
	r5 := bkPut(t, b, "other", "x")

	assert.Equal(t, `k="1" create=1 mod=1`, bkKV(bkGet(t, b, "k", r1)))
	assert.Equal(t, `k="2" create=1 mod=2`, bkKV(bkGet(t, b, "k", r2)))
	_, err := b.Get(t.Context(), "k", r3)
	require.ErrorIs(t, err, backend.ErrKeyNotFound, "deleted at r3")
	assert.Equal(t, `k="4" create=4 mod=4`, bkKV(bkGet(t, b, "k", r4)))
	assert.Equal(t, `k="4" create=4 mod=4`, bkKV(bkGet(t, b, "k", r5)))
	assert.Equal(t, `k="4" create=4 mod=4`, bkKV(bkGet(t, b, "k", 0)))
	_, err = b.Get(t.Context(), "other", r4)
	require.ErrorIs(t, err, backend.ErrKeyNotFound, "created after r4")

	res, err := b.Range(t.Context(), backend.RangeOptions{Revision: r2})
	require.NoError(t, err)
	assert.Equal(t, r2, res.Revision, "Range reports the revision it read at")
	assert.Equal(t, []string{`k="2" create=1 mod=2`}, bkKVs(res.KVs))
	res, err = b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, r5, res.Revision, "Range at revision 0 reads the current one")
}

// testBackendRangeMatchesModel writes random transactions, keeps a plain map of the
// state after each revision, and checks every past revision against it.
func testBackendRangeMatchesModel(t *testing.T, b backend.Backend) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"m/a", "m/b", "m/c", "m/d", "m/e", "m/f", "n/a", "n/b"}
	state := map[string]backend.KV{}
	models := []map[string]backend.KV{{}} // models[r] is the state at revision r
	for i := 0; i < 120; i++ {
		var ops []backend.Op
		for _, k := range rng.Perm(len(keys))[:1+rng.IntN(3)] {
			ops = append(ops, backend.Op{Key: keys[k], Value: fmt.Appendf(nil, "v%d", i), Delete: rng.IntN(4) == 0})
		}
		res := bkTxn(t, b, backend.Txn{Ops: ops})
		require.True(t, res.Succeeded)
		changed := false
		next := maps.Clone(state)
		for _, op := range ops {
			prev, ok := next[op.Key]
			switch {
			case op.Delete && ok:
				delete(next, op.Key)
				changed = true
			case !op.Delete:
				kv := backend.KV{Key: op.Key, Value: op.Value, CreateRevision: res.Revision, ModRevision: res.Revision}
				if ok {
					kv.CreateRevision = prev.CreateRevision
				}
				next[op.Key] = kv
				changed = true
			}
		}
		if !changed {
			require.Equal(t, int64(len(models)-1), res.Revision, "a txn that changes nothing creates no revision")
			continue
		}
		require.Equal(t, int64(len(models)), res.Revision)
		state = next
		models = append(models, next)
	}
	for rev := int64(1); rev < int64(len(models)); rev++ {
		want := bkModelKVs(models[rev])
		res, err := b.Range(t.Context(), backend.RangeOptions{Revision: rev})
		require.NoError(t, err)
		require.Equal(t, want, bkKVs(res.KVs), "Range at revision %d", rev)
		res, err = b.Range(t.Context(), backend.RangeOptions{Prefix: "n/", Revision: rev})
		require.NoError(t, err)
		wantN := []string{}
		for _, s := range want {
			if strings.HasPrefix(s, "n/") {
				wantN = append(wantN, s)
			}
		}
		require.Equal(t, wantN, bkKVs(res.KVs), "Range n/ at revision %d", rev)
		for _, k := range keys {
			kv, err := b.Get(t.Context(), k, rev)
			if m, ok := models[rev][k]; ok {
				require.NoError(t, err)
				require.Equal(t, bkKV(m), bkKV(kv), "Get %s at %d", k, rev)
			} else {
				require.ErrorIs(t, err, backend.ErrKeyNotFound, "Get %s at %d", k, rev)
			}
		}
	}
}

func bkModelKVs(m map[string]backend.KV) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, bkKV(m[k]))
	}
	return out
}

func testBackendFutureRevision(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	_, err := b.Get(ctx, "k", 1)
	require.ErrorIs(t, err, backend.ErrFutureRevision, "an empty backend is at revision 0")
	_, err = b.Range(ctx, backend.RangeOptions{Revision: 1})
	require.ErrorIs(t, err, backend.ErrFutureRevision)
	r := bkPut(t, b, "k", "1")
	_, err = b.Get(ctx, "k", r+1)
	require.ErrorIs(t, err, backend.ErrFutureRevision)
	_, err = b.Range(ctx, backend.RangeOptions{Revision: r + 1})
	require.ErrorIs(t, err, backend.ErrFutureRevision)
	_, err = b.Range(ctx, backend.RangeOptions{Revision: r + 1000})
	require.ErrorIs(t, err, backend.ErrFutureRevision)
	assert.Equal(t, `k="1" create=1 mod=1`, bkKV(bkGet(t, b, "k", r)))
}

func testBackendRangePrefixOrder(t *testing.T, b backend.Backend) {
	keys := []string{"a/2", "a/10", "a/1", "a", "ab", "a/", "b/1", "a/B", "a/\x00", "a/\xff", "a/é", "a/a"}
	for _, k := range keys {
		bkPut(t, b, k, "v")
	}
	rangeKeys := func(prefix string) []string {
		res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: prefix})
		require.NoError(t, err)
		assert.False(t, res.More)
		out := []string{}
		for _, kv := range res.KVs {
			out = append(out, kv.Key)
		}
		return out
	}
	under := func(prefix string) []string {
		out := []string{}
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		slices.Sort(out) // Go compares strings byte by byte
		return out
	}
	assert.Equal(t, []string{"a/", "a/\x00", "a/1", "a/10", "a/2", "a/B", "a/a", "a/é", "a/\xff"}, rangeKeys("a/"))
	assert.Equal(t, under("a/"), rangeKeys("a/"))
	assert.Equal(t, under(""), rangeKeys(""), "an empty prefix selects every key")
	assert.Equal(t, under("a"), rangeKeys("a"))
	assert.Equal(t, []string{}, rangeKeys("zz"))
	assert.Equal(t, []string{"a/1", "a/10"}, rangeKeys("a/1"))
}

func testBackendRangeStart(t *testing.T, b backend.Backend) {
	bkPut(t, b, "p/01", "v", "p/02", "v", "p/03", "v", "q/01", "v")
	keysOf := func(opts backend.RangeOptions) []string {
		res, err := b.Range(t.Context(), opts)
		require.NoError(t, err)
		out := []string{}
		for _, kv := range res.KVs {
			out = append(out, kv.Key)
		}
		return out
	}
	assert.Equal(t, []string{"p/02", "p/03"}, keysOf(backend.RangeOptions{Prefix: "p/", Start: "p/02"}), "Start is inclusive")
	assert.Equal(t, []string{"p/03"}, keysOf(backend.RangeOptions{Prefix: "p/", Start: "p/02\x00"}))
	assert.Equal(t, []string{"p/02", "p/03"}, keysOf(backend.RangeOptions{Prefix: "p/", Start: "p/015"}), "Start need not exist")
	assert.Equal(t, []string{}, keysOf(backend.RangeOptions{Prefix: "p/", Start: "p/04"}), "Range stays inside the prefix")
	assert.Equal(t, []string{"p/01", "p/02", "p/03"}, keysOf(backend.RangeOptions{Prefix: "p/", Start: "p/"}))
	assert.Equal(t, []string{"p/03", "q/01"}, keysOf(backend.RangeOptions{Start: "p/03"}), "with no prefix, Start alone")
}

func testBackendRangePaging(t *testing.T, b backend.Backend) {
	var kvs []string
	for i := range 10 {
		kvs = append(kvs, fmt.Sprintf("p/%02d", i), "v1")
	}
	bkPut(t, b, kvs...)
	bkPut(t, b, "q/0", "v1")
	first, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "p/", Limit: 3})
	require.NoError(t, err)
	require.Len(t, first.KVs, 3)
	require.True(t, first.More)
	at := first.Revision
	want, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "p/", Revision: at})
	require.NoError(t, err)

	// Writes between pages must not show in the pages read at the first page's revision.
	bkPut(t, b, "p/04", "v2")
	bkDel(t, b, "p/05")
	bkPut(t, b, "p/035", "v2", "p/10", "v2")

	got := first.KVs
	page := first
	for page.More {
		start := page.KVs[len(page.KVs)-1].Key + "\x00"
		page, err = b.Range(t.Context(), backend.RangeOptions{Prefix: "p/", Start: start, Limit: 3, Revision: at})
		require.NoError(t, err)
		require.Equal(t, at, page.Revision)
		require.LessOrEqual(t, len(page.KVs), 3)
		got = append(got, page.KVs...)
		require.Less(t, len(got), 100, "paging does not end")
	}
	assert.Equal(t, bkKVs(want.KVs), bkKVs(got), "pages read at one revision form that revision's list")
	assert.Len(t, got, 10)

	now, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "p/"})
	require.NoError(t, err)
	assert.Len(t, now.KVs, 11, "the current list has the later writes")
}

func testBackendRangeLimitMore(t *testing.T, b backend.Backend) {
	bkPut(t, b, "p/1", "v", "p/2", "v", "p/3", "v", "q", "v")
	for _, c := range []struct {
		limit int
		n     int
		more  bool
	}{{0, 3, false}, {1, 1, true}, {2, 2, true}, {3, 3, false}, {4, 3, false}} {
		res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "p/", Limit: c.limit})
		require.NoError(t, err)
		assert.Len(t, res.KVs, c.n, "limit %d", c.limit)
		assert.Equal(t, c.more, res.More, "More with limit %d: true only when more keys match", c.limit)
	}
	res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "p/", Start: "p/3", Limit: 1})
	require.NoError(t, err)
	assert.Len(t, res.KVs, 1)
	assert.False(t, res.More, "the last matching key is not followed by more, though q is")
}
