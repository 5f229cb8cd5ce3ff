package storetest

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// fanoutCases are the stress cases of watch fan-out.
func fanoutCases() []storeCase {
	return []storeCase{
		{name: "REL-WATCH-FANOUT every watcher of many gets every event in order while one stalls",
			opts: func(o *store.Options) { o.WatchBuffer = 16 }, run: testWatchFanout},
	}
}

// seenEvent is what a fan-out watcher keeps of an event.
type seenEvent struct {
	rv   int64
	name string
}

// fanoutWatcher is a watcher of every instance that, like a client, resumes from the
// last resourceVersion it received when its watch ends with 410 Expired.
type fanoutWatcher struct {
	w       *store.Watcher
	lastRV  int64
	got     []seenEvent
	resumes int
}

// read takes events until it has want of them, resuming as needed; false (after
// failing t) when the watch ends otherwise or stays silent for a minute.
func (fw *fanoutWatcher) read(t *testing.T, h *Harness, want int) bool {
	silent := time.NewTimer(time.Minute)
	defer silent.Stop()
	for len(fw.got) < want {
		silent.Reset(time.Minute)
		select {
		case ev, ok := <-fw.w.ResultChan():
			if !assert.True(t, ok, "the watch ended without an error") {
				return false
			}
			switch ev.Type {
			case store.Error:
				if !assert.Equal(t, resource.ReasonExpired, resource.StatusOf(ev.Err).Reason, "%v", ev.Err) {
					return false
				}
				fw.w.Stop()
				fw.resumes++
				w, err := h.S.Watch(h.Ctx, Instance("", ""), store.WatchOptions{
					ResourceVersion: strconv.FormatInt(fw.lastRV, 10), SharedObjects: true})
				if !assert.NoError(t, err) {
					return false
				}
				fw.w = w
			case store.Bookmark:
			default:
				n, err := strconv.ParseInt(ev.Object.GetObjectMeta().ResourceVersion, 10, 64)
				if !assert.NoError(t, err) {
					return false
				}
				m := ev.Object.GetObjectMeta()
				fw.got = append(fw.got, seenEvent{rv: n, name: m.Namespace + "/" + m.Name})
				fw.lastRV = n
			}
		case <-silent.C:
			assert.Failf(t, "a watcher stopped getting events", "after %d of %d", len(fw.got), want)
			return false
		}
	}
	return true
}

// testWatchFanout runs 16 writers under many watchers, one of which does not read
// until the writers are done: every other watcher gets every event in revision order,
// without gaps or duplicates (resuming from its last resourceVersion when it fell
// behind, as a client does); the stalled one ends with 410 Expired after at most its
// buffer, without holding up the writers or the others, and resumes to the same
// sequence.
func testWatchFanout(t *testing.T, h *Harness) {
	writers, writesEach, watchers := 16, 80, 1000
	if raceEnabled {
		watchers = 100
	}
	h.MustCreate(Project("before")) // a revision to start from ("0" would list first)
	start := h.Revision()
	open := func() *fanoutWatcher {
		w, err := h.S.Watch(h.Ctx, Instance("", ""), store.WatchOptions{ResourceVersion: strconv.FormatInt(start, 10), SharedObjects: true})
		require.NoError(t, err)
		return &fanoutWatcher{w: w, lastRV: start}
	}
	stalled := open()
	defer func() { stalled.w.Stop() }()
	fws := make([]*fanoutWatcher, watchers)
	for i := range fws {
		fws[i] = open()
	}
	total := writers * writesEach
	var readers sync.WaitGroup
	var failed atomic.Bool
	for _, fw := range fws {
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer fw.w.Stop()
			if !fw.read(t, h, total) {
				failed.Store(true)
			}
		}()
	}

	began := time.Now()
	var mu sync.Mutex
	acks := make([]seenEvent, 0, total)
	var wg sync.WaitGroup
	for wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := fmt.Sprintf("p-f%02d", wr)
			for i := range writesEach {
				v := Instance(ns, fmtName("v", i))
				if !assert.NoError(t, h.S.Create(h.Ctx, v, store.CreateOptions{})) {
					return
				}
				n, _ := strconv.ParseInt(v.ResourceVersion, 10, 64)
				mu.Lock()
				acks = append(acks, seenEvent{rv: n, name: ns + "/" + v.Name})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wrote := time.Since(began)
	require.Len(t, acks, total)
	sort.Slice(acks, func(i, j int) bool { return acks[i].rv < acks[j].rv })
	readers.Wait()
	delivered := time.Since(began)
	require.False(t, failed.Load(), "a watcher failed")
	resumes := 0
	for i, fw := range fws {
		if !sameEvents(t, acks, fw.got, fmt.Sprintf("watcher %d (resumed %d times)", i, fw.resumes)) {
			break
		}
		resumes += fw.resumes
	}
	// The stalled watcher kept no more than its buffer and what it was sending, and
	// ended; resumed, it gets the rest.
	held := 0
	for ev := range stalled.w.ResultChan() {
		if ev.Type == store.Error {
			require.Equal(t, resource.ReasonExpired, resource.StatusOf(ev.Err).Reason, "%v", ev.Err)
			break
		}
		held++
		n, _ := strconv.ParseInt(ev.Object.GetObjectMeta().ResourceVersion, 10, 64)
		m := ev.Object.GetObjectMeta()
		stalled.got = append(stalled.got, seenEvent{rv: n, name: m.Namespace + "/" + m.Name})
		stalled.lastRV = n
	}
	_, open2 := <-stalled.w.ResultChan()
	require.False(t, open2, "the stalled watch ended")
	assert.LessOrEqual(t, held, 16+1, "the stalled watch held more than its buffer")
	stalled.resumes++
	w, err := h.S.Watch(h.Ctx, Instance("", ""), store.WatchOptions{ResourceVersion: strconv.FormatInt(stalled.lastRV, 10), SharedObjects: true})
	require.NoError(t, err)
	stalled.w = w
	require.True(t, stalled.read(t, h, total))
	sameEvents(t, acks, stalled.got, "the stalled watcher, resumed")
	t.Logf("RESULT name=REL-WATCH-FANOUT writers=%d events=%d watchers=%d resumes=%d stalled_held=%d wrote=%v delivered=%v violations=0",
		writers, total, watchers+1, resumes, held, wrote.Round(time.Millisecond), delivered.Round(time.Millisecond))
}

// sameEvents checks that a watcher got exactly the events want, in order, and says
// where it did not.
func sameEvents(t *testing.T, want, got []seenEvent, who string) bool {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return assert.Failf(t, "the watch does not match the commit log", "%s: event %d is %v, want %v", who, i, got[i], want[i])
		}
	}
	return assert.Equal(t, len(want), len(got), "%s: events", who)
}
