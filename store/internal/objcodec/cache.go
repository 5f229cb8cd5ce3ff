package objcodec

import (
	"strconv"
	"sync"

	"github.com/management-service/mgmt/resource"
)

// Cache keeps decoded objects by key and modRevision, so that reads, lists and watch
// fan-out copy a decoded object instead of decoding JSON again. An entry is valid
// only for the exact revision it was decoded at; a stale one is a miss, never a
// wrong answer. Cached objects are never handed out: callers get deep copies. A nil
// *Cache caches nothing.
type Cache struct {
	mu  sync.RWMutex
	m   map[string]CacheEntry
	max int
}

// CacheEntry is an object of the cache: Obj decoded at revision Rev, and Rev as a
// resourceVersion (RV).
type CacheEntry struct {
	Rev int64
	Obj resource.Object
	RV  string
}

// NewCache returns a cache of at most max objects (0: 100,000); nil for max < 0.
func NewCache(max int) *Cache {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = 100000
	}
	return &Cache{m: map[string]CacheEntry{}, max: max}
}

// Has reports whether the cache holds an object for key, at any revision.
func (c *Cache) Has(key string) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	_, ok := c.m[key]
	c.mu.RUnlock()
	return ok
}

// Get returns the object of key at rev, nil when there is none.
func (c *Cache) Get(key string, rev int64) resource.Object {
	return c.Entry(key, rev).Obj
}

// Entry returns the entry of key at rev; a zero entry when there is none.
func (c *Cache) Entry(key string, rev int64) CacheEntry {
	if c == nil || rev == 0 {
		return CacheEntry{}
	}
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.Rev != rev {
		return CacheEntry{}
	}
	return e
}

// Put stores obj, decoded at rev, which the caller must not change afterwards.
func (c *Cache) Put(key string, rev int64, obj resource.Object) {
	if c == nil || rev == 0 {
		return
	}
	c.PutRV(key, rev, strconv.FormatInt(rev, 10), obj)
}

// PutRV is Put with rv, rev as a resourceVersion, already formatted.
func (c *Cache) PutRV(key string, rev int64, rv string, obj resource.Object) {
	if c == nil || rev == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok && old.Rev > rev {
		return // a newer revision is already here
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m { // evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[key] = CacheEntry{Rev: rev, Obj: obj, RV: rv}
}

// Drop forgets key.
func (c *Cache) Drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// Len is the number of objects cached.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
