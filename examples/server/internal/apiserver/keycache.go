package apiserver

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// keyEntry is one stored AccessKey, ready to authenticate and authorize with.
type keyEntry struct {
	key   *resource.AccessKey
	scope *policy.Compiled // nil when the stored scope is invalid: it allows nothing
	rv    uint64
}

// keyCache finds AccessKeys by the hash of their secret. It follows the store with a
// watch, so that updated and deleted keys take effect at once, and it lists the keys
// again when a request brings a hash it does not know, so that a key works as soon
// as its create returned. Concurrent misses share one list, and a miss is answered
// from a list that started after the request arrived.
type keyCache struct {
	store *store.Store
	log   *slog.Logger

	mu      sync.Mutex
	byHash  map[string]*keyEntry
	byName  map[string]*keyEntry
	seen    map[string]uint64 // name -> newest resourceVersion applied (deletions too)
	loaded  bool
	current *refresh  // the list in flight
	last    time.Time // when the last completed list started
}

type refresh struct {
	started time.Time
	done    chan struct{}
	rv      string
	err     error
}

func newKeyCache(s *store.Store, log *slog.Logger) *keyCache {
	return &keyCache{store: s, log: log, byHash: map[string]*keyEntry{},
		byName: map[string]*keyEntry{}, seen: map[string]uint64{}}
}

func (c *keyCache) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loaded
}

func parseRV(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// apply records the state of one key (nil: deleted) at revision rv, unless a newer
// state of it is known already.
func (c *keyCache) apply(name string, key *resource.AccessKey, rv uint64) {
	if rv != 0 && rv <= c.seen[name] {
		return
	}
	c.seen[name] = rv
	if old := c.byName[name]; old != nil {
		delete(c.byName, name)
		if c.byHash[old.key.Spec.KeyHash] == old {
			delete(c.byHash, old.key.Spec.KeyHash)
		}
	}
	if key == nil {
		return
	}
	e := &keyEntry{key: key, rv: rv}
	if sc, err := policy.Compile(key.Spec.Scope); err == nil {
		e.scope = sc
	} else {
		c.log.Warn("access key has an invalid scope: it allows nothing", "key", name, "error", err)
	}
	c.byName[name] = e
	if key.Spec.KeyHash != "" {
		c.byHash[key.Spec.KeyHash] = e
	}
}

// list reads every key once and merges them in; it returns the list's revision.
func (c *keyCache) list(ctx context.Context) (string, error) {
	var l resource.AccessKeyList
	if err := c.store.List(ctx, &l, store.ListOptions{}); err != nil {
		return "", err
	}
	listRV := parseRV(l.ResourceVersion)
	c.mu.Lock()
	defer c.mu.Unlock()
	present := make(map[string]bool, len(l.Items))
	for i := range l.Items {
		k := &l.Items[i]
		present[k.Name] = true
		c.apply(k.Name, k, parseRV(k.ResourceVersion))
	}
	for name := range c.byName {
		if !present[name] {
			c.apply(name, nil, listRV)
		}
	}
	c.loaded = true
	return l.ResourceVersion, nil
}

// refreshAfter makes sure a list that started at or after t has completed, starting
// one if needed, and waits for it (or ctx).
func (c *keyCache) refreshAfter(ctx context.Context, t time.Time) {
	for {
		c.mu.Lock()
		if !c.last.Before(t) {
			c.mu.Unlock()
			return
		}
		r := c.current
		if r == nil {
			r = &refresh{started: time.Now(), done: make(chan struct{})}
			c.current = r
			c.mu.Unlock()
			go c.runRefresh(r)
		} else {
			c.mu.Unlock()
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return
		}
		if r.err != nil || !r.started.Before(t) {
			return
		}
	}
}

func (c *keyCache) runRefresh(r *refresh) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.rv, r.err = c.list(ctx)
	if r.err != nil {
		c.log.Error("listing access keys failed", "error", r.err)
	}
	c.mu.Lock()
	if r.err == nil && r.started.After(c.last) {
		c.last = r.started
	}
	c.current = nil
	c.mu.Unlock()
	close(r.done)
}

// lookup returns the key whose hash is hash, listing again when it is not known and
// the cache is older than the request (arrived).
func (c *keyCache) lookup(ctx context.Context, hash string, arrived time.Time) *keyEntry {
	c.mu.Lock()
	e := c.byHash[hash]
	c.mu.Unlock()
	if e != nil {
		return e
	}
	c.refreshAfter(ctx, arrived)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byHash[hash]
}

// run lists and watches the keys until stop is closed.
func (c *keyCache) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		started := time.Now()
		rv, err := c.list(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Error("listing access keys failed", "error", err)
			}
			sleep(ctx, backoff)
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		c.mu.Lock()
		if started.After(c.last) {
			c.last = started
		}
		c.mu.Unlock()
		backoff = 100 * time.Millisecond
		c.follow(ctx, rv)
	}
}

// follow applies the watch events after revision rv until the watch ends.
func (c *keyCache) follow(ctx context.Context, rv string) {
	w, err := c.store.Watch(ctx, &resource.AccessKey{}, store.WatchOptions{ResourceVersion: rv})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("watching access keys failed; listing again", "error", err)
		}
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case store.Added, store.Modified:
			k, ok := ev.Object.(*resource.AccessKey)
			if !ok {
				continue
			}
			c.mu.Lock()
			c.apply(k.Name, k, parseRV(k.ResourceVersion))
			c.mu.Unlock()
		case store.Deleted:
			m := ev.Object.GetObjectMeta()
			c.mu.Lock()
			c.apply(m.Name, nil, parseRV(m.ResourceVersion))
			c.mu.Unlock()
		case store.Error:
			if ctx.Err() == nil {
				c.log.Warn("access key watch ended; listing again", "error", ev.Err)
			}
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
