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
//
// The cache is bounded by count and by bytes: each entry is charged [EntrySize] of
// its stored bytes, an estimate of the decoded object's memory.
type Cache struct {
	mu       sync.RWMutex
	m        map[string]CacheEntry
	max      int
	maxBytes int64 // 0: no bound by bytes
	bytes    int64 // the charges of the entries
}

// CacheEntry is an object of the cache: Obj decoded at revision Rev, and Rev as a
// resourceVersion (RV).
type CacheEntry struct {
	Rev  int64
	Obj  resource.Object
	RV   string
	size int64 // what the entry is charged
}

// EntrySize is what the cache charges for an object whose stored form is n bytes:
// a decoded object holds about its JSON's bytes in strings, plus about a kilobyte of
// structs, maps and slices (2,077 bytes for the 1,144 bytes of the benchmarks'
// VirtualClusterInstance).
func EntrySize(n int) int64 { return int64(n) + 1024 }

// NewCache returns a cache of at most max objects (0: 100,000) and at most maxBytes
// bytes of entries as [EntrySize] charges them (maxBytes <= 0: no bound by bytes);
// nil for max < 0.
func NewCache(max int, maxBytes int64) *Cache {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = 100000
	}
	return &Cache{m: map[string]CacheEntry{}, max: max, maxBytes: max64(maxBytes, 0)}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
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

// Put stores obj, decoded at rev from size stored bytes, which the caller must not
// change afterwards. It evicts entries to make room.
func (c *Cache) Put(key string, rev int64, size int, obj resource.Object) {
	if c == nil || rev == 0 {
		return
	}
	c.PutRV(key, rev, strconv.FormatInt(rev, 10), size, obj)
}

// PutRV is Put with rv, rev as a resourceVersion, already formatted.
func (c *Cache) PutRV(key string, rev int64, rv string, size int, obj resource.Object) {
	c.put(key, rev, rv, size, obj, true)
}

// Offer stores obj as Put does when the cache has room for it without evicting
// anything, and reports whether it did. A scan of more objects than the cache holds
// offers them instead of putting them, so that it does not replace what the cache
// holds with objects it reads once.
func (c *Cache) Offer(key string, rev int64, size int, obj resource.Object) bool {
	if c == nil || rev == 0 {
		return false
	}
	return c.put(key, rev, strconv.FormatInt(rev, 10), size, obj, false)
}

// HasRoom reports whether an object of size stored bytes would fit without an
// eviction (as Offer puts it).
func (c *Cache) HasRoom(size int) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.fitsLocked(EntrySize(size))
}

func (c *Cache) fitsLocked(charge int64) bool {
	return len(c.m) < c.max && (c.maxBytes == 0 || c.bytes+charge <= c.maxBytes)
}

func (c *Cache) put(key string, rev int64, rv string, size int, obj resource.Object, evict bool) bool {
	if c == nil || rev == 0 {
		return false
	}
	charge := EntrySize(size)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.m[key]
	if had && old.Rev > rev {
		return false // a newer revision is already here
	}
	if had {
		c.bytes -= old.size
		delete(c.m, key)
	}
	if !c.fitsLocked(charge) {
		if !evict || c.maxBytes > 0 && charge > c.maxBytes {
			// Not evicting (Offer), or larger than the whole cache: the entry
			// replaced above is gone, which is right since it is older.
			return false
		}
		for k, e := range c.m { // evict arbitrary entries
			if c.fitsLocked(charge) {
				break
			}
			c.bytes -= e.size
			delete(c.m, k)
		}
	}
	c.m[key] = CacheEntry{Rev: rev, Obj: obj, RV: rv, size: charge}
	c.bytes += charge
	return true
}

// Bytes is the sum of the entries' charges.
func (c *Cache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}

// Drop forgets key.
func (c *Cache) Drop(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		c.bytes -= e.size
		delete(c.m, key)
	}
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
