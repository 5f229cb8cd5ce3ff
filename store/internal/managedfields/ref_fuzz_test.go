package managedfields

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// gen turns fuzz input into choices: each call consumes a byte, so the fuzzer's
// mutations steer the generated objects and edits; once the input is used up, the
// bytes come from a generator seeded with it.
type gen struct {
	data []byte
	i    int
	x    uint64
}

func (g *gen) byte() byte {
	if g.i < len(g.data) {
		b := g.data[g.i]
		g.i++
		return b
	}
	if g.x == 0 {
		g.x = 0x9E3779B97F4A7C15
		for _, b := range g.data {
			g.x = (g.x ^ uint64(b)) * 0x100000001B3
		}
		g.x |= 1
	}
	g.x ^= g.x << 13
	g.x ^= g.x >> 7
	g.x ^= g.x << 17
	return byte(g.x >> 32)
}

func (g *gen) intn(n int) int { return int(g.byte()) % n }

// chance is true with probability about p/256.
func (g *gen) chance(p int) bool { return int(g.byte()) < p }

func pick[T any](g *gen, xs []T) T { return xs[g.intn(len(xs))] }

// jv is a JSON value as written: numbers keep their spelling, strings and names are
// raw Go strings that may hold invalid UTF-8 (written as is, which encoding/json
// decodes to U+FFFD), objects keep their member order and repeated names.
type jv struct {
	kind int // jNull, jBool, jNum, jStr, jArr, jObj
	b    bool
	num  string
	str  string
	arr  []*jv
	obj  []jkv
}

type jkv struct {
	name string
	v    *jv
}

const (
	jNull = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

var (
	fuzzNames = []string{"a", "b", "c", "spec", "status", "metadata", "apiVersion", "kind", "name", "namespace",
		"labels", "annotations", "managedFields", "resourceVersion", "generation", "uid", "ttl", "x y", "<tag>&",
		"ü", "a\"b", "back\\slash", "\u2028", "", "f:", "\xff", "\xfe", "\ufffd", "tab\there", "\U0001F600", "aa", "ab"}
	fuzzNumbers = []string{"0", "-0", "1", "1.0", "10e-1", "0.1e1", "100", "1e2", "1E+2", "-1", "2", "1.5",
		"9007199254740993", "9007199254740992", "9007199254740992.0", "1e400", "-1e400", "1e-400", "0.0",
		"12345678901234567890", "12345678901234567890.0", "9223372036854775807", "9223372036854775808",
		"3.0000000000000001", "3", "123456789012345678", "123456789012345678.0"}
	fuzzStrings = []string{"", "x", "y", "ab", "ü", "\xff", "\xfe", "\ufffd", "<>&", "\u2028", "a\"b", "c\\d",
		"line\nbreak", "\x00", strings.Repeat("long-", 9), strings.Repeat("long-", 9) + "!", "\U0001F600", "\xed\xa0\x80"}
)

// value makes a random value; depth limits nesting.
func (g *gen) value(depth int) *jv {
	k := g.intn(8)
	if depth <= 0 && k >= 5 {
		k = g.intn(5)
	}
	switch k {
	case 0:
		return &jv{kind: jNull}
	case 1:
		return &jv{kind: jBool, b: g.chance(128)}
	case 2:
		return &jv{kind: jNum, num: pick(g, fuzzNumbers)}
	case 3, 4:
		return &jv{kind: jStr, str: pick(g, fuzzStrings)}
	case 5:
		v := &jv{kind: jArr}
		for n := g.intn(4); n > 0; n-- {
			v.arr = append(v.arr, g.value(depth-1))
		}
		return v
	default:
		return g.object(depth - 1)
	}
}

func (g *gen) object(depth int) *jv {
	v := &jv{kind: jObj}
	for n := g.intn(6); n > 0; n-- {
		v.obj = append(v.obj, jkv{name: pick(g, fuzzNames), v: g.value(depth)})
	}
	return v
}

// equivalent returns a value equal to v as decoded JSON but possibly written
// differently: another spelling of a number, members reordered.
func (g *gen) equivalent(v *jv) *jv {
	switch v.kind {
	case jNum:
		alts := map[string][]string{"1": {"1.0", "10e-1", "0.1e1"}, "100": {"1e2", "1E+2"}, "0": {"-0", "0.0"},
			"9007199254740992": {"9007199254740992.0"}, "3": {"3.0000000000000001"}}
		if a, ok := alts[v.num]; ok {
			return &jv{kind: jNum, num: pick(g, a)}
		}
	case jObj:
		w := &jv{kind: jObj, obj: append([]jkv(nil), v.obj...)}
		if len(w.obj) > 1 && g.chance(128) {
			i, j := g.intn(len(w.obj)), g.intn(len(w.obj))
			if w.obj[i].name != w.obj[j].name {
				w.obj[i], w.obj[j] = w.obj[j], w.obj[i]
			}
		}
		for i := range w.obj {
			w.obj[i].v = g.equivalent(w.obj[i].v)
		}
		return w
	case jArr:
		w := &jv{kind: jArr}
		for _, x := range v.arr {
			w.arr = append(w.arr, g.equivalent(x))
		}
		return w
	}
	return v
}

// edit returns v changed at random places: values replaced or respelled, members
// added, removed or repeated.
func (g *gen) edit(v *jv, depth int) *jv {
	switch {
	case g.chance(20):
		return g.value(depth)
	case g.chance(30):
		return g.equivalent(v)
	}
	if v.kind != jObj {
		return v
	}
	w := &jv{kind: jObj}
	for _, m := range v.obj {
		switch {
		case g.chance(25): // removed
		case g.chance(15): // repeated: the later value wins
			w.obj = append(w.obj, jkv{name: m.name, v: g.value(depth)}, jkv{name: m.name, v: g.edit(m.v, depth-1)})
		default:
			w.obj = append(w.obj, jkv{name: m.name, v: g.edit(m.v, depth-1)})
		}
	}
	for n := g.intn(3); n > 0 && g.chance(60); n-- {
		w.obj = append(w.obj, jkv{name: pick(g, fuzzNames), v: g.value(depth)})
	}
	return w
}

// writer encodes values: compact and plain, or (fancy) with white space and
// escapes that do not change the decoded value.
type writer struct {
	g     *gen
	fancy bool
	buf   []byte
}

func (w *writer) space() {
	if w.fancy && w.g.chance(40) {
		w.buf = append(w.buf, pick(w.g, []string{" ", "\n", "\t", "\r\n  "})...)
	}
}

func (w *writer) str(s string) {
	w.buf = append(w.buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			w.buf = append(w.buf, '\\', c)
		case c < 0x20:
			w.buf = append(w.buf, fmt.Sprintf(`\u%04x`, c)...)
		case w.fancy && w.g.chance(30):
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				w.buf = append(w.buf, `\ud800`...) // a lone surrogate decodes to U+FFFD too
			case r > 0xFFFF:
				r1, r2 := (r-0x10000)>>10+0xD800, (r-0x10000)&0x3FF+0xDC00
				w.buf = append(w.buf, fmt.Sprintf(`\u%04X\u%04x`, r1, r2)...)
			case r == '/':
				w.buf = append(w.buf, `\/`...)
			default:
				w.buf = append(w.buf, fmt.Sprintf(`\u%04x`, r)...)
			}
			i += size
			continue
		default:
			w.buf = append(w.buf, c)
		}
		i++
	}
	w.buf = append(w.buf, '"')
}

func (w *writer) value(v *jv) {
	switch v.kind {
	case jNull:
		w.buf = append(w.buf, "null"...)
	case jBool:
		w.buf = strconv.AppendBool(w.buf, v.b)
	case jNum:
		w.buf = append(w.buf, v.num...)
	case jStr:
		w.str(v.str)
	case jArr:
		w.buf = append(w.buf, '[')
		for i, x := range v.arr {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.space()
			w.value(x)
			w.space()
		}
		w.buf = append(w.buf, ']')
	case jObj:
		w.buf = append(w.buf, '{')
		for i, m := range v.obj {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.space()
			w.str(m.name)
			w.space()
			w.buf = append(w.buf, ':')
			w.space()
			w.value(m.v)
			w.space()
		}
		w.space()
		w.buf = append(w.buf, '}')
	}
}

func (g *gen) encode(v *jv) []byte {
	w := &writer{g: g, fancy: g.chance(80)}
	w.space()
	w.value(v)
	w.space()
	return w.buf
}

// fieldsV1 makes a random fieldsV1 value: a set recorded for a random object, an
// arbitrary trie with every kind of key, written canonically or not, or garbage.
func (g *gen) fieldsV1() json.RawMessage {
	switch g.intn(6) {
	case 0:
		return json.RawMessage(pick(g, []string{``, `null`, `{}`, ` {} `, `{".":{}}`, `{"f:a":1}`, `[]`,
			`{"f:a":{".":{"f:b":{}}}}`, `{"x:a":{}}`, `{"i:x":{}}`, `{"f:a":{},"f:a":{"f:b":{}}}`}))
	case 1, 2:
		s, err := refFromObject(g.encode(g.object(3)), Write{})
		if err != nil {
			return nil
		}
		return s.FieldsV1()
	default:
		var b []byte
		g.trie(&b, 3, true)
		return b
	}
}

var fuzzKeys = []string{"f:a", "f:b", "f:spec", "f:metadata", "f:status", "f:labels", "f:x", "f:<&>", "f:ü",
	"f:a\"b", "i:0", "i:7", "i:007", "i:-1", "i:10", `k:{"name":"a"}`, `k:{ "b":1, "a":2 }`, `k:{"a":2,"b":1}`,
	`v:"x"`, "v:1", "v:1.0", "v:[1, 2]", "v:[1,2]", "f:", "f:\u2028"}

// trie writes a random FieldsV1 object, members in random order, "." anywhere.
func (g *gen) trie(b *[]byte, depth int, root bool) {
	*b = append(*b, '{')
	n := g.intn(4)
	if depth <= 0 {
		n = 0
	}
	first := true
	sep := func() {
		if !first {
			*b = append(*b, ',')
		}
		first = false
		if g.chance(10) {
			*b = append(*b, ' ')
		}
	}
	dot := !root && g.chance(90) || g.chance(10)
	for i := 0; i < n; i++ {
		if dot && g.chance(60) {
			sep()
			*b = append(*b, `".":{}`...)
			dot = false
		}
		sep()
		k, _ := json.Marshal(pick(g, fuzzKeys))
		*b = append(*b, k...)
		*b = append(*b, ':')
		g.trie(b, depth-1, false)
	}
	if dot && n > 0 {
		sep()
		*b = append(*b, `".":{}`...)
	}
	*b = append(*b, '}')
}

func (g *gen) entries() []resource.ManagedFieldsEntry {
	var out []resource.ManagedFieldsEntry
	for n := g.intn(5); n > 0; n-- {
		e := resource.ManagedFieldsEntry{
			Manager:     pick(g, []string{"m", "n", "alice", "", AncientChangesManager}),
			Operation:   pick(g, []string{resource.ManagedFieldsOperationUpdate, resource.ManagedFieldsOperationUpdate, resource.ManagedFieldsOperationApply}),
			APIVersion:  pick(g, []string{gv, gv, "management.service/v2", ""}),
			FieldsType:  resource.FieldsTypeV1,
			FieldsV1:    g.fieldsV1(),
			Subresource: pick(g, []string{"", "", "status"}),
		}
		if g.chance(4) {
			e.Operation = "Patch"
		}
		switch g.intn(4) {
		case 0:
		case 1:
			e.Time = &resource.Time{}
		default:
			e.Time = resource.NewTimePtr(at(g.intn(5)))
		}
		out = append(out, e)
	}
	return out
}

func (g *gen) write() Write {
	return Write{
		Manager:           pick(g, []string{"", "m", "n"}),
		APIVersion:        pick(g, []string{gv, "management.service/v2"}),
		Subresource:       pick(g, []string{"", "", "status"}),
		Now:               at(10 + g.intn(3)),
		StatusSubresource: g.chance(100),
	}
}

// sameError compares errors. The message of an error in fieldsV1 depends on map
// order when there are several (each implementation reports the first it meets), so
// a different message passes when the reference gives it too in some run.
func sameError(t *testing.T, what string, got, want error, again func() error) {
	t.Helper()
	if (got == nil) != (want == nil) {
		require.Failf(t, "error differs from the reference", "%s: error %v, reference %v", what, got, want)
	}
	if got == nil || got.Error() == want.Error() {
		return
	}
	var ge, we *EntryError
	if errors.As(got, &ge) != errors.As(want, &we) ||
		ge != nil && (ge.Index != we.Index || ge.Field != we.Field || ge.Manager != we.Manager) {
		require.Failf(t, "error differs from the reference", "%s: error %v, reference %v", what, got, want)
	}
	for range 1000 {
		if again().Error() == got.Error() {
			return
		}
	}
	require.Failf(t, "error message differs from the reference", "%s: error %q, reference %q", what, got, want)
}

func sameEntries(t *testing.T, what string, got, want []resource.ManagedFieldsEntry) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		require.Failf(t, "entries differ from the reference", "%s:\n got %q\nwant %q", what, show(got), show(want))
	}
}

// checkUpdate runs Update and the reference on the same input and compares them.
func checkUpdate(t *testing.T, entries []resource.ManagedFieldsEntry, oldObj, newObj []byte, w Write) []resource.ManagedFieldsEntry {
	t.Helper()
	what := fmt.Sprintf("Update(%q, %q, %q, %+v)", show(entries), oldObj, newObj, w)
	got, err := Update(entries, oldObj, newObj, w)
	want, werr := refUpdate(entries, oldObj, newObj, w)
	sameError(t, what, err, werr, func() error { _, e := refUpdate(entries, oldObj, newObj, w); return e })
	sameEntries(t, what, got, want)
	return want
}

// FuzzUpdateMatchesReference generates objects, edits of them (with values respelled,
// members reordered or repeated, white space and escapes) and managedFields entries,
// and checks that Update, FromObject, ParseFieldsV1, Resolve and the set operations
// give exactly what the original map-based implementation gives.
func FuzzUpdateMatchesReference(f *testing.F) {
	for _, seed := range []string{"", "\x00", "seed", "\xff\xfe\xfd\xfc", strings.Repeat("\x07\x81\xf3", 40),
		strings.Repeat("\x40\x10\x02\xc0", 64), strings.Repeat("\x05\x03\x60\x99\x21", 80)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		oldV := g.object(4)
		if g.chance(200) {
			// A real object's shape: the tracked and never-tracked parts.
			oldV.obj = append(oldV.obj,
				jkv{"metadata", &jv{kind: jObj, obj: []jkv{{"name", &jv{kind: jStr, str: "n"}}, {"labels", g.object(1)},
					{"managedFields", g.value(2)}, {"resourceVersion", &jv{kind: jStr, str: "1"}}}}},
				jkv{"spec", g.object(3)}, jkv{"status", g.object(2)})
		}
		newV := g.edit(oldV, 4)
		oldObj, newObj := g.encode(oldV), g.encode(newV)
		if g.chance(30) {
			newObj = append([]byte(nil), oldObj...)
		}
		entries := g.entries()
		w := g.write()

		// Create, then update on top of what the create recorded.
		created := checkUpdate(t, entries, nil, oldObj, w)
		w2 := g.write()
		updated := checkUpdate(t, created, oldObj, newObj, w2)
		checkUpdate(t, updated, newObj, oldObj, g.write())
		// Update from arbitrary entries, and entries a client might send.
		checkUpdate(t, entries, oldObj, newObj, w2)
		sub := pick(g, []string{"", "status"})
		res, err := Resolve(created, entries, sub)
		rres, rerr := refResolve(created, entries, sub)
		sameError(t, "Resolve", err, rerr, func() error { _, e := refResolve(created, entries, sub); return e })
		if !reflect.DeepEqual(res, rres) {
			require.Failf(t, "Resolve differs from the reference", "%q, reference %q", show(res), show(rres))
		}

		for _, obj := range [][]byte{oldObj, newObj} {
			for _, w := range []Write{{}, {StatusSubresource: true}, {Subresource: "status"}} {
				s, err := FromObject(obj, w)
				rs, rerr := refFromObject(obj, w)
				sameError(t, "FromObject", err, rerr, func() error { _, e := refFromObject(obj, w); return e })
				if err == nil && s.String() != rs.String() {
					require.Failf(t, "FromObject differs from the reference", "FromObject(%q): %s, reference %s", obj, s, rs)
				}
			}
		}

		// Sets: parse and operations.
		var sets []Set
		var refs []refSet
		for range 3 {
			raw := g.fieldsV1()
			s, err := ParseFieldsV1(raw)
			rs, rerr := refParseFieldsV1(raw)
			sameError(t, fmt.Sprintf("ParseFieldsV1(%q)", raw), err, rerr, func() error { _, e := refParseFieldsV1(raw); return e })
			if err != nil {
				continue
			}
			if s.String() != rs.String() || !bytes.Equal(s.FieldsV1(), rs.FieldsV1()) {
				require.Failf(t, "ParseFieldsV1 differs from the reference", "ParseFieldsV1(%q): %s, reference %s", raw, s, rs)
			}
			sets, refs = append(sets, s), append(refs, rs)
		}
		for i := range sets {
			for j := range sets {
				a, b, ra, rb := sets[i], sets[j], refs[i], refs[j]
				for _, op := range []struct {
					name      string
					got, want string
				}{
					{"Union", a.Union(b).String(), ra.Union(rb).String()},
					{"Difference", a.Difference(b).String(), ra.Difference(rb).String()},
					{"RecursiveDifference", a.RecursiveDifference(b).String(), ra.RecursiveDifference(rb).String()},
				} {
					if op.got != op.want {
						require.Failf(t, "set operation differs from the reference", "%s(%s, %s): %s, reference %s", op.name, a, b, op.got, op.want)
					}
				}
				if a.Equal(b) != ra.Equal(rb) || a.Empty() != ra.Empty() {
					require.Failf(t, "Equal/Empty differ from the reference", "Equal/Empty(%s, %s)", a, b)
				}
				for range 3 {
					var path []string
					for n := g.intn(4); n > 0; n-- {
						path = append(path, pick(g, fuzzKeys))
					}
					if a.Has(path...) != ra.Has(path...) {
						require.Failf(t, "Has differs from the reference", "Has(%s, %q)", a, path)
					}
				}
			}
		}
	})
}

// FuzzUpdateRawMatchesReference mutates raw bytes, so that invalid JSON, deep
// nesting and odd encodings reach Update, FromObject and ParseFieldsV1, and checks
// them against the reference.
func FuzzUpdateRawMatchesReference(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"spec":{"a":1,"b":[1,{"c":2}]}}`, `{"spec":{"b":[1.0,{"c":2e0}],"a":1}}`},
		{`{"metadata":{"name":"x","labels":{"a":"b"}},"spec":{"x":"\u00fc"}}`, `{"metadata":{"labels":{"a":"b"}},"spec":{"x":"ü"}}`},
		{`{"a":{"b":{}}}`, `{"a":{"b":{ }},"a":{"c":null}}`},
		{`{"f:spec":{".":{},"f:a":{}}}`, `{"f:spec":{"f:a":{},".":{}}}`},
		{`{}`, ` {"s":"\ud800x","t":"\uD83D\uDE00"} `},
		{`{"a":1}`, `{"a":1}x`},
		{`[]`, `{"a":-}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		w := Write{Manager: "m", APIVersion: gv, Now: at(1)}
		checkUpdate(t, nil, nil, b, w)
		checkUpdate(t, nil, a, b, w)
		checkUpdate(t, nil, a, b, Write{Manager: "m", Now: at(1), Subresource: "status"})
		s, err := ParseFieldsV1(a)
		rs, rerr := refParseFieldsV1(a)
		sameError(t, "ParseFieldsV1", err, rerr, func() error { _, e := refParseFieldsV1(a); return e })
		if err == nil && !bytes.Equal(s.FieldsV1(), rs.FieldsV1()) {
			require.Failf(t, "ParseFieldsV1 differs from the reference", "ParseFieldsV1(%q): %s, reference %s", a, s, rs)
		}
		entries := []resource.ManagedFieldsEntry{{Manager: "x", Operation: resource.ManagedFieldsOperationUpdate, FieldsV1: a}}
		checkUpdate(t, entries, b, b, w)
	})
}
