package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
)

// rawClient returns a client of the shared etcd, closed when the test ends.
func rawClient(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: sharedEndpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func put(t *testing.T, b backend.Backend, kvs ...string) int64 {
	t.Helper()
	var ops []backend.Op
	for i := 0; i < len(kvs); i += 2 {
		ops = append(ops, backend.Op{Key: kvs[i], Value: []byte(kvs[i+1])})
	}
	res, err := b.Txn(t.Context(), backend.Txn{Ops: ops})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	return res.Revision
}

func next(t *testing.T, w backend.Watcher) backend.Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		require.True(t, ok, "watch ended: %v", w.Err())
		return ev
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no event")
		return backend.Event{}
	}
}

func keysOf(kvs []backend.KV) []string {
	out := []string{}
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

func TestPrefix_KeysStayUnderTheirPrefix(t *testing.T) {
	root := testPrefix()
	cli := rawClient(t)
	a := newBackend(t, etcd.Options{Prefix: root + "a/"})
	b := newBackend(t, etcd.Options{Prefix: root + "b/"})
	wa, err := a.Watch(t.Context(), backend.WatchOptions{StartRevision: 1})
	require.NoError(t, err)
	defer wa.Stop()

	// Neighbours of a's prefix in etcd's key order, written behind its back.
	for _, k := range []string{root + "a", root + "a.", root + "a0", root + "a0/x"} {
		_, err := cli.Put(t.Context(), k, "outside")
		require.NoError(t, err)
	}
	put(t, b, "k1", "b", "x", "b")
	r := put(t, a, "k1", "a", "\x00", "a", "\xff", "a")

	all, err := a.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"\x00", "k1", "\xff"}, keysOf(all.KVs), "a range of everything holds only a's keys, without the prefix")
	kv, err := a.Get(t.Context(), "k1", 0)
	require.NoError(t, err)
	assert.Equal(t, "a", string(kv.Value))
	_, err = a.Get(t.Context(), "x", 0)
	require.ErrorIs(t, err, backend.ErrKeyNotFound, "b's key is not a's")
	res, err := a.Txn(t.Context(), backend.Txn{Compares: []backend.Compare{{Key: "x", ModRevision: 0}}})
	require.NoError(t, err)
	assert.True(t, res.Succeeded, "b's key is absent for a's compares")

	raw, err := cli.Get(t.Context(), root+"a/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	var rawKeys []string
	for _, kv := range raw.Kvs {
		rawKeys = append(rawKeys, string(kv.Key))
	}
	assert.Equal(t, []string{root + "a/", root + "a/\x00", root + "a/k1", root + "a/\xff"}, rawKeys,
		"in etcd the keys are under the prefix, next to the key of the prefix itself (the base)")

	var got []string
	for range 3 {
		ev := next(t, wa)
		got = append(got, fmt.Sprintf("%s %q @%d", ev.Type, ev.KV.Key, ev.Revision))
	}
	assert.Equal(t, []string{
		fmt.Sprintf("PUT \"k1\" @%d", r), fmt.Sprintf("PUT \"\\x00\" @%d", r), fmt.Sprintf("PUT \"\\xff\" @%d", r),
	}, got, "a's watch of everything sees only a's writes")
	select {
	case ev := <-wa.Events():
		assert.Failf(t, "an event from outside the prefix", "%+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestNew_BackendsOnOnePrefixShareRevisions(t *testing.T) {
	prefix := testPrefix()
	a := newBackend(t, etcd.Options{Prefix: prefix})
	b := newBackend(t, etcd.Options{Prefix: prefix})
	require.Equal(t, etcd.Base(a), etcd.Base(b), "the base is recorded once, in etcd")

	w, err := b.Watch(t.Context(), backend.WatchOptions{})
	require.NoError(t, err)
	defer w.Stop()
	r := put(t, a, "k", "1")
	assert.Equal(t, int64(1), r, "revisions of a prefix start at 1")
	kv, err := b.Get(t.Context(), "k", 0)
	require.NoError(t, err)
	assert.Equal(t, backend.KV{Key: "k", Value: []byte("1"), CreateRevision: r, ModRevision: r}, kv)
	ev := next(t, w)
	assert.Equal(t, r, ev.Revision, "a watcher of the other backend sees the write at the same revision")

	res, err := b.Txn(t.Context(), backend.Txn{
		Compares: []backend.Compare{{Key: "k", ModRevision: r}},
		Ops:      []backend.Op{{Key: "k", Value: []byte("2")}},
	})
	require.NoError(t, err)
	assert.True(t, res.Succeeded, "a revision read through one backend is a valid precondition on the other")
	rev, err := a.Revision(t.Context())
	require.NoError(t, err)
	assert.Equal(t, res.Revision, rev)
}

func TestNew_KeysWrittenBeforeAnyBackendKeepEtcdRevisions(t *testing.T) {
	prefix := testPrefix()
	cli := rawClient(t)
	raw, err := cli.Put(t.Context(), prefix+"old", "v")
	require.NoError(t, err)
	for i := range 2 {
		b := newBackend(t, etcd.Options{Prefix: prefix})
		assert.Zero(t, etcd.Base(b), "backend %d: the revisions under a prefix written without a base are etcd's", i)
		kv, err := b.Get(t.Context(), "old", 0)
		require.NoError(t, err)
		assert.Equal(t, raw.Header.Revision, kv.ModRevision)
	}
}

func TestNew_Refuses(t *testing.T) {
	cli := rawClient(t)
	taken := testPrefix()
	_, err := cli.Put(t.Context(), taken, "not a number")
	require.NoError(t, err)
	port, err := freePort()
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		opts etcd.Options
		want string
	}{
		{"NoClientAndNoEndpoints", etcd.Options{Prefix: "/p/"}, "need a Client or Endpoints"},
		{"PrefixKeyHoldsSomethingElse", etcd.Options{Endpoints: sharedEndpoints, Prefix: taken}, "not a revision base"},
		{"UnreachableEndpoint", etcd.Options{Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", port)},
			DialTimeout: 300 * time.Millisecond, Prefix: "/p/"}, "set up prefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := etcd.New(t.Context(), c.opts)
			require.Error(t, err)
			assert.Nil(t, b)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestNew_ZeroPrefixIsTheDefault(t *testing.T) {
	b, err := etcd.New(t.Context(), etcd.Options{Endpoints: sharedEndpoints})
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, etcd.DefaultPrefix, b.Prefix())
}

func TestClose_ClosesOnlyAClientItDialed(t *testing.T) {
	t.Run("Borrowed", func(t *testing.T) {
		cli := rawClient(t)
		b := newBackend(t, etcd.Options{Client: cli})
		put(t, b, "k", "v")
		require.NoError(t, b.Close())
		_, err := b.Get(t.Context(), "k", 0)
		require.ErrorIs(t, err, backend.ErrClosed)
		_, err = cli.Get(t.Context(), b.Prefix()+"k")
		assert.NoError(t, err, "the owner's client still works")
	})
	t.Run("Dialed", func(t *testing.T) {
		b := newBackend(t, etcd.Options{})
		cli := b.Client()
		require.NoError(t, b.Close())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := cli.Get(ctx, b.Prefix())
		assert.Error(t, err, "the backend closed the client it dialed")
	})
}

func TestTxn_TooLargeIsAClearError(t *testing.T) {
	b := newBackend(t, etcd.Options{})
	rev := put(t, b, "k", "v")
	manyOps := make([]backend.Op, 129) // etcd's --max-txn-ops is 128 by default
	for i := range manyOps {
		manyOps[i] = backend.Op{Key: fmt.Sprintf("m/%03d", i), Value: []byte("v")}
	}
	for _, c := range []struct {
		name string
		txn  backend.Txn
	}{
		{"AboveTheServerRequestLimit", backend.Txn{Ops: []backend.Op{{Key: "big", Value: make([]byte, 1600<<10)}}}},
		{"AboveTheClientMessageLimit", backend.Txn{Ops: []backend.Op{{Key: "big", Value: make([]byte, 3<<20)}}}},
		{"TooManyOps", backend.Txn{Ops: manyOps}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.Txn(t.Context(), c.txn)
			require.ErrorIs(t, err, etcd.ErrTooLarge)
			require.ErrorIs(t, err, backend.ErrTxnTooLarge)
			require.ErrorIs(t, err, backend.ErrInvalidArgument)
			cur, err := b.Revision(t.Context())
			require.NoError(t, err)
			assert.Equal(t, rev, cur, "nothing was written")
		})
	}
}

// TestWatch_SlowReaderResumesFromEtcd checks the read-ahead bound: a watcher whose
// reader does not read lets go of etcd after WatchBuffer events and picks up from
// etcd's history, without a gap, once the reader is back.
func TestWatch_SlowReaderResumesFromEtcd(t *testing.T) {
	b := newBackend(t, etcd.Options{WatchBuffer: 4})
	w, err := b.Watch(t.Context(), backend.WatchOptions{Prefix: "k/"})
	require.NoError(t, err)
	defer w.Stop()
	const writes = 200
	var first int64
	for i := range writes {
		r := put(t, b, fmt.Sprintf("k/%d", i%7), fmt.Sprint(i), "other", "x")
		if i == 0 {
			first = r
		}
	}
	for i := range writes {
		ev := next(t, w)
		require.Equal(t, first+int64(i), ev.Revision, "event %d: no gap, no duplicate", i)
		require.Equal(t, fmt.Sprintf("k/%d", i%7), ev.KV.Key)
	}
	r := put(t, b, "k/last", "x")
	assert.Equal(t, r, next(t, w).Revision, "the watch goes on live")
}

func TestWatch_SlowReaderBehindCompactionEndsCompacted(t *testing.T) {
	b := newBackend(t, etcd.Options{WatchBuffer: 4})
	w, err := b.Watch(t.Context(), backend.WatchOptions{})
	require.NoError(t, err)
	defer w.Stop()
	var first, last int64
	for i := range 100 {
		last = put(t, b, "k", fmt.Sprint(i))
		if i == 0 {
			first = last
		}
	}
	require.NoError(t, b.Compact(t.Context(), last))
	want := first
	for ev := range w.Events() {
		require.Equal(t, want, ev.Revision, "what is delivered has no gap")
		want++
	}
	require.ErrorIs(t, w.Err(), backend.ErrCompacted)
	assert.Less(t, want, last, "the watcher had let go of etcd, and could not resume past the compaction")
}

// TestWatch_ProgressCoversWritesByOthers checks that a watcher that asked for progress
// reports revisions written by other processes outside its prefix, which no write
// through its own backend announces.
func TestWatch_ProgressCoversWritesByOthers(t *testing.T) {
	prefix := testPrefix()
	a := newBackend(t, etcd.Options{Prefix: prefix, ProgressInterval: 50 * time.Millisecond})
	other := newBackend(t, etcd.Options{Prefix: prefix})
	cli := rawClient(t)
	w, err := a.Watch(t.Context(), backend.WatchOptions{Prefix: "a/", ProgressNotify: true})
	require.NoError(t, err)
	defer w.Stop()
	waitProgress := func(rev int64) {
		t.Helper()
		for {
			ev := next(t, w)
			require.Equal(t, backend.EventProgress, ev.Type, "no key under a/ was written")
			if ev.Revision >= rev {
				require.Equal(t, rev, ev.Revision)
				return
			}
		}
	}
	r := put(t, other, "b/1", "x")
	waitProgress(r)
	raw, err := cli.Put(t.Context(), prefix[:len(prefix)-1]+"-elsewhere", "x")
	require.NoError(t, err)
	waitProgress(raw.Header.Revision - etcd.Base(a))
	r = put(t, other, "a/1", "x")
	ev := next(t, w)
	assert.Equal(t, backend.EventPut, ev.Type)
	assert.Equal(t, r, ev.Revision)
}

func TestWatch_EventWithoutItsPrevKVEndsTheWatch(t *testing.T) {
	b := newBackend(t, etcd.Options{})
	base, p := etcd.Base(b), b.Prefix()
	kv := func(key string, create, mod, version int64) *mvccpb.KeyValue {
		return &mvccpb.KeyValue{Key: []byte(p + key), Value: []byte("v"), CreateRevision: base + create, ModRevision: base + mod, Version: version}
	}
	created := &clientv3.Event{Type: mvccpb.PUT, Kv: kv("a", 3, 3, 1)}
	updated := &clientv3.Event{Type: mvccpb.PUT, Kv: kv("b", 1, 4, 2), PrevKv: kv("b", 1, 1, 1)}
	updatedLost := &clientv3.Event{Type: mvccpb.PUT, Kv: kv("c", 1, 4, 3)}
	deleted := &clientv3.Event{Type: mvccpb.DELETE, Kv: &mvccpb.KeyValue{Key: []byte(p + "d"), ModRevision: base + 5}, PrevKv: kv("d", 1, 2, 2)}
	deletedLost := &clientv3.Event{Type: mvccpb.DELETE, Kv: &mvccpb.KeyValue{Key: []byte(p + "d"), ModRevision: base + 5}}
	for _, c := range []struct {
		name string
		in   []*clientv3.Event
		revs []int64 // of the events kept
		lost bool
	}{
		{"CreateNeedsNoPrevKV", []*clientv3.Event{created}, []int64{3}, false},
		{"UpdateAndDeleteWithPrevKV", []*clientv3.Event{created, updated, deleted}, []int64{3, 4, 5}, false},
		{"UpdateWithoutPrevKVDropsItsWholeRevision", []*clientv3.Event{created, updated, updatedLost, deleted}, []int64{3}, true},
		{"DeleteWithoutPrevKV", []*clientv3.Event{created, updated, deletedLost}, []int64{3, 4}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := etcd.ConvertEvents(b, c.in)
			revs := []int64{}
			for _, ev := range evs {
				revs = append(revs, ev.Revision)
			}
			assert.Equal(t, c.revs, revs)
			if c.lost {
				require.ErrorIs(t, err, backend.ErrCompacted)
			} else {
				require.NoError(t, err)
			}
		})
	}
	evs, err := etcd.ConvertEvents(b, []*clientv3.Event{updated, deleted})
	require.NoError(t, err)
	assert.Equal(t, backend.Event{Type: backend.EventPut, Revision: 4,
		KV:     backend.KV{Key: "b", Value: []byte("v"), CreateRevision: 1, ModRevision: 4},
		PrevKV: &backend.KV{Key: "b", Value: []byte("v"), CreateRevision: 1, ModRevision: 1}}, evs[0])
	assert.Equal(t, backend.Event{Type: backend.EventDelete, Revision: 5,
		KV:     backend.KV{Key: "d", ModRevision: 5},
		PrevKV: &backend.KV{Key: "d", Value: []byte("v"), CreateRevision: 1, ModRevision: 2}}, evs[1])
}

// TestCompactRevision_FollowsEtcdCompaction compacts etcd behind the backend's back,
// as etcd's auto-compaction does: the backend's compaction point is one above etcd's.
func TestCompactRevision_FollowsEtcdCompaction(t *testing.T) {
	b := newBackend(t, etcd.Options{})
	cli := rawClient(t)
	ctx := t.Context()
	got, err := b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Zero(t, got, "a backend never written")
	for i := range 10 {
		put(t, b, "k", fmt.Sprint(i))
	}
	got, err = b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got, "nothing compacted")

	_, err = cli.Compact(ctx, etcd.Base(b)+4)
	require.NoError(t, err)
	got, err = b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(5), got)
	_, err = b.Get(ctx, "k", 4)
	require.ErrorIs(t, err, backend.ErrCompacted, "etcd reads revision 4, the backend does not")
	kv, err := b.Get(ctx, "k", 5)
	require.NoError(t, err)
	assert.Equal(t, "4", string(kv.Value))
	_, err = b.Watch(ctx, backend.WatchOptions{StartRevision: 4})
	require.ErrorIs(t, err, backend.ErrCompacted)
	w, err := b.Watch(ctx, backend.WatchOptions{StartRevision: 5})
	require.NoError(t, err)
	defer w.Stop()
	ev := next(t, w)
	require.NotNil(t, ev.PrevKV, "the event at the compaction point has its PrevKV")
	assert.Equal(t, "3", string(ev.PrevKV.Value))

	require.NoError(t, b.Compact(ctx, 8))
	got, err = b.CompactRevision(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(8), got)
	require.NoError(t, b.Compact(ctx, 6), "compacting below the compaction point does nothing")
}

func TestErrors_ContextEnds(t *testing.T) {
	b := newBackend(t, etcd.Options{})
	put(t, b, "k", "v")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, call := range map[string]func() error{
		"Get":             func() error { _, err := b.Get(ctx, "k", 0); return err },
		"Range":           func() error { _, err := b.Range(ctx, backend.RangeOptions{}); return err },
		"Txn":             func() error { _, err := b.Txn(ctx, backend.Txn{}); return err },
		"Watch":           func() error { _, err := b.Watch(ctx, backend.WatchOptions{}); return err },
		"Revision":        func() error { _, err := b.Revision(ctx); return err },
		"Compact":         func() error { return b.Compact(ctx, 1) },
		"CompactRevision": func() error { _, err := b.CompactRevision(ctx); return err },
	} {
		assert.ErrorIs(t, call(), context.Canceled, name)
	}
}
