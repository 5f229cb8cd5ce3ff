package badger

import "github.com/management-service/mgmt/store/backend"

// maxRecentBytes bounds the values recentValues keeps.
const maxRecentBytes = 8 << 20

// recentValues keeps the latest committed value of recently written keys, so that
// the event of the next write of a key carries the previous value (PrevKV) without
// a read of badger: a controller updates the same objects again and again. The
// value of a key at a revision never changes, so an entry is right for as long as
// its revision is the one asked for; a write of the key replaces it, a deletion
// drops it. Only the committer goroutine uses it, and it records only what was
// committed. The values are those of the published events, shared and never
// modified.
type recentValues struct {
	m     map[string]recentValue
	fifo  []recentRef // insertion order, for eviction; stale refs are skipped
	seq   uint64
	bytes int
}

type recentValue struct {
	modRev int64
	value  []byte
	seq    uint64
}

type recentRef struct {
	key string
	seq uint64
}

// get returns key's value at modRev, when it is kept.
func (r *recentValues) get(key string, modRev int64) ([]byte, bool) {
	v, ok := r.m[key]
	if !ok || v.modRev != modRev {
		return nil, false
	}
	return v.value, true
}

// record takes in the events of a committed revision.
func (r *recentValues) record(events []backend.Event) {
	if r.m == nil {
		r.m = map[string]recentValue{}
	}
	for _, ev := range events {
		if old, ok := r.m[ev.KV.Key]; ok {
			r.bytes -= len(old.value)
			delete(r.m, ev.KV.Key)
		}
		if ev.Type != backend.EventPut || len(ev.KV.Value) > maxRecentBytes/16 {
			continue
		}
		r.seq++
		r.m[ev.KV.Key] = recentValue{modRev: ev.KV.ModRevision, value: ev.KV.Value, seq: r.seq}
		r.fifo = append(r.fifo, recentRef{ev.KV.Key, r.seq})
		r.bytes += len(ev.KV.Value)
	}
	// Evict the oldest until the values fit.
	for r.bytes > maxRecentBytes && len(r.fifo) > 0 {
		ref := r.fifo[0]
		r.fifo = r.fifo[1:]
		if v, ok := r.m[ref.key]; ok && v.seq == ref.seq {
			r.bytes -= len(v.value)
			delete(r.m, ref.key)
		}
	}
	// Drop the refs of entries replaced or deleted since, so that fifo stays in
	// proportion to m.
	if len(r.fifo) > 2*len(r.m)+64 {
		live := r.fifo[:0]
		for _, ref := range r.fifo {
			if v, ok := r.m[ref.key]; ok && v.seq == ref.seq {
				live = append(live, ref)
			}
		}
		r.fifo = live
	}
}
