package store

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelModel is what a labelIndex must answer: key → encoded labels.
type labelModel map[string]string

// indexOp is one change of a label index: a set (enc != "" or set) or a remove.
type indexOp struct {
	key    string
	enc    string
	remove bool
}

// indexKeys are the keys the tests use: several prefixes, so that prefixes and
// ranges cut the index in different places.
func indexKey(i int) string {
	return fmt.Sprintf("/g/r%d/ns%02d/o%05d", i%3, (i/3)%7, i)
}

var indexLabelSets = []string{
	"",
	labelsOf(map[string]string{"app": "a"}),
	labelsOf(map[string]string{"app": "b"}),
	labelsOf(map[string]string{"app": "a", "tier": "x"}),
	labelsOf(map[string]string{"tier": "x", "team": "t1"}),
	labelsOf(map[string]string{"team": "t2", "one": "1"}),
}

// randomOps returns n changes drawn from rng over keys [0, space).
func randomOps(rng *rand.Rand, n, space int, removeEvery int) []indexOp {
	ops := make([]indexOp, n)
	for i := range ops {
		ops[i] = indexOp{key: indexKey(rng.Intn(space)), enc: indexLabelSets[rng.Intn(len(indexLabelSets))]}
		if removeEvery > 0 && rng.Intn(removeEvery) == 0 {
			ops[i].remove = true
		}
	}
	return ops
}

func applyOps(x *labelIndex, m labelModel, ops []indexOp) {
	for _, op := range ops {
		if op.remove {
			x.remove(op.key)
			delete(m, op.key)
		} else {
			x.set(op.key, op.enc)
			m[op.key] = op.enc
		}
	}
}

// checkIndex compares every answer of x with the model's, and x's own invariants.
func checkIndex(t *testing.T, x *labelIndex, m labelModel) {
	t.Helper()
	require.Equal(t, len(m), x.len())
	sorted := make([]string, 0, len(m))
	for k := range m {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	// The leaves: none empty or over full, in order, counted right.
	var all []string
	n := 0
	require.Len(t, x.keys.sizes, len(x.keys.leaves))
	for i, l := range x.keys.leaves {
		require.Equal(t, int32(len(l.keys)), x.keys.sizes[i], "leaf %d's size", i)
		require.NotEmpty(t, l.keys)
		require.LessOrEqual(t, len(l.keys), keyLeafMax)
		require.Len(t, l.vals, len(l.keys))
		all = append(all, l.keys...)
		n += len(l.keys)
	}
	require.Equal(t, n, x.keys.len())
	require.Equal(t, sorted, append([]string{}, all...), "the leaves hold the keys in order")
	// Every key's labels, and the sets' counts.
	refs := map[string]int{}
	for k, enc := range m {
		got, ok := x.labelsAt(k)
		require.True(t, ok, k)
		require.Equal(t, enc, got, k)
		refs[enc]++
	}
	live := 0
	for id, s := range x.sets.sets {
		if s.refs == 0 {
			continue
		}
		live++
		assert.Equal(t, refs[s.enc], s.refs, "set %q", s.enc)
		assert.Equal(t, uint32(id), x.sets.ids[s.enc])
	}
	assert.Equal(t, len(refs), live, "one set per distinct set of labels")
	_, ok := x.labelsAt("/nope")
	assert.False(t, ok)
	// Counts and label lookups under every prefix, from several starts.
	prefixes := []string{"", "/", "/g/", "/g/r1/", "/g/r2/ns03/", "/g/r0/ns00/o0", "/h/", "\xff"}
	for _, p := range prefixes {
		starts := []string{"", p}
		for i := 0; i < len(sorted); i += 1 + len(sorted)/7 {
			if strings.HasPrefix(sorted[i], p) {
				starts = append(starts, sorted[i], sorted[i]+"\x00")
			}
		}
		for _, s := range starts {
			want := 0
			for _, k := range sorted {
				if strings.HasPrefix(k, p) && k >= s {
					want++
				}
			}
			assert.Equal(t, want, x.countFrom(p, s), "countFrom(%q, %q)", p, s)
		}
		for _, lv := range []string{"app\x00a", "app\x00b", "tier\x00x", "one\x001", "team\x00t1", "app\x00z"} {
			var want []string
			for _, k := range sorted {
				if strings.HasPrefix(k, p) && strings.Contains("\x00"+m[k], "\x00"+lv+"\x00") {
					want = append(want, k)
				}
			}
			assert.Equal(t, want, x.keysWith(p, lv), "keysWith(%q, %q)", p, lv)
		}
	}
}

func TestLabelIndex(t *testing.T) {
	inOrder := func(n int) []indexOp {
		ops := make([]indexOp, n)
		for i := range ops {
			ops[i] = indexOp{key: fmt.Sprintf("/g/r0/ns00/o%05d", i), enc: indexLabelSets[i%len(indexLabelSets)]}
		}
		return ops
	}
	reversed := func(ops []indexOp) []indexOp {
		ops = slices.Clone(ops)
		slices.Reverse(ops)
		return ops
	}
	removeAll := func(ops []indexOp) []indexOp {
		out := slices.Clone(ops)
		for i := range out {
			out[i].remove = true
		}
		return out
	}
	rng := rand.New(rand.NewSource(1))
	tests := []struct {
		name  string
		steps [][]indexOp // checked after each step
	}{
		{name: "empty", steps: [][]indexOp{nil}},
		{name: "one key", steps: [][]indexOp{{{key: "/g/r0/ns00/o1", enc: indexLabelSets[1]}}}},
		{name: "in order fills leaves", steps: [][]indexOp{inOrder(1000)}},
		{name: "reverse order", steps: [][]indexOp{reversed(inOrder(1000))}},
		{name: "random sets and removes", steps: [][]indexOp{randomOps(rng, 3000, 2000, 0), randomOps(rng, 3000, 2000, 3)}},
		{name: "remove everything", steps: [][]indexOp{inOrder(700), removeAll(inOrder(700)), inOrder(10)}},
		{name: "remove most, then add", steps: [][]indexOp{randomOps(rng, 2000, 1500, 0), randomOps(rng, 4000, 1500, 1), randomOps(rng, 500, 1500, 0)}},
		{name: "relabel in place", steps: [][]indexOp{inOrder(300), inOrder(300)[:150], randomOps(rng, 600, 300, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, m := &labelIndex{}, labelModel{}
			for _, step := range tt.steps {
				applyOps(x, m, step)
				checkIndex(t, x, m)
			}
		})
	}
}

func TestLabelIndex_in_order_leaves_stay_full(t *testing.T) {
	x := &labelIndex{}
	for i := range 100 * keyLeafMax {
		x.set(fmt.Sprintf("/k/%06d", i), "")
	}
	assert.Equal(t, 100, len(x.keys.leaves), "keys added in order fill each leaf")
}

func TestLabelIndex_leaves_written_in_order_per_namespace_stay_full(t *testing.T) {
	// Objects created in turn in 20 namespaces, as the scale table loads them: each
	// namespace's keys come in order, in the middle of the index.
	const namespaces, per = 20, 3000
	x := &labelIndex{}
	for i := range namespaces * per {
		x.set(fmt.Sprintf("/g/r/ns%03d/o%06d", i%namespaces, i), "")
	}
	full := namespaces * per / keyLeafMax
	assert.LessOrEqual(t, len(x.keys.leaves), full+2*namespaces,
		"about one leaf that is not full per namespace (%d leaves for %d full ones)", len(x.keys.leaves), full)
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ prefix, want string }{
		{"", ""},
		{"/a/", "/a0"},
		{"a\xff", "b"},
		{"\xff\xff", ""},
		{"a\x7f", "a\x80"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.prefix), func(t *testing.T) {
			assert.Equal(t, tt.want, prefixEnd(tt.prefix))
		})
	}
}

// FuzzLabelIndex applies the changes data describes (3 bytes each: a key of 600, a set
// of labels or a remove) to an index and to a map, and compares their answers.
func FuzzLabelIndex(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, uint16(0))
	f.Add([]byte{0, 0, 0, 0, 0, 7}, uint16(500))
	f.Fuzz(func(t *testing.T, data []byte, bulk uint16) {
		x, m := &labelIndex{}, labelModel{}
		// bulk keys first, in order, so that the changes below split and merge
		// leaves.
		for i := range int(bulk % 2048) {
			x.set(indexKey(i*7%600), indexLabelSets[i%len(indexLabelSets)])
			m[indexKey(i*7%600)] = indexLabelSets[i%len(indexLabelSets)]
		}
		for ; len(data) >= 3; data = data[3:] {
			key := indexKey((int(data[0])<<8 | int(data[1])) % 600)
			if c := int(data[2]) % (len(indexLabelSets) + 1); c == len(indexLabelSets) {
				x.remove(key)
				delete(m, key)
			} else {
				x.set(key, indexLabelSets[c])
				m[key] = indexLabelSets[c]
			}
		}
		checkIndex(t, x, m)
	})
}
