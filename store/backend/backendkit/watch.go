package backendkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/management-service/mgmt/store/backend"
)

// The size of a batch: what a watcher's goroutine takes from its [Source] at a time.
const (
	// BatchEvents bounds the events of a batch: a batch takes no further revision
	// once it holds this many (the last revision it takes may carry it past).
	BatchEvents = 256
	// BatchRevisions is the most revisions a batch looks at.
	BatchRevisions = 1024
)

// errStopped ends a watcher stopped by its owner (Stop or its context): Err is nil.
var errStopped = errors.New("backendkit: watch stopped")

// Batch is the answer of [Source.Collect].
type Batch struct {
	// Events are the events that match the prefix, of the revisions looked at, in
	// revision order and, within a revision, in the order of its ops.
	Events []backend.Event
	// Upto is the last revision looked at: the watcher goes on at Upto+1. When no
	// revision was looked at, it is next-1.
	Upto int64
	// Current is the backend's current revision, read together with Notify.
	Current int64
	// Notify is the channel the backend closes at its next change after Current.
	Notify <-chan struct{}
}

// Source is the history of a backend, as its watchers read it. Its methods are called
// from the watchers' goroutines, concurrently.
type Source interface {
	// Collect returns the events of the revisions from next on whose key starts with
	// prefix, at most a batch (see [BatchEvents], [BatchRevisions]), the last revision
	// looked at, and the current revision and notify channel, read at one moment.
	// When next is past the current revision it returns no events and Upto next-1.
	// Once the backend is closed it returns [backend.ErrClosed]; when next is no
	// longer kept, an error wrapping [backend.ErrCompacted]. An error ends the
	// watcher with it.
	Collect(prefix string, next int64) (Batch, error)
	// Lost is called each time the notify channel a watcher holds while its reader
	// does not take an event is closed. It returns the new notify channel and, when
	// revision need is no longer kept, an error wrapping [backend.ErrCompacted] that
	// ends the watcher. Once the backend is closed it returns nil and nil: the watcher
	// then sees the done channel of the [Hub].
	Lost(need int64) (<-chan struct{}, error)
}

// Hub starts the watchers of one backend and keeps count of them. Build it with
// [NewHub]; it must not be copied.
type Hub struct {
	src    Source
	done   <-chan struct{}
	buffer int

	wg   sync.WaitGroup
	live atomic.Int64
}

// NewHub returns the hub of a backend whose history is src. The backend closes done
// when it is closed: every watcher then ends with [backend.ErrClosed]. buffer is the
// capacity of each watcher's channel (0: unbuffered).
func NewHub(src Source, done <-chan struct{}, buffer int) *Hub {
	return &Hub{src: src, done: done, buffer: buffer}
}

// CheckWatch returns the error of a Watch call that is refused before the backend is
// looked at: one wrapping [backend.ErrInvalidArgument] for a negative StartRevision,
// and ctx's error when ctx is done.
func CheckWatch(ctx context.Context, opts backend.WatchOptions) error {
	if opts.StartRevision < 0 {
		return fmt.Errorf("%w: negative start revision %d", backend.ErrInvalidArgument, opts.StartRevision)
	}
	return ctx.Err()
}

// Start starts a watcher of the keys under opts.Prefix, from opts.StartRevision (0:
// cur+1, the changes after the current revision). cur is the backend's current
// revision and oldest the oldest one it keeps: a start at or below cur and below
// oldest fails with an error wrapping [backend.ErrCompacted]; a start past cur waits
// for it. The watcher ends when ctx is done, on Stop, when the hub's done channel is
// closed, or with the error of its [Source].
//
// The caller holds the lock under which it read cur and oldest and found the backend
// open; its Close takes that lock to close done before it calls [Hub.Wait].
func (h *Hub) Start(ctx context.Context, opts backend.WatchOptions, cur, oldest int64) (backend.Watcher, error) {
	next := opts.StartRevision
	if next == 0 {
		next = cur + 1
	}
	if next <= cur && next < oldest {
		return nil, fmt.Errorf("%w: watch from revision %d, oldest kept %d", backend.ErrCompacted, next, oldest)
	}
	w := &watcher{
		hub:      h,
		ctx:      ctx,
		prefix:   opts.Prefix,
		progress: opts.ProgressNotify,
		ch:       make(chan backend.Event, h.buffer),
		start:    next,
		next:     next,
		stop:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	h.wg.Add(1)
	h.live.Add(1)
	go w.run()
	return w, nil
}

// Wait waits until every watcher's goroutine has exited. Call it once done is closed.
func (h *Hub) Wait() { h.wg.Wait() }

// Live returns the number of watcher goroutines still running.
func (h *Hub) Live() int { return int(h.live.Load()) }

// Scan returns the events of the revisions next..cur whose key starts with prefix,
// as a [Source] that keeps its history in memory collects them: it looks at the
// revisions in order, at most [BatchRevisions] of them, and takes no further one once
// it holds [BatchEvents] events. events returns the events of one revision, which
// Scan copies but does not change. It also returns the last revision looked at,
// next-1 when none.
func Scan(prefix string, next, cur int64, events func(rev int64) []backend.Event) ([]backend.Event, int64) {
	var out []backend.Event
	upto := next - 1
	for r := next; r <= cur && r-next < BatchRevisions && len(out) < BatchEvents; r++ {
		for _, ev := range events(r) {
			if strings.HasPrefix(ev.KV.Key, prefix) {
				out = append(out, ev)
			}
		}
		upto = r
	}
	return out, upto
}

// watcher is the [backend.Watcher] a [Hub] starts.
type watcher struct {
	hub      *Hub
	ctx      context.Context
	prefix   string
	progress bool
	ch       chan backend.Event

	start int64 // the first revision asked for
	next  int64 // the next revision to look at; only the goroutine uses it
	sent  int64 // the revision of the last event or progress sent; only the goroutine
	told  int64 // the revision of the last progress sent; only the goroutine

	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}

	mu  sync.Mutex
	err error
}

// Events returns the channel of events, closed when the watch ends.
func (w *watcher) Events() <-chan backend.Event { return w.ch }

// Err returns why the watch ended, once the channel is closed.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch and waits for its goroutine to exit.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.exited
}

func (w *watcher) run() {
	err := w.loop()
	if errors.Is(err, errStopped) {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.hub.live.Add(-1)
	close(w.ch)
	close(w.exited)
	w.hub.wg.Done()
}

func (w *watcher) loop() error {
	for {
		b, err := w.hub.src.Collect(w.prefix, w.next)
		if err != nil {
			return err
		}
		for _, ev := range b.Events {
			if err := w.send(ev, b.Upto+1, b.Notify); err != nil {
				return err
			}
			w.sent = ev.Revision
		}
		w.next = b.Upto + 1
		if w.next <= b.Current {
			continue // more history to go through
		}
		// Caught up: every event up to Current was sent, including all of the last
		// revision's, which the reader learns only from this progress.
		if w.progress && b.Current > w.told && b.Current >= w.sent && b.Current >= w.start-1 {
			ev := backend.Event{Type: backend.EventProgress, Revision: b.Current}
			if err := w.send(ev, w.next, b.Notify); err != nil {
				return err
			}
			w.sent, w.told = b.Current, b.Current
		}
		select {
		case <-b.Notify:
		case <-w.stop:
			return errStopped
		case <-w.ctx.Done():
			return errStopped
		case <-w.hub.done:
			return backend.ErrClosed
		}
	}
}

// send hands ev to the reader. While the reader does not take it, send asks the
// Source at each change whether revision need is still kept: once it is not, the
// watch cannot go on without a gap and ends with the Source's error.
func (w *watcher) send(ev backend.Event, need int64, notify <-chan struct{}) error {
	if ev.PrevKV != nil { // each watcher gets its own copy of the struct
		prev := *ev.PrevKV
		ev.PrevKV = &prev
	}
	for {
		select {
		case w.ch <- ev:
			return nil
		case <-w.stop:
			return errStopped
		case <-w.ctx.Done():
			return errStopped
		case <-w.hub.done:
			return backend.ErrClosed
		case <-notify:
			var err error
			if notify, err = w.hub.src.Lost(need); err != nil {
				return err
			}
		}
	}
}
