package memdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/management-service/mgmt/store/backend"
)

// A watcher's goroutine copies at most this many events, and looks at most at this
// many revisions, each time it holds the backend's lock.
const (
	watchBatchEvents    = 256
	watchBatchRevisions = 1024
)

// errStopped ends a watcher stopped by its owner (Stop or its context): Err is nil.
var errStopped = errors.New("memdb: watch stopped")

// Watch starts a watcher of the keys under opts.Prefix from opts.StartRevision (0:
// the changes after the current revision). StartRevision may lie in the future: the
// watcher then waits for it. A StartRevision older than what is kept fails at once
// with [backend.ErrCompacted].
//
// Each watcher is a goroutine with a cursor in the backend's history: it copies the
// events at or after its cursor that match its prefix to its channel, and sleeps
// when it has caught up until the next commit. Writers never wait for it. A watcher
// whose reader falls so far behind that the history no longer holds its next
// revision ends with [backend.ErrCompacted], at once, even while its channel is full.
func (b *Backend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	if opts.StartRevision < 0 {
		return nil, fmt.Errorf("%w: negative start revision %d", backend.ErrInvalidArgument, opts.StartRevision)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watcher{
		b:        b,
		ctx:      ctx,
		prefix:   opts.Prefix,
		progress: opts.ProgressNotify,
		ch:       make(chan backend.Event, b.opts.WatchBuffer),
		stop:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, backend.ErrClosed
	}
	w.next = opts.StartRevision
	if w.next == 0 {
		w.next = b.rev + 1
	}
	if w.next <= b.rev {
		if oldest := b.oldestLocked(); w.next < oldest {
			return nil, fmt.Errorf("%w: watch from revision %d, oldest kept %d", backend.ErrCompacted, w.next, oldest)
		}
	}
	w.start = w.next
	b.watchers.Add(1)
	b.live++
	go w.run()
	return w, nil
}

// watcher is the [backend.Watcher] of a [Backend].
type watcher struct {
	b        *Backend
	ctx      context.Context
	prefix   string
	progress bool
	ch       chan backend.Event

	start int64 // the first revision asked for
	next  int64 // the next revision to look at; only the goroutine uses it
	// sent is the revision of the last event or progress sent; only the goroutine
	// uses it.
	sent int64

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
	w.b.mu.Lock()
	w.b.live--
	w.b.mu.Unlock()
	close(w.ch)
	close(w.exited)
	w.b.watchers.Done()
}

func (w *watcher) loop() error {
	for {
		batch, upto, cur, notify, err := w.b.collect(w.prefix, w.next)
		if err != nil {
			return err
		}
		for _, ev := range batch {
			if err := w.send(ev, upto+1, notify); err != nil {
				return err
			}
			w.sent = ev.Revision
		}
		w.next = upto + 1
		if w.next <= cur {
			continue // more history to go through
		}
		if w.progress && cur > w.sent && cur >= w.start-1 {
			ev := backend.Event{Type: backend.EventProgress, Revision: cur}
			if err := w.send(ev, w.next, notify); err != nil {
				return err
			}
			w.sent = cur
		}
		select {
		case <-notify:
		case <-w.stop:
			return errStopped
		case <-w.ctx.Done():
			return errStopped
		case <-w.b.done:
			return backend.ErrClosed
		}
	}
}

// send hands ev to the reader. While the reader does not take it, send keeps an eye
// on the history: once revision need is no longer kept, the watch cannot go on
// without a gap and ends with ErrCompacted.
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
		case <-w.b.done:
			return backend.ErrClosed
		case <-notify:
			var lost bool
			notify, lost = w.b.lost(need)
			if lost {
				return fmt.Errorf("%w: watcher fell behind, revision %d is no longer kept", backend.ErrCompacted, need)
			}
		}
	}
}

// collect copies the events of revisions from next on that match prefix, up to a
// batch. It returns them, the last revision looked at, the current revision and the
// channel that will be closed on the next change.
func (b *Backend) collect(prefix string, next int64) (events []backend.Event, upto, cur int64, notify <-chan struct{}, err error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, 0, 0, nil, backend.ErrClosed
	}
	cur = b.rev
	if next > cur {
		return nil, next - 1, cur, b.notify, nil
	}
	if oldest := b.oldestLocked(); next < oldest {
		return nil, 0, 0, nil, fmt.Errorf("%w: watcher fell behind, revision %d is no longer kept (oldest %d)", backend.ErrCompacted, next, oldest)
	}
	upto = next - 1
	for r := next; r <= cur && r-next < watchBatchRevisions && len(events) < watchBatchEvents; r++ {
		for _, ev := range b.ring[r%int64(len(b.ring))].events {
			if strings.HasPrefix(ev.KV.Key, prefix) {
				events = append(events, ev)
			}
		}
		upto = r
	}
	return events, upto, cur, b.notify, nil
}

// lost reports whether revision need is gone from the history, and returns the
// channel that will be closed on the next change.
func (b *Backend) lost(need int64) (<-chan struct{}, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, false // send sees done instead
	}
	return b.notify, need <= b.rev && need < b.oldestLocked()
}
