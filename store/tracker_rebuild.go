package store

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/management-service/mgmt/store/backend"
)

// Rebuilding the tracker's indexes without a read at a pinned revision.
//
// A scan at one revision takes time in proportion to what it reads, and the backend
// may discard that revision before the scan ends (it keeps a bounded history), so a
// big store falling behind would never recover. Instead the rebuild starts a watch
// at the current revision, then reads the current state in pages, each at the
// revision current when it is read, draining the watch between pages. The sparse
// index is rebuilt so from the records (tracker_persist.go), before the loop goes on;
// the label index (tracker_labels.go) so from the objects, by the loop, a page at a
// time. The new index is built apart from the one in use:
//
//   - a page read at revision r covering the keys [lo, next lo) gives the state of
//     those keys at r: it replaces whatever the new index held for them;
//   - a watch event for a key already covered by a page applies when it is newer than
//     that page's revision, and is skipped otherwise (the page already has it);
//   - an event for a key not covered yet is skipped: the page that will cover it is
//     read after the event was delivered, so at a revision that includes it.
//
// Once every page is read and the watch has delivered everything up to the newest
// page's revision, every key of the new index is at the watch's revision: it replaces
// the index in use, through setLocked, so the collector learns what changed. Each step
// reads only current state, so the rebuild ends whatever history the backend keeps,
// unless the writes outrun the loop's draining of the watch by that whole history,
// which ends the watch with ErrCompacted and the loop tries again.

// rebuildPage is how many records one read of the rebuild returns.
const rebuildPage = 1000

// scanPage is one page of a rebuild: the keys from lo up to the next page's lo (the
// last page: to the end), as of rev.
type scanPage struct {
	lo  string
	rev int64
}

// scanState is the state of one rebuild: the new index's entries by key.
type scanState[V any] struct {
	next   map[string]V
	pages  []scanPage
	cursor string // first key not read yet
	done   bool   // every page has been read
	top    int64  // newest revision a page was read at
}

// rebuildScan is the state of a rebuild of the sparse index, keyed by object key.
type rebuildScan = scanState[*objInfo]

// covered returns the revision of the page that covers key, and whether one does.
func (r *scanState[V]) covered(key string) (int64, bool) {
	if !r.done && key >= r.cursor {
		return 0, false
	}
	i := sort.Search(len(r.pages), func(i int) bool { return r.pages[i].lo > key }) - 1
	if i < 0 {
		return 0, false
	}
	return r.pages[i].rev, true
}

// rebuildEvent applies a watch event to the new sparse index: a record's change;
// an object's deletion drops its decoded copy from the cache.
func (t *tracker) rebuildEvent(r *rebuildScan, be backend.Event) {
	key := be.KV.Key
	if strings.HasPrefix(key, "/") {
		if be.Type == backend.EventDelete {
			t.s.cache.Drop(key)
		} else {
			t.take(key, be.KV.Value)
		}
		return
	}
	if !strings.HasPrefix(key, recordPrefix+"/") {
		return
	}
	key = key[len(recordPrefix):]
	at, ok := r.covered(key)
	if !ok || be.Revision <= at {
		return
	}
	var info *objInfo
	if be.Type == backend.EventPut {
		info = t.s.decodeRecord(key, be.KV.Value)
	}
	if info != nil {
		info.rev = be.KV.ModRevision
		r.next[key] = info
	} else {
		delete(r.next, key)
	}
}

// rebuild builds the index anew from the backend's current state and starts the
// watch that keeps it current. It returns once the new index is in use, or with the
// error that stopped it: ErrCompacted when the watch fell behind during the rebuild.
func (t *tracker) rebuild(ctx context.Context) (err error) {
	t.mu.Lock()
	if t.w != nil {
		t.w.Stop()
		t.w = nil
	}
	t.rebuilding = true
	t.rebuilds++
	t.signalLocked()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.rebuilding = false
		if err != nil {
			t.fault = err
		}
		t.signalLocked()
		t.mu.Unlock()
	}()

	w, from, err := t.watchFromNow(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			w.Stop()
		}
	}()
	r := &rebuildScan{next: map[string]*objInfo{}}
	seen := from // every event up to seen was delivered
	for {
		// Drain what the watch has, so that it does not fall behind during the scan.
	drain:
		for {
			select {
			case be, ok := <-w.Events():
				if !ok {
					return watchErr(w)
				}
				if be.Type != backend.EventProgress {
					t.rebuildEvent(r, be)
				}
				seen = max(seen, completeThrough(be))
			default:
				break drain
			}
		}
		if r.done {
			if seen >= r.top {
				break
			}
			// Wait for the watch to reach the newest page.
			select {
			case be, ok := <-w.Events():
				if !ok {
					return watchErr(w)
				}
				if be.Type != backend.EventProgress {
					t.rebuildEvent(r, be)
				}
				seen = max(seen, completeThrough(be))
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		start := ""
		if r.cursor != "" {
			start = recordPrefix + r.cursor
		}
		res, err := t.s.b.Range(ctx, backend.RangeOptions{Prefix: recordPrefix + "/", Start: start, Limit: rebuildPage})
		if err != nil {
			return err
		}
		// The page covers [cursor, last key] now, and up to the next page's start.
		r.pages = append(r.pages, scanPage{lo: r.cursor, rev: res.Revision})
		r.top = max(r.top, res.Revision)
		// Keys the new index held in this range that the page lacks were deleted.
		// Only watch events can have put them there, and only keys already covered
		// take events, so the range of a new page holds none: nothing to remove.
		for _, kv := range res.KVs {
			key := kv.Key[len(recordPrefix):]
			if info := t.s.decodeRecord(key, kv.Value); info != nil {
				info.rev = kv.ModRevision
				r.next[key] = info
			}
		}
		if !res.More || len(res.KVs) == 0 {
			r.done = true
		} else {
			r.cursor = res.KVs[len(res.KVs)-1].Key[len(recordPrefix):] + "\x00"
		}
	}
	t.install(r.next, seen, w)
	return nil
}

// watchFromNow starts a watch at the revision current now, and returns it with the
// revision it starts after.
func (t *tracker) watchFromNow(ctx context.Context) (backend.Watcher, int64, error) {
	for {
		rev, err := t.s.b.Revision(ctx)
		if err != nil {
			return nil, 0, err
		}
		w, err := t.s.b.Watch(ctx, backend.WatchOptions{StartRevision: rev + 1, ProgressNotify: true})
		if err == nil {
			return w, rev, nil
		}
		// So many writes between the two calls that rev+1 is gone already: look
		// again.
		if !errors.Is(err, backend.ErrCompacted) {
			return nil, 0, err
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// watchErr is why w ended; an end without a reason counts as falling behind.
func watchErr(w backend.Watcher) error {
	if err := w.Err(); err != nil {
		return err
	}
	return errWatchEnded
}

// install makes next, at revision rev, the sparse index in use, followed by w, and
// starts a build of the label index, which missed events too.
func (t *tracker) install(next map[string]*objInfo, rev int64, w backend.Watcher) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key := range t.objs {
		if next[key] == nil {
			t.setLocked(key, nil)
		}
	}
	for key, info := range next {
		if old := t.objs[key]; old == nil || old.rev != info.rev {
			t.setLocked(key, info)
		}
	}
	// Events were missed, and work taken from the queue may have been lost with a
	// panic: the collector looks at every object it may have work for again.
	for key, info := range t.objs {
		if len(info.owners) > 0 || info.deletion != nil {
			t.queue[key] = struct{}{}
		}
	}
	t.rev = max(t.rev, rev)
	t.w = w
	t.fault, t.stalled = nil, false
	t.forceRebuild = false
	t.startLabelsLocked()
	t.signalLocked()
}
