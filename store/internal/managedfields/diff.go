package managedfields

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"sync"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// neverTrackedMeta reports whether a metadata field is never recorded by any entry:
// it is set by the server or is the bookkeeping itself.
func neverTrackedMeta(name []byte) bool {
	switch string(name) {
	case "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields":
		return true
	}
	return false
}

// scope decides which paths of an object a write records.
type scope struct {
	onlyStatus   bool // a status subresource write records status only
	ignoreStatus bool // a main-resource write of a kind with a status subresource
}

func scopeOf(w Write) scope {
	if w.Subresource == "status" {
		return scope{onlyStatus: true}
	}
	return scope{ignoreStatus: w.Subresource == "" && w.StatusSubresource}
}

// skip reports whether the field name, a child of a node at the given depth (0 for
// the object itself; inMeta says that node is metadata), is never recorded.
func (s scope) skip(depth int, inMeta bool, name []byte) bool {
	switch depth {
	case 0:
		switch string(name) {
		case "apiVersion", "kind":
			return true
		case "status":
			return s.ignoreStatus
		}
		return s.onlyStatus
	case 1:
		return inMeta && neverTrackedMeta(name)
	}
	return false
}

// valueKind is what a walk sees at one path.
type valueKind int

const (
	absent   valueKind = iota
	scalar             // a string, number, boolean, null or list (lists are atomic)
	emptyObj           // {}: a leaf, like Kubernetes' "empty promotes to leaf"
	object             // a non-empty object: its fields are compared one by one
)

// member is one field of an encoded object (or an element of an array, for equal):
// where its decoded name is (see tape.name), where its value is in the encoding and,
// when the value is an object that was parsed, where its members are in the tape (k0
// == -1 otherwise); ready says that list is sorted by name and holds each name once
// (see sortKids). same says the value is byte for byte the one of the same name in
// the object it was compared with (see parseObject). A member holds no pointers, so
// the lists cost the garbage collector nothing.
type member struct {
	ns, ne int // the name: t.b[ns:ne], or t.names[ns:ne] when esc
	vs, ve int
	k0, k1 int
	esc    bool
	ready  bool
	same   bool
}

// tape is an encoded object parsed once: the member lists of every object in it that
// was parsed, each list contiguous, an object's list after those of the objects
// inside it.
type tape struct {
	b     []byte
	m     []member
	names []byte // the decoded names that differ from their encoding
}

// name returns the decoded name of m.
func (t *tape) name(m *member) []byte {
	if m.esc {
		return t.names[m.ns:m.ne]
	}
	return t.b[m.ns:m.ne]
}

// setName records the name encoded (without quotes) at t.b[s:e] in m and returns it
// decoded; flags are what jsonscan.ScanString reported about it.
func (t *tape) setName(m *member, s, e int, flags jsonscan.Flags) []byte {
	name := t.b[s:e]
	if flags == 0 || !jsonscan.NeedsUnquote(name) {
		m.ns, m.ne = s, e
		return name
	}
	n := len(t.names)
	t.names = jsonscan.AppendUnquoted(t.names, name)
	m.ns, m.ne, m.esc = n, len(t.names), true
	return t.names[n:]
}

// differ compares two encoded objects without decoding them. Its buffers are reused
// across calls (see differs); nothing it returns may outlive its release.
type differ struct {
	l, r   tape     // the old and the new object
	stk    []member // members of the objects being parsed
	ea, eb tape     // values being compared by equal
	scope  scope

	// changed collects the paths the write added or modified, removed those it
	// removed, both in canonical FieldsV1 form.
	changed, removed emitter

	ar      arena   // set encodings computed by Update
	entries []entry // Update's working copy of the entries
	list    []*entry
}

var differs = sync.Pool{New: func() any { return new(differ) }}

func getDiffer() *differ { return differs.Get().(*differ) }

// release returns d to the pool, unless it grew too large to keep.
func (d *differ) release() {
	if cap(d.ar.buf) > 64<<10 || cap(d.changed.buf) > 64<<10 || cap(d.removed.buf) > 64<<10 ||
		cap(d.l.m) > 4096 || cap(d.r.m) > 4096 || cap(d.stk) > 4096 || cap(d.ea.m) > 4096 ||
		cap(d.eb.m) > 4096 || cap(d.entries) > 256 {
		return
	}
	// Drop what refers to the caller's data.
	d.l.b, d.r.b, d.ea.b, d.eb.b = nil, nil, nil, nil
	d.ar.buf = d.ar.buf[:0]
	clear(d.entries)
	d.entries = d.entries[:0]
	clear(d.list)
	d.list = d.list[:0]
	differs.Put(d)
}

// decodeObject decodes an encoded object, which must be one JSON object.
func decodeObject(b []byte) (map[string]any, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object, not %s", jsonKind(v))
	}
	return m, nil
}

// objectError explains why oldObj (when not nil) or newObj is not one JSON object, the
// way encoding/json does.
func objectError(oldObj, newObj []byte) error {
	if oldObj != nil {
		if _, err := decodeObject(oldObj); err != nil {
			return fmt.Errorf("managedfields: old object: %w", err)
		}
	}
	if _, err := decodeObject(newObj); err != nil {
		return fmt.Errorf("managedfields: new object: %w", err)
	}
	return errors.New("managedfields: invalid JSON")
}

// compare compares the encoded objects (old may be nil: nothing existed) and leaves
// in d.changed the paths the write added or whose value it changed, and in d.removed
// those it removed. It follows structured-merge-diff's comparison for a schema-less
// object: leaves are scalars, lists and empty objects; a non-empty object that
// appears is added itself (the "." marker), one that disappears is removed itself,
// and one that replaces a scalar (or is replaced by one) is modified itself, besides
// its fields being added or removed.
//
// Members are matched by decoded name whatever their order (a repeated name counts
// once, the last one, as encoding/json decodes it), values that are equal byte for
// byte are skipped without looking inside, and other scalars are compared by value.
func (d *differ) compare(oldObj, newObj []byte, s scope) error {
	d.scope = s
	d.l = tape{b: oldObj, m: d.l.m[:0], names: d.l.names[:0]}
	d.r = tape{b: newObj, m: d.r.m[:0], names: d.r.names[:0]}
	d.stk = d.stk[:0]
	d.changed.reset()
	d.removed.reset()
	// The objects themselves, as members of nothing.
	var lr, rr member
	var h *tape
	if oldObj != nil {
		if !d.parseTop(&d.l, &lr, nil, nil) {
			return objectError(oldObj, newObj)
		}
		h = &d.l
		sortKids(h, &lr)
	}
	if !d.parseTop(&d.r, &rr, h, &lr) {
		return objectError(oldObj, newObj)
	}
	sortKids(&d.r, &rr)
	d.walkMembers(0, false, d.l.m[lr.k0:lr.k1], d.r.m[rr.k0:rr.k1])
	return nil
}

// parseTop parses t.b, which must be one JSON object and nothing else, as the value
// of m; hm is the object in h to compare with (h may be nil).
func (d *differ) parseTop(t *tape, m *member, h *tape, hm *member) bool {
	i := jsonscan.SkipSpace(t.b, 0)
	if i >= len(t.b) || t.b[i] != '{' {
		return false
	}
	m.vs = i
	var shift, diffAt int
	if h != nil {
		shift = hm.vs - m.vs
		diffAt = m.vs + firstDiff(t.b[m.vs:], h.b[hm.vs:])
	}
	var ok bool
	m.ve, m.k0, m.k1, m.ready, ok = d.parseObject(t, m.vs, 1, h, hm, shift, diffAt)
	return ok && jsonscan.SkipSpace(t.b, m.ve) == len(t.b)
}

// parseObject validates the object at t.b[vs] == '{', at nesting depth depth, parses
// it and the objects in it into t and returns the index after it, where its members
// are in t.m and whether they are sorted.
//
// When h is not nil, hm is the object's counterpart in h, with its members sorted,
// and every member gets same set when its value equals the counterpart's byte for
// byte; such a value is neither validated nor parsed. shift and diffAt say what is
// known: t.b[x] == h.b[x+shift] for x from vs up to diffAt, where they differ (or
// one ends). Values inside that range need no comparing, and passing the knowledge
// down keeps the comparing linear however deep the objects nest.
func (d *differ) parseObject(t *tape, vs, depth int, h *tape, hm *member, shift, diffAt int) (ve, k0, k1 int, ready, ok bool) {
	if depth > jsonscan.MaxDepth {
		return
	}
	b := t.b
	base := len(d.stk)
	i := jsonscan.SkipSpace(b, vs+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, len(t.m), len(t.m), true, true
	}
	var hs []member
	if h != nil {
		hs = h.m[hm.k0:hm.k1]
	}
	sorted := true
	for {
		if i >= len(b) || b[i] != '"' {
			return
		}
		end, flags, err := jsonscan.ScanString(b, i)
		if err != nil {
			return
		}
		var c member
		name := t.setName(&c, i+1, end-1, flags)
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return
		}
		c.vs, c.ve, c.k0, c.k1 = jsonscan.SkipSpace(b, i+1), -1, -1, -1
		var (
			hc            *member
			cShift, cDiff int
		)
		if x := findName(h, hs, name); x >= 0 {
			hc = &hs[x]
			n := hc.ve - hc.vs
			cShift, cDiff = hc.vs-c.vs, diffAt
			if cShift != shift || c.vs > diffAt {
				cDiff = c.vs + firstDiff(b[c.vs:min(len(b), c.vs+n)], h.b[hc.vs:hc.ve])
			}
			if e := c.vs + n; e <= cDiff && (e == len(b) || isDelim(b[e])) {
				c.ve, c.same = e, true
			}
		}
		switch {
		case c.same:
		case c.vs < len(b) && b[c.vs] == '{':
			hh := h
			if hc == nil || hc.k0 < 0 {
				hh, hc = nil, nil
			} else {
				sortKids(h, hc)
			}
			if c.ve, c.k0, c.k1, c.ready, ok = d.parseObject(t, c.vs, depth+1, hh, hc, cShift, cDiff); !ok {
				return
			}
		default:
			if c.ve, ok = jsonscan.SkipValue(b, c.vs, depth+1); !ok {
				return
			}
		}
		if n := len(d.stk); n > base && !nameLess(t.name(&d.stk[n-1]), name) {
			sorted = false
		}
		d.stk = append(d.stk, c)
		i = jsonscan.SkipSpace(b, c.ve)
		if i >= len(b) {
			return
		}
		if b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
			continue
		}
		if b[i] != '}' {
			return
		}
		break
	}
	k0 = len(t.m)
	t.m = append(t.m, d.stk[base:]...)
	d.stk = d.stk[:base]
	return i + 1, k0, len(t.m), sorted, true
}

// firstDiff returns the length of the common prefix of a and b.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// sortKids sorts the members of m's object by name, keeping the last of a repeated
// name, unless that is done.
func sortKids(t *tape, m *member) {
	if m.ready {
		return
	}
	ms := t.m[m.k0:m.k1]
	if len(ms) > 32 {
		slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(t.name(&a), t.name(&b)) })
	}
	for i := 1; i < len(ms); i++ { // a stable insertion sort for short lists
		if !nameLess(t.name(&ms[i]), t.name(&ms[i-1])) {
			continue
		}
		x := ms[i]
		xn := t.name(&x)
		j := i
		for ; j > 0 && nameLess(xn, t.name(&ms[j-1])); j-- {
			ms[j] = ms[j-1]
		}
		ms[j] = x
	}
	w := 0
	for k := range ms {
		if k+1 < len(ms) && bytes.Equal(t.name(&ms[k]), t.name(&ms[k+1])) {
			continue // a later value of the same name wins
		}
		ms[w] = ms[k]
		w++
	}
	m.k1 = m.k0 + w
	m.ready = true
}

func nameLess(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return bytes.Compare(a, b) < 0
}

// findName returns the index of name in the sorted list ms of t, or -1.
func findName(t *tape, ms []member, name []byte) int {
	lo, hi := 0, len(ms)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if nameLess(t.name(&ms[h]), name) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(ms) && bytes.Equal(t.name(&ms[lo]), name) {
		return lo
	}
	return -1
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// kindAt classifies the value of m in t.
func kindAt(t *tape, m *member) valueKind {
	switch {
	case m == nil:
		return absent
	case t.b[m.vs] != '{':
		return scalar
	case m.k0 >= 0 && m.k1 > m.k0, m.k0 < 0 && t.b[jsonscan.SkipSpace(t.b, m.vs+1)] != '}':
		return object
	}
	return emptyObj
}

// walkMembers compares the members of two objects at the given depth (inMeta: the
// objects are metadata).
func (d *differ) walkMembers(depth int, inMeta bool, lm, rm []member) {
	i, j := 0, 0
	for i < len(lm) || j < len(rm) {
		var l, r *member
		switch {
		case j >= len(rm):
			l = &lm[i]
			i++
		case i >= len(lm):
			r = &rm[j]
			j++
		default:
			switch c := bytes.Compare(d.l.name(&lm[i]), d.r.name(&rm[j])); {
			case c < 0:
				l = &lm[i]
				i++
			case c > 0:
				r = &rm[j]
				j++
			default:
				l, r = &lm[i], &rm[j]
				i++
				j++
			}
		}
		var name []byte
		if l != nil {
			name = d.l.name(l)
		} else {
			name = d.r.name(r)
		}
		if d.scope.skip(depth, inMeta, name) {
			continue
		}
		if l != nil && r != nil && r.same {
			continue // equal byte for byte: nothing changed below
		}
		d.walk(depth+1, name, l, r)
	}
}

// walk compares the values l and r (nil: absent) of the field name at the given
// depth (1 for a top-level field).
func (d *differ) walk(depth int, name []byte, l, r *member) {
	lk, rk := kindAt(&d.l, l), kindAt(&d.r, r)
	markable := depth > 1 || string(name) != "metadata"
	if lk != object && rk != object {
		switch {
		case !markable:
		case l == nil:
			d.changed.leaf(name)
		case r == nil:
			d.removed.leaf(name)
		case !d.equal(d.l.b[l.vs:l.ve], d.r.b[r.vs:r.ve]):
			d.changed.leaf(name)
		}
		return
	}
	d.changed.open(name, markable && (lk == absent || (rk != absent && (lk == scalar || rk == scalar))))
	d.removed.open(name, markable && lk != absent && rk == absent)
	var lm, rm []member
	if lk == object {
		sortKids(&d.l, l)
		lm = d.l.m[l.k0:l.k1]
	}
	if rk == object {
		sortKids(&d.r, r)
		rm = d.r.m[r.k0:r.k1]
	}
	d.walkMembers(depth, depth == 1 && string(name) == "metadata", lm, rm)
	d.changed.close()
	d.removed.close()
}

// equal compares two valid encoded values as decoded JSON: numbers by value (as
// int64 when both are integers, else as float64), strings by their decoded text,
// objects whatever their member order (a repeated name counting once, the last).
func (d *differ) equal(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if a[0] != b[0] && !(isNumberStart(a[0]) && isNumberStart(b[0])) {
		return false
	}
	d.ea = tape{b: a, m: d.ea.m[:0], names: d.ea.names[:0]}
	d.eb = tape{b: b, m: d.eb.m[:0], names: d.eb.names[:0]}
	return d.eqDOM(d.dom(&d.ea, 0), d.dom(&d.eb, 0))
}

// dom parses the valid value at t.b[i] into t: for an array its elements in order,
// for an object its members, each list contiguous in t.m.
func (d *differ) dom(t *tape, i int) member {
	b := t.b
	m := member{vs: i, k0: -1, k1: -1}
	switch b[i] {
	case '{', '[':
		obj := b[i] == '{'
		base := len(d.stk)
		m.ready = true // arrays keep their order; objects are sorted when compared
		j := jsonscan.SkipSpace(b, i+1)
		if b[j] != '}' && b[j] != ']' {
			for {
				var c member
				var name []byte
				if obj {
					end, flags, _ := jsonscan.ScanString(b, j)
					var n member
					name = t.setName(&n, j+1, end-1, flags)
					j = jsonscan.SkipSpace(b, jsonscan.SkipSpace(b, end)+1) // past ':'
					c = d.dom(t, j)
					c.ns, c.ne, c.esc = n.ns, n.ne, n.esc
				} else {
					c = d.dom(t, j)
				}
				if k := len(d.stk); obj && k > base && !nameLess(t.name(&d.stk[k-1]), name) {
					m.ready = false
				}
				d.stk = append(d.stk, c)
				if j = jsonscan.SkipSpace(b, c.ve); b[j] != ',' {
					break
				}
				j = jsonscan.SkipSpace(b, j+1)
			}
		}
		m.k0 = len(t.m)
		t.m = append(t.m, d.stk[base:]...)
		m.k1, m.ve = len(t.m), j+1
		d.stk = d.stk[:base]
	case '"':
		m.ve, _, _ = jsonscan.ScanString(b, i)
	default:
		m.ve, _ = jsonscan.SkipValue(b, i, 0)
	}
	return m
}

// eqDOM compares x in d.ea with y in d.eb.
func (d *differ) eqDOM(x, y member) bool {
	av, bv := d.ea.b[x.vs:x.ve], d.eb.b[y.vs:y.ve]
	switch ca, cb := av[0], bv[0]; {
	case ca == '{' && cb == '{', ca == '[' && cb == '[':
		sortKids(&d.ea, &x)
		sortKids(&d.eb, &y)
		if x.k1-x.k0 != y.k1-y.k0 {
			return false
		}
		for k := 0; k < x.k1-x.k0; k++ {
			xm, ym := d.ea.m[x.k0+k], d.eb.m[y.k0+k]
			if !bytes.Equal(d.ea.name(&xm), d.eb.name(&ym)) || !d.eqDOM(xm, ym) {
				return false
			}
		}
		return true
	case ca == '"' && cb == '"':
		s, t := av[1:len(av)-1], bv[1:len(bv)-1]
		if bytes.Equal(s, t) {
			return true
		}
		if !jsonscan.NeedsUnquote(s) && !jsonscan.NeedsUnquote(t) {
			return false
		}
		return bytes.Equal(jsonscan.Unquote(s), jsonscan.Unquote(t))
	case isNumberStart(ca) && isNumberStart(cb):
		return numbersEqualBytes(av, bv)
	}
	return bytes.Equal(av, bv) // true, false, null, or values of different kinds
}

func isNumberStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

// emitter writes a set in canonical FieldsV1 form while an object is walked in name
// order: open and close bracket an object field, leaf adds a member without children.
type emitter struct {
	buf   []byte
	stack []emitFrame
	n     int // entries written in the innermost open node, "." included
}

type emitFrame struct {
	start, keyEnd, n int
	member           bool
}

func (e *emitter) reset() {
	e.buf = append(e.buf[:0], '{')
	e.stack = e.stack[:0]
	e.n = 0
}

func (e *emitter) key(name []byte) {
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, `"f:`...)
	e.buf = jsonscan.AppendEscaped(e.buf, name)
	e.buf = append(e.buf, '"', ':')
}

func (e *emitter) leaf(name []byte) {
	e.key(name)
	e.buf = append(e.buf, "{}"...)
	e.n++
}

// open starts the node of field name, itself a member or not.
func (e *emitter) open(name []byte, member bool) {
	f := emitFrame{start: len(e.buf), n: e.n, member: member}
	e.key(name)
	f.keyEnd = len(e.buf)
	e.stack = append(e.stack, f)
	e.buf = append(e.buf, '{')
	e.n = 0
	if member {
		e.buf = append(e.buf, dotMember...)
		e.n = 1
	}
}

// close ends the innermost open node, dropping it when it is neither a member nor
// has children.
func (e *emitter) close() {
	f := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	kids := e.n
	if f.member {
		kids--
	}
	e.n = f.n + 1
	switch {
	case kids > 0:
		e.buf = append(e.buf, '}')
	case f.member:
		e.buf = append(e.buf[:f.keyEnd], "{}"...)
	default:
		e.buf = e.buf[:f.start]
		e.n = f.n
	}
}

// set returns the encoding written, nil when empty. It stays valid until the next
// reset.
func (e *emitter) set() []byte {
	if len(e.buf) == 1 {
		return nil
	}
	e.buf = append(e.buf, '}')
	return e.buf[:len(e.buf):len(e.buf)]
}

// numbersEqualBytes is numbersEqual for number literals as written.
func numbersEqualBytes(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if x, ok := smallInt(a); ok {
		if y, ok := smallInt(b); ok {
			return x == y
		}
	}
	return numbersEqual(json.Number(a), json.Number(b))
}

// smallInt parses an integer literal of at most 18 digits, which always fits an
// int64.
func smallInt(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	ai, aerr := strconv.ParseInt(string(a), 10, 64)
	bi, berr := strconv.ParseInt(string(b), 10, 64)
	if aerr == nil && berr == nil {
		return ai == bi
	}
	af, aerr := strconv.ParseFloat(string(a), 64)
	bf, berr := strconv.ParseFloat(string(b), 64)
	return aerr == nil && berr == nil && af == bf
}

// FromObject returns the paths a write by w records when it creates obj, an encoded
// JSON object: every field at any depth that is a scalar, null, a list (lists are
// atomic: their items are never tracked separately) or an empty object, plus every
// non-empty object below the top level (written with the "." marker, as Kubernetes
// writes it for objects without a typed schema), except what is never tracked:
// apiVersion, kind, metadata itself and metadata.name, namespace, uid,
// resourceVersion, generation, creationTimestamp, deletionTimestamp,
// deletionGracePeriodSeconds and managedFields. When w.StatusSubresource is set and
// w.Subresource is empty, status is not tracked either; when w.Subresource is
// "status", only status is tracked. Only those two fields of w are used.
// FromObject(obj, w) is the set Update records for w when it creates obj.
func FromObject(obj []byte, w Write) (Set, error) {
	d := getDiffer()
	defer d.release()
	if err := d.compare(nil, obj, scopeOf(w)); err != nil {
		return Set{}, err
	}
	return Set{enc: bytes.Clone(d.changed.set())}, nil
}
