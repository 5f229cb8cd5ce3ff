package store

import (
	"bytes"
	"hash/maphash"
)

// Summaries the store's own writes offer the tracker's loop just before they commit,
// so that the loop need not decode the value again when the watch delivers it.

// pendingKey finds an offer by key and a hash of the value, so that the offers of
// several writes of one key, made before the loop reaches the first, are all kept.
type pendingKey struct {
	key  string
	hash uint64
}

type pendingInfo struct {
	value []byte
	info  *objInfo
}

// maxPending bounds the offered summaries (a loop far behind the writers could
// otherwise hold many); beyond it an arbitrary one is dropped, and its value decoded
// when the watch delivers it.
const maxPending = 4096

// offer gives the loop the summary of value, about to be written at key.
func (t *tracker) offer(key string, value []byte, info *objInfo) {
	pk := pendingKey{key: key, hash: maphash.Bytes(t.seed, value)}
	t.pmu.Lock()
	if _, ok := t.pending[pk]; !ok && len(t.pending) >= maxPending {
		for k := range t.pending {
			delete(t.pending, k)
			break
		}
	}
	t.pending[pk] = pendingInfo{value: value, info: info}
	t.pmu.Unlock()
}

// take returns the summary offered for exactly value at key, or nil.
func (t *tracker) take(key string, value []byte) *objInfo {
	pk := pendingKey{key: key, hash: maphash.Bytes(t.seed, value)}
	t.pmu.Lock()
	defer t.pmu.Unlock()
	p, ok := t.pending[pk]
	if !ok || !bytes.Equal(p.value, value) {
		return nil
	}
	delete(t.pending, pk)
	return p.info
}
