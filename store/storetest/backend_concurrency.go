package storetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func backendConcurrencyCases() []backendCase {
	return []backendCase{
		{"CASIncrementsUnderConcurrentWatchers", testBackendConcurrentCAS},
	}
}

// commit is one successful increment of the concurrency case.
type bkCommit struct {
	rev     int64
	counter string // the counter key incremented
	value   int    // its new value
	writer  int
}

// testBackendConcurrentCAS runs writers that increment a few counters by
// compare-and-swap, each increment writing a log key in the same transaction, while
// watchers record the stream and a reader checks that every snapshot is consistent.
// It checks: no lost update; each success creates the next revision; the watch
// streams are ordered, unique, gap-free, atomic per transaction, correctly filtered,
// with correct PrevKV; and a watch resumed from any seen revision replays the same
// suffix.
func testBackendConcurrentCAS(t *testing.T, b backend.Backend) {
	const (
		writers   = 8
		perWriter = 200
		counters  = 4
	)
	ctx := t.Context()
	var init []string
	for c := range counters {
		init = append(init, fmt.Sprintf("cnt/%d", c), "0")
	}
	r0 := bkPut(t, b, init...)
	start := r0 + 1
	final := r0 + writers*perWriter

	type stream struct {
		name   string
		opts   backend.WatchOptions
		expect int // number of events up to final
		got    []backend.Event
	}
	streams := []*stream{
		{name: "all", opts: backend.WatchOptions{StartRevision: start}, expect: 2 * writers * perWriter},
		{name: "counters", opts: backend.WatchOptions{Prefix: "cnt/", StartRevision: start}, expect: writers * perWriter},
		{name: "writer3", opts: backend.WatchOptions{Prefix: "log/3/", StartRevision: start}, expect: perWriter},
	}
	var watchWG sync.WaitGroup
	for _, s := range streams {
		w := bkWatch(t, b, s.opts)
		watchWG.Add(1)
		go func() {
			defer watchWG.Done()
			for len(s.got) < s.expect {
				select {
				case ev, ok := <-w.Events():
					if !ok {
						assert.Failf(t, "watch ended early", "%s: %v after %d events", s.name, w.Err(), len(s.got))
						return
					}
					s.got = append(s.got, ev)
				case <-time.After(bkHangTimeout):
					assert.Failf(t, "watch hangs", "%s: %d of %d events", s.name, len(s.got), s.expect)
					return
				}
			}
		}()
	}

	// A reader checks snapshots while the writers run: at revision r, r-r0 increments
	// have been made in all.
	stopReader := make(chan struct{})
	var readerWG sync.WaitGroup
	readerWG.Add(1)
	reads := 0
	go func() {
		defer readerWG.Done()
		for {
			select {
			case <-stopReader:
				return
			default:
			}
			res, err := b.Range(ctx, backend.RangeOptions{Prefix: "cnt/"})
			if !assert.NoError(t, err) {
				return
			}
			sum := 0
			for _, kv := range res.KVs {
				n, _ := strconv.Atoi(string(kv.Value))
				sum += n
			}
			if !assert.Equal(t, int(res.Revision-r0), sum, "snapshot at %d is consistent", res.Revision) {
				return
			}
			reads++
		}
	}()

	commits := make([][]bkCommit, writers)
	var retries [writers]int
	var writeWG sync.WaitGroup
	for g := range writers {
		writeWG.Add(1)
		go func() {
			defer writeWG.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range perWriter {
				key := fmt.Sprintf("cnt/%d", rng.IntN(counters))
				for {
					kv, err := b.Get(ctx, key, 0)
					if !assert.NoError(t, err) {
						return
					}
					n, err := strconv.Atoi(string(kv.Value))
					if !assert.NoError(t, err) {
						return
					}
					res, err := b.Txn(ctx, backend.Txn{
						Compares: []backend.Compare{{Key: key, ModRevision: kv.ModRevision}},
						Ops: []backend.Op{
							{Key: key, Value: []byte(strconv.Itoa(n + 1))},
							{Key: fmt.Sprintf("log/%d/%03d", g, i), Value: []byte(key)},
						},
					})
					if !assert.NoError(t, err) {
						return
					}
					if res.Succeeded {
						if c := commits[g]; len(c) > 0 && !assert.Greater(t, res.Revision, c[len(c)-1].rev, "revisions of one writer strictly increase") {
							return
						}
						commits[g] = append(commits[g], bkCommit{rev: res.Revision, counter: key, value: n + 1, writer: g})
						break
					}
					assert.Equal(t, 0, res.FailedCompare)
					retries[g]++
				}
			}
		}()
	}
	writeWG.Wait()
	close(stopReader)
	readerWG.Wait()
	watchWG.Wait()
	if t.Failed() {
		return
	}

	// No lost update, and every revision belongs to exactly one successful txn.
	byRev := map[int64]bkCommit{}
	perCounter := map[string]int{}
	totalRetries := 0
	for g := range writers {
		require.Len(t, commits[g], perWriter)
		for _, c := range commits[g] {
			_, dup := byRev[c.rev]
			require.False(t, dup, "two txns got revision %d", c.rev)
			byRev[c.rev] = c
			perCounter[c.counter]++
		}
		totalRetries += retries[g]
	}
	for r := start; r <= final; r++ {
		require.Contains(t, byRev, r, "revision %d belongs to no successful txn", r)
	}
	require.Equal(t, final, bkRevision(t, b))
	sum := 0
	for c := range counters {
		key := fmt.Sprintf("cnt/%d", c)
		n, err := strconv.Atoi(string(bkGet(t, b, key, 0).Value))
		require.NoError(t, err)
		require.Equal(t, perCounter[key], n, "%s: no lost update", key)
		sum += n
	}
	require.Equal(t, writers*perWriter, sum)
	t.Logf("%d increments by %d writers, %d CAS retries, %d consistent snapshot reads", sum, writers, totalRetries, reads)

	// The full stream: two events per revision, in order, no gap, no duplicate.
	all := streams[0].got
	for i, ev := range all {
		rev := start + int64(i/2)
		c := byRev[rev]
		require.Equal(t, rev, ev.Revision, "event %d: ordered, gap-free, both events of a txn together", i)
		require.Equal(t, backend.EventPut, ev.Type)
		require.Equal(t, rev, ev.KV.ModRevision)
		if i%2 == 0 { // the counter, first op of the txn
			require.Equal(t, c.counter, ev.KV.Key, "event %d", i)
			require.Equal(t, strconv.Itoa(c.value), string(ev.KV.Value))
			require.NotNil(t, ev.PrevKV)
			require.Equal(t, strconv.Itoa(c.value-1), string(ev.PrevKV.Value), "PrevKV is the value replaced")
			require.Less(t, ev.PrevKV.ModRevision, rev)
		} else {
			require.Equal(t, c.counter, string(ev.KV.Value))
			require.True(t, strings.HasPrefix(ev.KV.Key, fmt.Sprintf("log/%d/", c.writer)), "event %d: %s", i, ev.KV.Key)
			require.Nil(t, ev.PrevKV)
		}
	}
	// The filtered streams: exactly the matching events of the full stream.
	for _, s := range streams[1:] {
		var want []string
		for _, ev := range all {
			if strings.HasPrefix(ev.KV.Key, s.opts.Prefix) {
				want = append(want, bkEv(ev))
			}
		}
		got := make([]string, 0, len(s.got))
		for _, ev := range s.got {
			got = append(got, bkEv(ev))
		}
		require.Equal(t, want, got, "stream %s", s.name)
	}

	// Resumable: a watch from any seen revision replays the same suffix.
	for _, i := range []int{0, 1, 2, 501, 1000, 1777, 2998, len(all) - 2} {
		from := all[i].Revision
		first := i - i%2 // the first event of that revision
		w, err := b.Watch(ctx, backend.WatchOptions{StartRevision: from})
		require.NoError(t, err, "watch from seen revision %d", from)
		got := bkNextN(t, w, len(all)-first)
		w.Stop()
		want := make([]string, 0, len(all)-first)
		for _, ev := range all[first:] {
			want = append(want, bkEv(ev))
		}
		require.Equal(t, want, got, "resumed from %d", from)
	}
}
