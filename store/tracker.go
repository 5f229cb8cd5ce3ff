package store

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/store/backend"
)

// The tracker: the store's in-memory index of the stored objects' metadata, and the
// loop that keeps it following the backend. The index's entries and how a change
// updates them are in tracker_index.go; the summaries a write offers the loop in
// tracker_offers.go; List's label index in tracker_labels.go; the reaper in
// tracker_reap.go; the collector's sweep and Settle in tracker_sweep.go; leader
// election in tracker_leader.go. The collector's questions about dependents
// (dependentKeys, waitsOn) are in gc.go.

// tracker keeps an index of the metadata the store's background work needs (owner
// references, finalizers, deletion deadlines), derived from the stored state: a scan
// at start, then the backend's watch. Because it is derived from what is stored, the
// reaper and the garbage collector pick up their work again after a restart of a
// durable backend. The index is sparse: it holds only the objects with owners or a
// deletion timestamp, read at start from their records (tracker_persist.go), which
// the store writes with the objects; opening a store does not decode every object.
// Beside it, the label index List uses covers every object; the loop builds it in the
// background (tracker_labels.go).
//
// When its watch ends, the loop first resumes it where it stopped; only when the
// backend no longer keeps that revision (the watch fell behind what it keeps) does it
// rebuild the index (tracker_rebuild.go), reading the backend's current state page by
// page, each page at the revision current when it is read, so that no read ever
// depends on a revision the backend may discard meanwhile. Every failure of this work
// is kept in fault, which [Store.Healthy] reports, and retried with a growing pause;
// none ends the process.
type tracker struct {
	s *Store

	mu         sync.Mutex
	objs       map[string]*objInfo            // key → metadata summary, of the relevant objects
	uidKey     map[string]string              // uid → key, of the relevant objects
	dependents map[string]map[string]struct{} // owner uid → dependent keys
	byOwnerKey map[string]map[string]struct{} // owner key → dependent keys
	reap       map[string]time.Time           // key → deadline of a finalizer-free terminating object
	queue      map[string]struct{}            // keys the collector must look at
	labels     *labelIndex                    // every object's key and labels (tracker_labels.go)
	lscan      *labelScan                     // the label build in progress; nil once the label index is ready
	labelFault error                          // why the last step of the label build failed, until one succeeds
	rev        int64                          // every event up to this revision is applied to the index
	busy       bool                           // the loop is working on the queue or reaping
	leading    bool                           // this store runs the reaper and the collector
	changed    chan struct{}                  // closed and dropped when rev, busy or fault change (nil: nobody waits)
	kick       chan struct{}
	w          backend.Watcher // nil while no watch runs: the loop starts one
	rebuilding bool            // the index is being rebuilt; rev does not move meanwhile
	rebuilds   int             // how many rebuilds ran, the one at start included
	fault      error           // why the index does not follow the backend now; nil when it does
	stalled    bool            // the loop failed to follow the backend again and waits to retry
	workFault  error           // the last failure of the reaper or the collector, until a pass succeeds
	// forceRebuild makes the next restart rebuild the index instead of resuming
	// the watch (after a panic, which may have left the index half changed).
	forceRebuild bool

	// Summaries of this store's own writes, offered just before they commit so that
	// the loop need not decode the value again when the watch delivers it (the
	// watch is often quicker than the writer's return). A summary is a function of
	// the key and the stored bytes, so the loop takes one only for exactly the bytes
	// it was made from: a value written by another store on the same backend, or
	// one whose summary was dropped, is decoded.
	pmu     sync.Mutex
	seed    maphash.Seed
	pending map[pendingKey]pendingInfo // offered and not taken yet
}

func newTracker(ctx context.Context, s *Store) (*tracker, error) {
	t := &tracker{s: s, kick: make(chan struct{}, 1), leading: s.opts.Elector == nil,
		seed: maphash.MakeSeed(), pending: map[pendingKey]pendingInfo{},
		objs: map[string]*objInfo{}, uidKey: map[string]string{},
		dependents: map[string]map[string]struct{}{}, byOwnerKey: map[string]map[string]struct{}{},
		reap: map[string]time.Time{}, queue: map[string]struct{}{},
		labels: &labelIndex{}}
	for {
		err := t.rebuild(ctx)
		if err == nil {
			return t, nil
		}
		// Only a watch that fell behind during the scan is worth another try here;
		// any other failure is the caller's to see.
		if !errors.Is(err, backend.ErrCompacted) {
			return nil, backendError(err)
		}
		if t.rebuilds >= maxOpenRebuilds {
			return nil, backendError(err)
		}
	}
}

// maxOpenRebuilds bounds the rebuilds New tries before it gives up: each fails only
// when the writes outrun the scan by the whole history the backend keeps.
const maxOpenRebuilds = 5

func (t *tracker) signalLocked() {
	// Only a waiter needs a channel (changedLocked makes one): most changes have
	// none to wake.
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// changedLocked returns a channel that is closed at the next change of rev or busy.
func (t *tracker) changedLocked() <-chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// notify wakes the loop.
func (t *tracker) notify() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Pauses between two tries of background work that failed: the first, doubled at
// each failure in a row up to the last.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = 5 * time.Second
)

// run applies watch events to the index, reaps expired grace periods and collects
// garbage until ctx ends. It never panics: a failure, or a panic of the work it
// runs, is kept for [Store.Healthy] and retried.
func (t *tracker) run(ctx context.Context) {
	var timer <-chan time.Time
	var timerAt time.Time
	pause := retryFirst
	var retry <-chan time.Time // armed while a failure waits for its next try
	for ctx.Err() == nil {
		if retry == nil && t.watcher() == nil {
			if err := t.restart(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, backend.ErrClosed) {
					t.s.log.Info("store: backend closed; background work stops")
					t.setFault(err)
					<-ctx.Done()
					return
				}
				t.s.log.Error("store: tracker cannot follow the backend; trying again", "err", err, "in", pause)
				t.mu.Lock()
				t.fault, t.stalled = err, true
				t.signalLocked()
				t.mu.Unlock()
				retry = time.After(pause)
				pause = min(2*pause, retryMax)
				continue
			}
			pause = retryFirst
		}
		if failed := t.safely(ctx, t.work); failed && retry == nil {
			retry = time.After(pause)
			pause = min(2*pause, retryMax)
		}
		// Arm a timer for the earliest deadline still in the future.
		t.mu.Lock()
		var next time.Time
		for _, d := range t.reap {
			if next.IsZero() || d.Before(next) {
				next = d
			}
		}
		t.mu.Unlock()
		// A reap that failed waits for the retry, not for its past deadline.
		if !next.IsZero() && (timer == nil || next.Before(timerAt)) && (retry == nil || next.After(t.s.clock.Now())) {
			timerAt = next
			timer = t.s.clock.After(next.Sub(t.s.clock.Now()))
		}
		var events <-chan backend.Event
		if w := t.watcher(); w != nil {
			events = w.Events()
		}
		// The label build reads a page whenever the loop has nothing else to do.
		var step <-chan struct{}
		if retry == nil && events != nil && t.building() {
			step = closed
		}
		select {
		case <-ctx.Done():
		case <-step:
			t.safely(ctx, func(ctx context.Context) error {
				err := t.labelStep(ctx)
				if err != nil && ctx.Err() == nil {
					t.s.log.Error("store: building the label index; trying again", "err", err, "in", pause)
					retry = time.After(pause)
					pause = min(2*pause, retryMax)
				}
				t.mu.Lock()
				t.labelFault = err
				t.signalLocked()
				t.mu.Unlock()
				return err
			})
		case <-t.kick:
		case <-retry:
			retry = nil
		case <-timer:
			timer = nil
		case be, ok := <-events:
			if !ok {
				t.ended(ctx)
				continue
			}
			t.safely(ctx, func(context.Context) error { t.apply(be); return nil })
		}
	}
	if w := t.watcher(); w != nil {
		w.Stop()
	}
}

// safely runs fn, turning a panic into an error: a panic may have left the index
// half changed, so the watch is dropped and the index rebuilt. It reports whether fn
// failed.
func (t *tracker) safely(ctx context.Context, fn func(context.Context) error) (failed bool) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("%w: panic: %v", errBackgroundPanic, r)
			t.s.log.Error("store: background work panicked; rebuilding the index", "err", err, "stack", string(debug.Stack()))
			t.mu.Lock()
			if t.w != nil {
				t.w.Stop()
				t.w = nil
			}
			t.fault = err
			t.forceRebuild = true
			t.signalLocked()
			t.mu.Unlock()
			failed = true
		}
	}()
	return fn(ctx) != nil
}

// closed is a closed channel: a select case that is always ready.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// errBackgroundPanic marks a panic of the background work, recovered and reported.
var errBackgroundPanic = errors.New("store: background work panicked")

// watcher returns the current watch, nil when none runs.
func (t *tracker) watcher() backend.Watcher {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w
}

// ended handles the end of the watch: it is dropped, and the loop starts another.
func (t *tracker) ended(ctx context.Context) {
	t.mu.Lock()
	w := t.w
	t.w = nil
	t.mu.Unlock()
	if w == nil || ctx.Err() != nil {
		return
	}
	err := w.Err()
	w.Stop()
	if err == nil {
		err = errWatchEnded
	}
	t.s.log.Warn("store: tracker watch ended; resuming", "err", err)
	t.setFault(err)
}

// errWatchEnded is the fault of a watch that ended without saying why.
var errWatchEnded = errors.New("store: the tracker's watch ended")

// restart starts a watch again: from where the index stopped when the backend still
// keeps it, else after a rebuild of the index.
func (t *tracker) restart(ctx context.Context) error {
	t.mu.Lock()
	from, force := t.rev, t.forceRebuild
	t.mu.Unlock()
	if !force {
		w, err := t.s.b.Watch(ctx, backend.WatchOptions{StartRevision: from + 1, ProgressNotify: true})
		if err == nil {
			t.mu.Lock()
			t.w = w
			t.fault, t.stalled = nil, false
			t.signalLocked()
			t.mu.Unlock()
			return nil
		}
		if !errors.Is(err, backend.ErrCompacted) {
			return err
		}
		t.s.log.Warn("store: tracker fell behind the backend's history; rebuilding its index", "from", from+1)
	}
	return t.rebuild(ctx)
}

// setFault records why the index does not follow the backend.
func (t *tracker) setFault(err error) {
	t.mu.Lock()
	t.fault = err
	t.signalLocked()
	t.mu.Unlock()
}

// apply applies one event and every event already waiting.
func (t *tracker) apply(be backend.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		t.eventLocked(be)
		t.rev = max(t.rev, completeThrough(be))
		if t.w == nil {
			break
		}
		select {
		case next, ok := <-t.w.Events():
			if !ok {
				t.signalLocked()
				return
			}
			be = next
			continue
		default:
		}
		break
	}
	t.finishLabelsLocked()
	t.signalLocked()
}

// completeThrough returns the revision up to which a watch that delivered be has
// delivered every event: a progress's own, else the one before the event's, since
// more events of its revision (its transaction's other keys) may follow it.
func completeThrough(be backend.Event) int64 {
	if be.Type == backend.EventProgress {
		return be.Revision
	}
	return be.Revision - 1
}

// eventLocked applies one watch event to the indexes: a record's change to the
// sparse index, an object's change to the label index (and its deletion to the
// dependents that may have lost their owner).
func (t *tracker) eventLocked(be backend.Event) {
	key := be.KV.Key
	switch {
	case strings.HasPrefix(key, "/"):
		t.labelEventLocked(be)
		if be.Type == backend.EventDelete {
			t.removedLocked(key)
			t.s.cache.Drop(key)
		}
	case strings.HasPrefix(key, recordPrefix+"/"):
		key = key[len(recordPrefix):]
		var info *objInfo
		if be.Type == backend.EventPut {
			info = t.s.decodeRecord(key, be.KV.Value)
		}
		if info != nil {
			info.rev = be.KV.ModRevision
		}
		t.setLocked(key, info)
	}
}

// catchUp applies watch events until the index has seen revision rev, so that a
// decision of the collector never rests on an index older than the state it reads.
// It runs on the loop's goroutine, the only reader of the watch.
func (t *tracker) catchUp(ctx context.Context, rev int64) {
	for {
		t.mu.Lock()
		done := t.rev >= rev
		t.mu.Unlock()
		if done {
			return
		}
		w := t.watcher()
		if w == nil {
			return
		}
		select {
		case be, ok := <-w.Events():
			if !ok {
				return
			}
			t.apply(be)
		case <-ctx.Done():
			return
		}
	}
}

// infoOfEvent summarises the value a put event delivers: the summary its writer
// offered, else a decode. Nil for a value that is no object of a known kind.
func (t *tracker) infoOfEvent(be backend.Event) *objInfo {
	info := t.take(be.KV.Key, be.KV.Value)
	if info == nil {
		info = t.s.infoOf(be.KV.Key, be.KV.Value)
	}
	if info != nil {
		info.rev = be.KV.ModRevision
	}
	return info
}
