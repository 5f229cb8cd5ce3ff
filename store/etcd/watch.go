package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/backend"
)

const (
	// watchChanSize is the capacity of a watcher's channel; the read-ahead beyond it
	// is bounded by Options.WatchBuffer.
	watchChanSize = 16
	// watchBufferBytes bounds the bytes of keys and values a watcher reads ahead,
	// whatever Options.WatchBuffer says.
	watchBufferBytes = 16 << 20
	// progressFirstPoll is how long a watcher that asked for progress waits, after a
	// write or after its last news, before it first asks etcd for progress; the wait
	// then doubles up to Options.ProgressInterval.
	progressFirstPoll = 10 * time.Millisecond
)

// Watch starts a watcher of the keys under opts.Prefix from opts.StartRevision, on
// an etcd watch of the keys' range with PrevKV.
//
// StartRevision 0 is resolved to the revision after the current one before Watch
// returns, so a write that follows Watch is seen. A StartRevision below the
// compaction point fails at once with [backend.ErrCompacted]; one in the future is
// waited for.
//
// Each watcher runs a goroutine with its own etcd watch stream. It reads up to
// [Options].WatchBuffer events ahead of its reader; past that it lets go of the etcd
// watch and opens it again from the next revision when the reader has caught up, so
// a reader that stops costs this process a bounded amount of memory and never holds
// writers back. A watcher that resumes below etcd's compaction revision, or whose
// next event's PrevKV etcd no longer has, ends with [backend.ErrCompacted] after
// delivering everything before.
//
// Progress events come from etcd's progress requests, which etcd answers only once
// it has sent every event up to the revision it reports. A watcher that asked for
// them asks soon after any answer of etcd to this backend (a write, a read, a
// [Backend.Revision]) showed a revision it has not reported, and when idle at
// growing intervals up to [Options].ProgressInterval.
func (b *Backend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	if opts.StartRevision < 0 {
		return nil, fmt.Errorf("%w: negative start revision %d", backend.ErrInvalidArgument, opts.StartRevision)
	}
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	start := opts.StartRevision
	if start == 0 {
		cur, err := b.Revision(ctx)
		if err != nil {
			return nil, err
		}
		start = cur + 1
	} else if at := start - 1 + b.base; at > 0 {
		// The revision before the start must be readable: see read.
		_, err := b.cli.Get(ctx, b.prefix, clientv3.WithRev(at), clientv3.WithCountOnly())
		if err != nil && !errors.Is(err, rpctypes.ErrFutureRev) {
			return nil, b.fail("watch", err)
		}
	}
	key, end := b.span(opts.Prefix)
	lctx, cancel := context.WithCancel(ctx)
	w := &watcher{
		b:        b,
		ctx:      ctx,
		lctx:     lctx,
		cancel:   cancel,
		key:      key,
		end:      end,
		progress: opts.ProgressNotify,
		start:    start,
		ch:       make(chan backend.Event, watchChanSize),
		stop:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	b.closeMu.Lock()
	if b.closed.Load() {
		b.closeMu.Unlock()
		cancel()
		return nil, backend.ErrClosed
	}
	b.watchers.Add(1)
	b.closeMu.Unlock()
	go w.run()
	return w, nil
}

// watcher is the [backend.Watcher] of a [Backend].
type watcher struct {
	b   *Backend
	ctx context.Context // the caller's
	// lctx ends when the caller's context does, on Stop and on Close; it bounds
	// the calls to the etcd client, which may block.
	lctx     context.Context
	cancel   context.CancelFunc
	key, end string // the etcd key range
	progress bool
	start    int64 // the first revision asked for
	ch       chan backend.Event

	stop     chan struct{}
	stopOnce sync.Once
	stopped  atomic.Bool
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
	w.stopOnce.Do(func() {
		w.stopped.Store(true)
		close(w.stop)
		w.cancel()
	})
	<-w.exited
}

func (w *watcher) run() {
	unhook := context.AfterFunc(w.b.ctx, w.cancel)
	err := w.loop()
	unhook()
	w.cancel()
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	close(w.ch)
	close(w.exited)
	w.b.watchers.Done()
}

// ended tells whether the etcd watch ended for a reason of ours, and then the Err
// of the watch: ErrClosed after Close, nil after Stop or the end of the caller's
// context.
func (w *watcher) ended() (bool, error) {
	switch {
	case w.b.closed.Load():
		return true, backend.ErrClosed
	case w.stopped.Load(), w.ctx.Err() != nil:
		return true, nil
	}
	return false, nil
}

// stream is one etcd watch of a watcher, from next on.
type stream struct {
	ch     clientv3.WatchChan
	ctx    context.Context
	cancel context.CancelFunc
}

func (w *watcher) loop() error {
	b := w.b
	ew := clientv3.NewWatcher(b.cli)
	defer func() { _ = ew.Close() }()

	next := w.start  // the next revision to ask etcd for
	var queued int64 // the revision of the last event or progress queued
	var told int64   // the revision of the last progress queued
	var pending []backend.Event
	pendingBytes := 0
	var failed error // why the etcd watch ended; the watch ends once pending is delivered

	var cur *stream
	open := func() {
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(w.lctx))
		ch := ew.Watch(ctx, w.key, clientv3.WithRange(w.end), clientv3.WithRev(next+b.base), clientv3.WithPrevKV())
		cur = &stream{ch: ch, ctx: ctx, cancel: cancel}
	}
	drop := func() {
		if cur != nil {
			cur.cancel()
			cur = nil
		}
	}
	defer drop()

	// Progress requests: see Watch.
	var poll <-chan time.Time
	var pollTimer *time.Timer
	delay := progressFirstPoll
	var seenRev int64
	var seen <-chan struct{}
	if w.progress {
		pollTimer = time.NewTimer(delay)
		defer pollTimer.Stop()
		poll = pollTimer.C
		seenRev, seen = b.lastSeen()
	}

	open()
	for {
		if len(pending) == 0 {
			if failed != nil {
				return failed
			}
			if cur == nil {
				open() // the reader caught up: resume
			}
		}
		var out chan<- backend.Event
		var first backend.Event
		if len(pending) > 0 {
			out, first = w.ch, pending[0]
		}
		var in clientv3.WatchChan
		if cur != nil {
			in = cur.ch
		}
		select {
		case out <- first:
			pending[0] = backend.Event{}
			pending = pending[1:]
			pendingBytes -= eventBytes(first)

		case resp, ok := <-in:
			if !ok {
				if ours, err := w.ended(); ours {
					return err
				}
				failed = errors.New("etcd: watch ended by the etcd client")
				drop()
				continue
			}
			if pollTimer != nil {
				pollTimer.Reset(delay)
			}
			if resp.CompactRevision != 0 {
				failed = fmt.Errorf("%w: etcd compacted revision %d, the watch needs %d",
					backend.ErrCompacted, resp.CompactRevision-b.base, next)
				drop()
				continue
			}
			if resp.Canceled {
				if ours, err := w.ended(); ours {
					return err
				}
				failed = b.fail("watch", resp.Err())
				drop()
				continue
			}
			if resp.IsProgressNotify() {
				rev := resp.Header.Revision - b.base
				// etcd sent every event up to rev before this notification, the
				// last revision's included: the reader learns that from it.
				if w.progress && rev >= queued && rev > told && rev >= w.start-1 {
					pending = append(pending, backend.Event{Type: backend.EventProgress, Revision: rev})
					queued, told = rev, rev
				}
				next = max(next, rev+1)
			}
			evs, lost := b.events(resp.Events)
			for _, ev := range evs {
				pending = append(pending, ev)
				pendingBytes += eventBytes(ev)
				queued, next = ev.Revision, ev.Revision+1
			}
			if lost != nil {
				failed = lost
				drop()
				continue
			}
			if len(evs) > 0 && w.progress {
				// New events: ask soon for the progress that completes their revision.
				delay = progressFirstPoll
				pollTimer.Reset(delay)
			}
			if len(pending) >= b.opts.WatchBuffer || pendingBytes >= watchBufferBytes {
				drop() // the reader is behind: etcd keeps the rest
			}

		case <-poll:
			if cur != nil {
				_ = ew.RequestProgress(cur.ctx)
				delay = min(2*delay, b.opts.ProgressInterval)
			}
			pollTimer.Reset(delay)

		case <-seen:
			seenRev, seen = b.lastSeen()
			if seenRev > told {
				delay = progressFirstPoll
				pollTimer.Reset(delay)
			}

		case <-w.stop:
			return nil
		case <-w.ctx.Done():
			return nil
		case <-b.done:
			return backend.ErrClosed
		}
	}
}

// events converts the events of one etcd watch response. etcd leaves out a PrevKV it
// no longer has (compacted): the events from the first revision missing one are left
// out too, and lost says why the watch cannot go on.
func (b *Backend) events(evs []*clientv3.Event) (out []backend.Event, lost error) {
	out = make([]backend.Event, 0, len(evs))
	for _, ev := range evs {
		rev := ev.Kv.ModRevision - b.base
		e := backend.Event{Revision: rev}
		needPrev := true
		switch ev.Type {
		case mvccpb.PUT:
			e.Type = backend.EventPut
			e.KV = b.kv(ev.Kv)
			needPrev = ev.Kv.Version > 1 // 1: created
		case mvccpb.DELETE:
			e.Type = backend.EventDelete
			e.KV = backend.KV{Key: string(ev.Kv.Key[len(b.prefix):]), ModRevision: rev}
		}
		if ev.PrevKv != nil {
			prev := b.kv(ev.PrevKv)
			e.PrevKV = &prev
		} else if needPrev {
			for len(out) > 0 && out[len(out)-1].Revision == rev {
				out = out[:len(out)-1]
			}
			return out, fmt.Errorf("%w: etcd no longer has the previous value of %q for revision %d",
				backend.ErrCompacted, e.KV.Key, rev)
		}
		out = append(out, e)
	}
	return out, nil
}

// eventBytes is what an event holds in memory, roughly.
func eventBytes(ev backend.Event) int {
	n := len(ev.KV.Key) + len(ev.KV.Value) + 64
	if ev.PrevKV != nil {
		n += len(ev.PrevKV.Key) + len(ev.PrevKV.Value) + 32
	}
	return n
}
