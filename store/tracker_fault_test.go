package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/management-service/mgmt/store/backend"
)

// faultBackend wraps a backend to inject the failures the store's background work
// must survive: a watch whose reader is held back (a slow consumer), watch starts
// and ranges that fail, watches ended with an error, and a hook run after each range
// of the tracker's prefix.
type faultBackend struct {
	backend.Backend

	mu        sync.Mutex
	held      chan struct{} // while not nil, watch events are held back until it is closed
	watchErr  error         // returned by Watch while set
	rangeErr  error         // returned by Range of the prefix "/" while set
	afterScan func(opts backend.RangeOptions)
	watchers  []*faultWatcher

	ranges  atomic.Int64 // Range calls of the prefix "/"
	watches atomic.Int64 // Watch calls that started a watcher
}

func (b *faultBackend) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	if opts.Prefix != "/" {
		return b.Backend.Range(ctx, opts)
	}
	b.ranges.Add(1)
	b.mu.Lock()
	err, hook := b.rangeErr, b.afterScan
	b.mu.Unlock()
	if err != nil {
		return backend.RangeResult{}, err
	}
	res, err := b.Backend.Range(ctx, opts)
	if hook != nil && err == nil {
		hook(opts)
	}
	return res, err
}

func (b *faultBackend) Watch(ctx context.Context, opts backend.WatchOptions) (backend.Watcher, error) {
	b.mu.Lock()
	err := b.watchErr
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	inner, err := b.Backend.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	b.watches.Add(1)
	w := &faultWatcher{b: b, inner: inner, out: make(chan backend.Event), stop: make(chan struct{})}
	b.mu.Lock()
	b.watchers = append(b.watchers, w)
	b.mu.Unlock()
	go w.forward()
	return w, nil
}

// hold holds back every watcher's events until release.
func (b *faultBackend) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held == nil {
		b.held = make(chan struct{})
	}
}

func (b *faultBackend) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		close(b.held)
		b.held = nil
	}
}

func (b *faultBackend) gate() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

func (b *faultBackend) setWatchErr(err error) {
	b.mu.Lock()
	b.watchErr = err
	b.mu.Unlock()
}

func (b *faultBackend) setRangeErr(err error) {
	b.mu.Lock()
	b.rangeErr = err
	b.mu.Unlock()
}

func (b *faultBackend) setAfterScan(fn func(opts backend.RangeOptions)) {
	b.mu.Lock()
	b.afterScan = fn
	b.mu.Unlock()
}

// endWatches ends every open watcher with err.
func (b *faultBackend) endWatches(err error) {
	b.mu.Lock()
	ws := b.watchers
	b.watchers = nil
	b.mu.Unlock()
	for _, w := range ws {
		w.end(err)
	}
}

type faultWatcher struct {
	b     *faultBackend
	inner backend.Watcher
	out   chan backend.Event
	stop  chan struct{}
	once  sync.Once

	mu  sync.Mutex
	err error // set by end, returned instead of the inner watcher's
}

func (w *faultWatcher) forward() {
	defer close(w.out)
	for ev := range w.inner.Events() {
		if g := w.b.gate(); g != nil {
			select {
			case <-g:
			case <-w.stop:
				return
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

func (w *faultWatcher) end(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.Stop()
}

func (w *faultWatcher) Events() <-chan backend.Event { return w.out }

func (w *faultWatcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.inner.Err()
}

func (w *faultWatcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

var errInjected = fmt.Errorf("injected failure: %w", backend.ErrInvalidArgument)
