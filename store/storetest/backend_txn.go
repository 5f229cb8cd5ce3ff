package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendTxnCases() []backendCase {
	return []backendCase{
		{"RevisionStartsAtZero", testBackendRevisionStartsAtZero},
		{"EachChangeAddsExactlyOneRevision", testBackendEachChangeAddsOneRevision},
		{"FailedCompareChangesNothing", testBackendFailedCompareChangesNothing},
		{"CompareModRevisionZeroMeansAbsent", testBackendCompareAbsent},
		{"MultiKeyTxnIsAtomic", testBackendMultiKeyTxnIsAtomic},
		{"TxnThatChangesNothingCreatesNoRevision", testBackendNoopTxn},
		{"NilValueStoresEmptyValue", testBackendNilValue},
		{"InvalidArgumentsAreRejected", testBackendInvalidArguments},
		{"PrefixCompareGuardsARange", testBackendPrefixCompare},
	}
}

// testBackendPrefixCompare checks the prefix form of Compare: it holds while nothing
// under the prefix was created or changed after its revision, and fails once
// something was, also when the transaction's own compare on a key holds.
func testBackendPrefixCompare(t *testing.T, b backend.Backend) {
	put := func(k, v string) backend.Op { return backend.Op{Key: k, Value: []byte(v)} }
	guard := func(prefix string, rev int64) backend.Compare {
		return backend.Compare{Key: prefix, ModRevision: rev, Prefix: true}
	}
	res := bkTxn(t, b, backend.Txn{Compares: []backend.Compare{guard("/ns/a/", 0)}, Ops: []backend.Op{put("/other", "1")}})
	require.True(t, res.Succeeded, "an empty range holds at revision 0")
	r1 := bkTxn(t, b, backend.Txn{Ops: []backend.Op{put("/ns/a/x", "1"), put("/ns/b/x", "1")}}).Revision

	res = bkTxn(t, b, backend.Txn{Compares: []backend.Compare{guard("/ns/a/", r1)}, Ops: []backend.Op{put("/marker", "1")}})
	require.True(t, res.Succeeded, "nothing under the prefix after r1")
	res = bkTxn(t, b, backend.Txn{Compares: []backend.Compare{guard("/ns/a/", r1-1)}, Ops: []backend.Op{put("/marker", "2")}})
	require.False(t, res.Succeeded, "/ns/a/x was written at r1")
	assert.Equal(t, 0, res.FailedCompare)

	at := bkRevision(t, b)
	r2 := bkTxn(t, b, backend.Txn{Ops: []backend.Op{put("/ns/b/y", "1")}}).Revision
	res = bkTxn(t, b, backend.Txn{Compares: []backend.Compare{guard("/ns/a/", at)}, Ops: []backend.Op{put("/marker", "3")}})
	require.True(t, res.Succeeded, "a write under another prefix (r%d) does not count", r2)

	bkTxn(t, b, backend.Txn{Ops: []backend.Op{put("/ns/a/new", "1")}})
	mk := bkGet(t, b, "/marker", 0)
	res = bkTxn(t, b, backend.Txn{
		Compares: []backend.Compare{{Key: "/marker", ModRevision: mk.ModRevision}, guard("/ns/a/", at)},
		Ops:      []backend.Op{put("/marker", "4")}})
	require.False(t, res.Succeeded, "a key created under the prefix after the guard's revision")
	assert.Equal(t, 1, res.FailedCompare)
	assert.Equal(t, "3", string(bkGet(t, b, "/marker", 0).Value), "a failed guard writes nothing")
}

func testBackendRevisionStartsAtZero(t *testing.T, b backend.Backend) {
	assert.Equal(t, int64(0), bkRevision(t, b))
	res, err := b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Empty(t, res.KVs)
	assert.False(t, res.More)
	assert.Equal(t, int64(0), res.Revision)
	_, err = b.Get(t.Context(), "k", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound)
}

func testBackendEachChangeAddsOneRevision(t *testing.T, b backend.Backend) {
	var last int64
	step := func(what string, txn backend.Txn) int64 {
		t.Helper()
		res := bkTxn(t, b, txn)
		require.True(t, res.Succeeded, what)
		require.Equal(t, -1, res.FailedCompare, what)
		require.Equal(t, last+1, res.Revision, "%s: revision must grow by exactly 1", what)
		require.Equal(t, res.Revision, bkRevision(t, b), what)
		last = res.Revision
		return last
	}
	put := func(k, v string) backend.Op { return backend.Op{Key: k, Value: []byte(v)} }
	drop := func(k string) backend.Op { return backend.Op{Key: k, Delete: true} }

	r1 := step("create a", backend.Txn{Ops: []backend.Op{put("a", "1")}})
	r2 := step("create b and c", backend.Txn{Ops: []backend.Op{put("b", "1"), put("c", "1")}})
	r3 := step("update a", backend.Txn{Ops: []backend.Op{put("a", "2")}})
	step("delete b", backend.Txn{Ops: []backend.Op{drop("b")}})
	r5 := step("delete c, create d", backend.Txn{Ops: []backend.Op{drop("c"), put("d", "1")}})
	r6 := step("recreate b", backend.Txn{Ops: []backend.Op{put("b", "2")}})

	assert.Equal(t, `a="2" create=1 mod=3`, bkKV(bkGet(t, b, "a", 0)), "update keeps CreateRevision")
	assert.Equal(t, r1, bkGet(t, b, "a", 0).CreateRevision)
	assert.Equal(t, r3, bkGet(t, b, "a", 0).ModRevision)
	assert.Equal(t, r5, bkGet(t, b, "d", 0).ModRevision)
	assert.Equal(t, r6, bkGet(t, b, "b", 0).CreateRevision, "a recreated key has a new CreateRevision")
	assert.NotEqual(t, r2, bkGet(t, b, "b", 0).CreateRevision)
	_, err := b.Get(t.Context(), "c", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound)
}

func testBackendFailedCompareChangesNothing(t *testing.T, b backend.Backend) {
	r1 := bkPut(t, b, "a", "1")
	r2 := bkPut(t, b, "b", "1")
	before, err := b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)

	res := bkTxn(t, b, backend.Txn{
		Compares: []backend.Compare{{Key: "a", ModRevision: r1}, {Key: "b", ModRevision: r1}},
		Ops: []backend.Op{
			{Key: "a", Value: []byte("x")}, {Key: "b", Delete: true}, {Key: "c", Value: []byte("x")},
		},
	})
	assert.False(t, res.Succeeded)
	assert.Equal(t, 1, res.FailedCompare, "the index of the first compare that failed")
	assert.Equal(t, r2, res.Revision, "a failed txn reports the current revision")

	res = bkTxn(t, b, backend.Txn{
		Compares: []backend.Compare{{Key: "a", ModRevision: r2 + 100}, {Key: "b", ModRevision: r1}},
		Ops:      []backend.Op{{Key: "c", Value: []byte("x")}},
	})
	assert.False(t, res.Succeeded)
	assert.Equal(t, 0, res.FailedCompare)

	assert.Equal(t, r2, bkRevision(t, b), "a failed txn creates no revision")
	after, err := b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, bkKVs(before.KVs), bkKVs(after.KVs), "a failed txn changes no key")
}

func testBackendCompareAbsent(t *testing.T, b backend.Backend) {
	createIfAbsent := func(k string) backend.TxnResult {
		return bkTxn(t, b, backend.Txn{
			Compares: []backend.Compare{{Key: k, ModRevision: 0}},
			Ops:      []backend.Op{{Key: k, Value: []byte("v")}},
		})
	}
	res := createIfAbsent("k")
	require.True(t, res.Succeeded, "ModRevision 0 holds for an absent key")
	created := res.Revision

	res = createIfAbsent("k")
	assert.False(t, res.Succeeded, "ModRevision 0 fails for a present key")
	assert.Equal(t, 0, res.FailedCompare)
	assert.Equal(t, created, res.Revision)

	res = bkTxn(t, b, backend.Txn{Compares: []backend.Compare{{Key: "missing", ModRevision: created}}})
	assert.False(t, res.Succeeded, "an absent key has ModRevision 0, not any other")

	bkDel(t, b, "k")
	res = createIfAbsent("k")
	assert.True(t, res.Succeeded, "a deleted key is absent again")
}

func testBackendMultiKeyTxnIsAtomic(t *testing.T, b backend.Backend) {
	rev := bkPut(t, b, "a", "1", "b", "1", "c", "1")
	for _, k := range []string{"a", "b", "c"} {
		kv := bkGet(t, b, k, 0)
		assert.Equal(t, rev, kv.ModRevision, "every key of a txn gets its revision")
		assert.Equal(t, rev, kv.CreateRevision)
	}

	res := bkTxn(t, b, backend.Txn{
		Compares: []backend.Compare{{Key: "a", ModRevision: rev}, {Key: "z", ModRevision: rev}},
		Ops: []backend.Op{
			{Key: "a", Value: []byte("2")}, {Key: "b", Delete: true}, {Key: "d", Value: []byte("2")},
		},
	})
	require.False(t, res.Succeeded)
	all, err := b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{`a="1" create=1 mod=1`, `b="1" create=1 mod=1`, `c="1" create=1 mod=1`}, bkKVs(all.KVs),
		"no op of a failed txn is applied")

	res = bkTxn(t, b, backend.Txn{
		Compares: []backend.Compare{{Key: "a", ModRevision: rev}},
		Ops: []backend.Op{
			{Key: "a", Value: []byte("2")}, {Key: "b", Delete: true}, {Key: "d", Value: []byte("2")},
		},
	})
	require.True(t, res.Succeeded)
	require.Equal(t, rev+1, res.Revision)
	all, err = b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{`a="2" create=1 mod=2`, `c="1" create=1 mod=1`, `d="2" create=2 mod=2`}, bkKVs(all.KVs),
		"every op of a successful txn is applied at one revision")
	assert.Equal(t, res.Revision, all.Revision)
}

func testBackendNoopTxn(t *testing.T, b backend.Backend) {
	rev := bkPut(t, b, "x", "1")
	for _, c := range []struct {
		name string
		txn  backend.Txn
	}{
		{"DeleteOfAbsentKey", backend.Txn{Ops: []backend.Op{{Key: "nope", Delete: true}}}},
		{"NoOps", backend.Txn{}},
		{"ComparesOnly", backend.Txn{Compares: []backend.Compare{{Key: "x", ModRevision: rev}}}},
	} {
		res := bkTxn(t, b, c.txn)
		assert.True(t, res.Succeeded, c.name)
		assert.Equal(t, -1, res.FailedCompare, c.name)
		assert.Equal(t, rev, res.Revision, "%s reports the current revision", c.name)
		assert.Equal(t, rev, bkRevision(t, b), "%s creates no revision", c.name)
	}
	r2 := bkTxn(t, b, backend.Txn{Ops: []backend.Op{{Key: "nope", Delete: true}, {Key: "y", Value: []byte("1")}}})
	assert.Equal(t, rev+1, r2.Revision, "a txn with one real change creates one revision")
	_, err := b.Get(t.Context(), "nope", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound)
}

func testBackendNilValue(t *testing.T, b backend.Backend) {
	res := bkTxn(t, b, backend.Txn{Ops: []backend.Op{{Key: "k"}}})
	require.True(t, res.Succeeded)
	kv := bkGet(t, b, "k", 0)
	assert.Empty(t, kv.Value)
	assert.Equal(t, res.Revision, kv.ModRevision)
}

func testBackendInvalidArguments(t *testing.T, b backend.Backend) {
	bkPut(t, b, "p/a", "1")
	rev := bkRevision(t, b)
	ctx := t.Context()
	calls := []struct {
		name string
		call func() error
	}{
		{"GetEmptyKey", func() error { _, err := b.Get(ctx, "", 0); return err }},
		{"GetNegativeRevision", func() error { _, err := b.Get(ctx, "p/a", -1); return err }},
		{"RangeNegativeLimit", func() error { _, err := b.Range(ctx, backend.RangeOptions{Limit: -1}); return err }},
		{"RangeNegativeRevision", func() error { _, err := b.Range(ctx, backend.RangeOptions{Revision: -1}); return err }},
		{"RangeStartOutsidePrefix", func() error {
			_, err := b.Range(ctx, backend.RangeOptions{Prefix: "p/", Start: "q/a"})
			return err
		}},
		{"RangeStartBeforePrefix", func() error {
			_, err := b.Range(ctx, backend.RangeOptions{Prefix: "p/", Start: "a"})
			return err
		}},
		{"TxnOpEmptyKey", func() error {
			_, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "p/b", Value: []byte("1")}, {Key: "", Value: []byte("1")}}})
			return err
		}},
		{"TxnTwoOpsOnOneKey", func() error {
			_, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "p/b", Value: []byte("1")}, {Key: "p/b", Delete: true}}})
			return err
		}},
		{"TxnTwoOpsOnOneKeyAmongMany", func() error {
			var ops []backend.Op
			for i := range 20 {
				ops = append(ops, backend.Op{Key: fmt.Sprintf("p/m%02d", i)})
			}
			ops = append(ops, backend.Op{Key: "p/m07", Delete: true})
			_, err := b.Txn(ctx, backend.Txn{Ops: ops})
			return err
		}},
		{"TxnCompareEmptyKey", func() error {
			_, err := b.Txn(ctx, backend.Txn{Compares: []backend.Compare{{Key: ""}}, Ops: []backend.Op{{Key: "p/b"}}})
			return err
		}},
		{"TxnCompareNegativeRevision", func() error {
			_, err := b.Txn(ctx, backend.Txn{Compares: []backend.Compare{{Key: "p/a", ModRevision: -1}}, Ops: []backend.Op{{Key: "p/b"}}})
			return err
		}},
		{"WatchNegativeStartRevision", func() error {
			w, err := b.Watch(ctx, backend.WatchOptions{StartRevision: -1})
			if w != nil {
				w.Stop()
			}
			return err
		}},
	}
	if c, ok := b.(backend.Compactor); ok {
		calls = append(calls, struct {
			name string
			call func() error
		}{"CompactNegativeRevision", func() error { return c.Compact(ctx, -1) }})
	}
	for _, c := range calls {
		assert.ErrorIs(t, c.call(), backend.ErrInvalidArgument, c.name)
	}
	assert.Equal(t, rev, bkRevision(t, b), "rejected calls change nothing")
	res, err := b.Range(ctx, backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{`p/a="1" create=1 mod=1`}, bkKVs(res.KVs), "rejected txns change nothing")
}
