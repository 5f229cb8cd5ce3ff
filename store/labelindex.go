package store

import (
	"slices"
	"sort"
	"strings"
)

// The label index's data: every object's key, in key order, with the id of its set
// of labels; each distinct set of labels is kept once.
//
// It covers every object, so its size per object is most of what a store holds in
// memory per object beyond its backend's own. A key costs its string and 20 bytes
// in a leaf of sorted keys (keyIndex), with no map entry of its own; a set of labels
// costs once however many objects carry it (labelSets). In key order, the keys serve
// both questions a list asks: the keys under a prefix carrying a label (a scan of the
// keys under the prefix that tests each key's set id, no sort), and how many keys
// follow a page (sums of leaf sizes, cheap enough for every page of a list).

// keyLeafMax is the most keys a leaf of a keyIndex holds.
const keyLeafMax = 128

// keyIndex is an ordered map from key to a uint32, in leaves of at most keyLeafMax
// sorted keys; every key of a leaf is below every key of the next leaf. The zero
// keyIndex is empty.
type keyIndex struct {
	leaves []*keyLeaf
	sizes  []int32 // len(leaves[i].keys): a count sums these, not the leaves
	n      int
}

// keyLeaf is a leaf of a keyIndex: sorted keys and their values. Its slices have
// room for keyLeafMax+1 keys from the start, so an insert never reallocates.
type keyLeaf struct {
	keys []string
	vals []uint32
	last int // where the last insert went; -1: none yet
}

func newKeyLeaf() *keyLeaf {
	return &keyLeaf{keys: make([]string, 0, keyLeafMax+1), vals: make([]uint32, 0, keyLeafMax+1), last: -1}
}

// search returns where key is or would be in l, and whether it is there.
func (l *keyLeaf) search(key string) (int, bool) {
	return slices.BinarySearch(l.keys, key)
}

// leafFor returns the index of the leaf that holds key, or where it goes: the last
// leaf whose first key is at most key (the first leaf when there is none). The index
// must have a leaf.
func (x *keyIndex) leafFor(key string) int {
	i := sort.Search(len(x.leaves), func(i int) bool { return x.leaves[i].keys[0] > key })
	return max(i-1, 0)
}

// len is the number of keys.
func (x *keyIndex) len() int { return x.n }

// get returns key's value, and whether key is there.
func (x *keyIndex) get(key string) (uint32, bool) {
	if len(x.leaves) == 0 {
		return 0, false
	}
	l := x.leaves[x.leafFor(key)]
	if i, ok := l.search(key); ok {
		return l.vals[i], true
	}
	return 0, false
}

// put sets key's value to v, and returns the value it replaces, if any.
func (x *keyIndex) put(key string, v uint32) (old uint32, had bool) {
	if len(x.leaves) == 0 {
		l := newKeyLeaf()
		l.keys, l.vals = append(l.keys, key), append(l.vals, v)
		x.leaves, x.sizes, x.n = append(x.leaves, l), append(x.sizes, 1), 1
		return 0, false
	}
	li := x.leafFor(key)
	l := x.leaves[li]
	i, ok := l.search(key)
	if ok {
		old, l.vals[i] = l.vals[i], v
		return old, true
	}
	l.keys = slices.Insert(l.keys, i, key)
	l.vals = slices.Insert(l.vals, i, v)
	run := i == l.last+1
	l.last = i
	x.n++
	x.sizes[li]++
	if len(l.keys) <= keyLeafMax {
		return 0, false
	}
	// Split. Keys written in order (an open's build, objects created with growing
	// names, in each namespace) land one after the other: at the end of a leaf, the
	// leaf then stays full and the new one takes the rest; inside a leaf (the end of
	// one namespace, before the next), the leaf is cut just after the new key, so
	// that the next ones go to the end of its left half. Elsewhere it is cut in
	// the middle. Leaves written in order thus do not stay half empty.
	at := len(l.keys) / 2
	switch {
	case i == len(l.keys)-1:
		at = keyLeafMax
	case run:
		at = i + 1
	}
	r := newKeyLeaf()
	r.keys = append(r.keys, l.keys[at:]...)
	r.vals = append(r.vals, l.vals[at:]...)
	clear(l.keys[at:])
	l.keys, l.vals = l.keys[:at], l.vals[:at]
	if i >= at {
		r.last, l.last = i-at, -1
	}
	x.leaves = slices.Insert(x.leaves, li+1, r)
	x.sizes[li] = int32(at)
	x.sizes = slices.Insert(x.sizes, li+1, int32(len(r.keys)))
	return 0, false
}

// del removes key, and returns its value, if it was there.
func (x *keyIndex) del(key string) (uint32, bool) {
	if len(x.leaves) == 0 {
		return 0, false
	}
	li := x.leafFor(key)
	l := x.leaves[li]
	i, ok := l.search(key)
	if !ok {
		return 0, false
	}
	old := l.vals[i]
	l.keys = slices.Delete(l.keys, i, i+1)
	l.vals = slices.Delete(l.vals, i, i+1)
	x.n--
	x.sizes[li]--
	switch {
	case len(l.keys) == 0:
		x.leaves = slices.Delete(x.leaves, li, li+1)
		x.sizes = slices.Delete(x.sizes, li, li+1)
	case len(l.keys) < keyLeafMax/4:
		// Merge a small leaf into a neighbour when both fit in three quarters of a
		// leaf, so that deletes do not leave many small leaves behind.
		if li+1 < len(x.leaves) && len(l.keys)+len(x.leaves[li+1].keys) <= 3*keyLeafMax/4 {
			x.merge(li)
		} else if li > 0 && len(l.keys)+len(x.leaves[li-1].keys) <= 3*keyLeafMax/4 {
			x.merge(li - 1)
		}
	}
	return old, true
}

// merge moves the keys of leaf li+1 into leaf li, and drops leaf li+1.
func (x *keyIndex) merge(li int) {
	l, r := x.leaves[li], x.leaves[li+1]
	l.keys = append(l.keys, r.keys...)
	l.vals = append(l.vals, r.vals...)
	x.leaves = slices.Delete(x.leaves, li+1, li+2)
	x.sizes[li] = int32(len(l.keys))
	x.sizes = slices.Delete(x.sizes, li+1, li+2)
}

// ascend calls fn with each key from lo on, in order, with its value, until fn
// returns false.
func (x *keyIndex) ascend(lo string, fn func(key string, v uint32) bool) {
	if len(x.leaves) == 0 {
		return
	}
	li := x.leafFor(lo)
	i, _ := x.leaves[li].search(lo)
	for ; li < len(x.leaves); li, i = li+1, 0 {
		l := x.leaves[li]
		for ; i < len(l.keys); i++ {
			if !fn(l.keys[i], l.vals[i]) {
				return
			}
		}
	}
}

// countRange returns the number of keys from lo (inclusive) to hi (exclusive; ""
// means no end).
func (x *keyIndex) countRange(lo, hi string) int {
	if len(x.leaves) == 0 || hi != "" && hi <= lo {
		return 0
	}
	li := x.leafFor(lo)
	i, _ := x.leaves[li].search(lo)
	n := -i
	if hi == "" {
		for _, c := range x.sizes[li:] {
			n += int(c)
		}
		return n
	}
	// The leaf where hi goes; the leaves between are summed from sizes alone.
	hj := max(li, x.leafFor(hi))
	for _, c := range x.sizes[li:hj] {
		n += int(c)
	}
	j, _ := x.leaves[hj].search(hi)
	return n + j
}

// prefixEnd returns the least string above every string that starts with prefix; ""
// when there is none (prefix is empty or all 0xff bytes).
func prefixEnd(prefix string) string {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			return prefix[:i] + string([]byte{prefix[i] + 1})
		}
	}
	return ""
}

// labelSets interns the encoded label sets of the objects (labelsOf): each distinct
// set gets an id and is kept once, with the number of objects carrying it.
type labelSets struct {
	ids  map[string]uint32   // encoded set → id
	sets []labelSet          // by id
	free []uint32            // ids of sets no object carries, to use again
	byLV map[string][]uint32 // "label\x00value" → ids of the sets carrying it
}

// labelSet is one distinct set of labels.
type labelSet struct {
	enc  string // labelsOf
	refs int    // objects carrying it; 0: the id is free
}

// ref returns the id of the set enc, with one more object carrying it.
func (s *labelSets) ref(enc string) uint32 {
	if id, ok := s.ids[enc]; ok {
		s.sets[id].refs++
		return id
	}
	if s.ids == nil {
		s.ids, s.byLV = map[string]uint32{}, map[string][]uint32{}
	}
	var id uint32
	if n := len(s.free); n > 0 {
		id, s.free = s.free[n-1], s.free[:n-1]
		s.sets[id] = labelSet{enc: enc, refs: 1}
	} else {
		id = uint32(len(s.sets))
		s.sets = append(s.sets, labelSet{enc: enc, refs: 1})
	}
	s.ids[enc] = id
	eachLabel(enc, func(lv string) {
		if ids, ok := s.byLV[lv]; ok {
			s.byLV[lv] = append(ids, id)
		} else {
			s.byLV[strings.Clone(lv)] = []uint32{id}
		}
	})
	return id
}

// unref records that one object fewer carries the set id, and forgets the set when
// none does.
func (s *labelSets) unref(id uint32) {
	set := &s.sets[id]
	if set.refs--; set.refs > 0 {
		return
	}
	delete(s.ids, set.enc)
	eachLabel(set.enc, func(lv string) {
		ids := s.byLV[lv]
		if i := slices.Index(ids, id); i >= 0 {
			ids = slices.Delete(ids, i, i+1)
		}
		if len(ids) == 0 {
			delete(s.byLV, lv)
		} else {
			s.byLV[lv] = ids
		}
	})
	*set = labelSet{}
	s.free = append(s.free, id)
}

// labelIndex is the label index: every object's key with the id of its label set.
type labelIndex struct {
	keys keyIndex
	sets labelSets
}

// set records that the object at key carries the labels enc (labelsOf).
func (x *labelIndex) set(key, enc string) {
	id := x.sets.ref(enc) // before the old set's unref: an unchanged set stays
	if old, had := x.keys.put(key, id); had {
		x.sets.unref(old)
	}
}

// remove records that there is no object at key.
func (x *labelIndex) remove(key string) {
	if old, had := x.keys.del(key); had {
		x.sets.unref(old)
	}
}

// labelsAt returns the encoded labels of the object at key, and whether there is
// one.
func (x *labelIndex) labelsAt(key string) (string, bool) {
	id, ok := x.keys.get(key)
	if !ok {
		return "", false
	}
	return x.sets.sets[id].enc, true
}

// len is the number of objects.
func (x *labelIndex) len() int { return x.keys.len() }

// keysWith returns, in order, the keys under prefix of the objects carrying the
// label lv ("label\x00value"). It tests the set id of every key under prefix, and
// stops once it has found every object carrying the label.
func (x *labelIndex) keysWith(prefix, lv string) []string {
	ids := x.sets.byLV[lv]
	if len(ids) == 0 {
		return nil
	}
	want := 0
	carries := make([]uint64, (len(x.sets.sets)+63)/64)
	for _, id := range ids {
		want += x.sets.sets[id].refs
		carries[id/64] |= 1 << (id % 64)
	}
	var keys []string
	x.keys.ascend(prefix, func(key string, id uint32) bool {
		if !strings.HasPrefix(key, prefix) {
			return false
		}
		if carries[id/64]&(1<<(id%64)) != 0 {
			keys = append(keys, key)
			want--
		}
		return want > 0
	})
	return keys
}

// countFrom returns the number of objects under prefix whose keys are start or
// after it.
func (x *labelIndex) countFrom(prefix, start string) int {
	return x.keys.countRange(max(start, prefix), prefixEnd(prefix))
}
