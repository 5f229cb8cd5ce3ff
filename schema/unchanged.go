package schema

import (
	"bytes"
	"crypto/sha256"
	"sync"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// Validation of an update against what did not change.
//
// An update usually changes a small part of an object: one label of 40,000, one
// field of a spec. The parts it does not change were valid when the stored object
// was validated, so they need not be validated again, on two conditions:
//
//   - The stored object is known to be valid under this very schema. A Validator is
//     the compiled schema of its kind (Register makes a new one), and the Admitter
//     remembers, for each object it let through in this process, the
//     resourceVersion the write committed at and the Validator that passed it
//     (knownValid). An object it has not seen (written before the process started,
//     by another process on the same backend, or under a schema since replaced) is
//     validated whole.
//   - Validity of the part cannot depend on anything else. Validation walks from the
//     top of the object through the keywords whose checks only add up (properties,
//     patternProperties, additionalProperties, $ref, allOf): there, a value that
//     passed in the stored object passes again, whatever changed beside it. Under
//     any other keyword (anyOf, oneOf, not, if, enum, ...), and for every value that
//     differs from the stored one, the value is decoded and validated as a whole.
//
// The fields the store itself writes after admission (metadata.managedFields,
// generation, resourceVersion) were never validated in their stored form, so they
// are never taken as unchanged. When the walk finds anything invalid (or anything it
// does not handle), the whole object is validated as before, so the answer and its
// error messages are those of a full validation.
//
// Kubernetes' CRD validation ratcheting (KEP-4008) goes further: on an update it
// lets through values that are invalid under the current schema as long as they did
// not change. We do not ratchet: skipping is an optimization only, and every update
// gets the answer a full validation gives, so an object stored before a stricter
// schema was registered must be made valid by the update that touches it.

// maxKnownValid bounds the objects knownValid remembers.
const maxKnownValid = 1 << 16

// knownValid remembers which version of each object a Validator passed.
type knownValid struct {
	mu sync.Mutex
	m  map[string]knownVersion
}

type knownVersion struct {
	rv string
	v  *Validator
}

// put records that the object key at resourceVersion rv passed v.
func (k *knownValid) put(key, rv string, v *Validator) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = make(map[string]knownVersion)
	}
	if _, ok := k.m[key]; !ok && len(k.m) >= maxKnownValid {
		for drop := range k.m { // forget one, any
			delete(k.m, drop)
			break
		}
	}
	k.m[key] = knownVersion{rv: rv, v: v}
}

// passed reports whether the object key at resourceVersion rv passed v.
func (k *knownValid) passed(key, rv string, v *Validator) bool {
	if rv == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	kv, ok := k.m[key]
	return ok && kv.rv == rv && kv.v == v
}

// validUnchanged reports whether newDoc is certainly valid, given that oldDoc, the
// stored object it replaces, is valid under v. False means "not shown": the caller
// validates newDoc whole.
func (v *Validator) validUnchanged(newDoc, oldDoc []byte) bool {
	root := v.fastPath()
	if root == nil || depthExceeds(newDoc, MaxDepth) {
		return false
	}
	var hasAPIVersion, hasKind bool
	if !jsonscan.EachMember(newDoc, func(key, _ []byte) bool {
		switch string(key) {
		case "apiVersion":
			hasAPIVersion = true
		case "kind":
			hasKind = true
		}
		return true
	}) {
		return false
	}
	if !hasAPIVersion || !hasKind {
		// The full validation takes them to be the validator's: so does the walk.
		doc := []byte{'{'}
		if !hasAPIVersion {
			doc = append(doc, `"apiVersion":`...)
			doc = jsonscan.AppendQuote(doc, []byte(v.gvk.APIVersion()))
			doc = append(doc, ',')
		}
		if !hasKind {
			doc = append(doc, `"kind":`...)
			doc = jsonscan.AppendQuote(doc, []byte(v.gvk.Kind))
			doc = append(doc, ',')
		}
		i := jsonscan.SkipSpace(newDoc, jsonscan.SkipSpace(newDoc, 0)+1) // after the '{'

		if i < len(newDoc) && newDoc[i] == '}' {
			doc = doc[:len(doc)-1] // no member follows
		}
		newDoc = append(doc, newDoc[i:]...)
	}
	d := differ{memo: &v.memo, scratch: make([]member, 128)}
	return d.valid(root, newDoc, oldDoc, levelRoot, 0) && !d.run.aborted
}

// Where a value is in the object, for the members the store writes.
const (
	levelRoot = iota
	levelMeta
	levelOther
)

// member is one member of a JSON object: its key as written and its value.
type member struct{ key, value []byte }

// differ validates a new object against a stored one.
type differ struct {
	run   fastRun
	conds int // how many schemas that need not hold the walk is under
	memo  *validMemo
	lists map[span][]member // the members of the large objects listed so far

	scratch []member // room for member lists
}

// listMin is the size from which an object's member list is kept for the walk.
const listMin = 4 << 10

// span names a slice of the documents by where it is.
type span struct {
	p *byte
	n int
}

// members lists the members of the JSON object b (once per object: a schema may
// look at one several times), false when b is not one.
func (d *differ) members(b []byte) ([]member, bool) {
	k := span{&b[0], len(b)}
	if ms, ok := d.lists[k]; ok {
		return ms, true
	}
	ms := d.scratch[:0:len(d.scratch)]
	if !jsonscan.EachMember(b, func(key, value []byte) bool {
		ms = append(ms, member{key, value})
		return true
	}) {
		return nil, false
	}
	if len(b) < listMin {
		d.scratch = ms[len(ms):cap(ms)] // not kept: a small object is listed again
		return ms, true
	}
	if d.lists == nil {
		d.lists = make(map[span][]member)
	}
	d.lists[k] = ms
	return ms, true
}

// memoMin is the size from which a value that passed a schema is remembered.
const memoMin = 16 << 10

// maxMemo bounds the values a validMemo remembers.
const maxMemo = 1024

// validMemo remembers large values that passed a schema, by their SHA-256: an
// update usually sends back large parts it did not change (the managedFields of an
// object with many labels), and whether a value passes a schema of the fast path
// depends on nothing but the two.
type validMemo struct {
	mu sync.Mutex
	m  map[memoKey]struct{}
}

type memoKey struct {
	n   *fastNode
	sum [sha256.Size]byte
}

func (m *validMemo) has(k memoKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.m[k]
	return ok
}

func (m *validMemo) add(k memoKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = make(map[memoKey]struct{})
	}
	if len(m.m) >= maxMemo {
		clear(m.m)
	}
	m.m[k] = struct{}{}
}

// whole validates nb against n with the fast path, decoding it.
func (d *differ) whole(n *fastNode, nb []byte) bool {
	val, ok := decodeFast(nb)
	if !ok {
		d.run.aborted = true
		return false
	}
	return n.valid(&d.run, val, 0) && !d.run.aborted
}

// valid reports whether nb, which replaces ob (nil: nothing), is valid under n;
// inPlace counts the schemas applied to this value in place. Its answer is exact
// unless d.run.aborted is set (then the caller validates the whole object), given
// that ob passed n: a member or element equal to the one at the same place in ob is
// not looked at where n applies its schema to every member (properties,
// patternProperties, additionalProperties, items) or in place to the whole value
// ($ref, allOf). Under a keyword whose schema need not hold (not, anyOf, oneOf, if,
// then, else, contains) nothing is skipped. Objects and arrays are walked without
// being decoded; other values, and values under keywords the walk does not know,
// are decoded and given to the fast path.
func (d *differ) valid(n *fastNode, nb, ob []byte, level, inPlace int) bool {
	if d.run.aborted {
		return false
	}
	if inPlace > maxInPlace || len(nb) == 0 {
		d.run.aborted = true
		return false
	}
	if n.delegate || n.always != nil || len(n.consts) > 0 || len(n.enum) > 0 || nb[0] != '{' && nb[0] != '[' {
		return d.whole(n, nb)
	}
	if len(nb) >= memoMin && d.memo != nil && level == levelOther {
		// (The object and its metadata change with every write: not remembered.)
		k := memoKey{n: n, sum: sha256.Sum256(nb)}
		if d.memo.has(k) {
			return true
		}
		ok := d.walk(n, nb, ob, level, inPlace) && !d.run.aborted
		if ok {
			d.memo.add(k)
		}
		return ok
	}
	return d.walk(n, nb, ob, level, inPlace)
}

// walk is valid for an object or array under a schema the walk knows.
func (d *differ) walk(n *fastNode, nb, ob []byte, level, inPlace int) bool {
	if nb[0] == '{' {
		if n.types != 0 && n.types&typeObject == 0 || !d.object(n, nb, ob, level) {
			return false
		}
	} else if n.types != 0 && n.types&typeArray == 0 || !d.array(n, nb, ob) {
		return false
	}
	if n.ref != nil && !d.valid(n.ref, nb, ob, level, inPlace+1) {
		return false
	}
	for _, x := range n.allOf {
		if !d.valid(x, nb, ob, level, inPlace+1) {
			return false
		}
	}
	if n.not != nil && d.cond(n.not, nb, inPlace) {
		return false
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, x := range n.anyOf {
			if d.cond(x, nb, inPlace) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, x := range n.oneOf {
			if d.cond(x, nb, inPlace) {
				matched++
			}
		}
		if matched != 1 {
			return false
		}
	}
	if n.ifNode != nil {
		if d.cond(n.ifNode, nb, inPlace) {
			if n.thenNode != nil && !d.cond(n.thenNode, nb, inPlace) {
				return false
			}
		} else if n.elseNode != nil && !d.cond(n.elseNode, nb, inPlace) {
			return false
		}
	}
	return !d.run.aborted
}

// cond is valid for a schema that need not hold: nothing under it is skipped, and
// duplicate keys (which decoding resolves to the last) stop the walk.
func (d *differ) cond(n *fastNode, nb []byte, inPlace int) bool {
	d.conds++
	ok := d.valid(n, nb, nil, levelOther, inPlace+1)
	d.conds--
	return ok && !d.run.aborted
}

// object checks the object nb against n's object keywords.
func (d *differ) object(n *fastNode, nb, ob []byte, level int) bool {
	var oms []member
	if len(ob) > 0 && ob[0] == '{' {
		var ok bool
		if oms, ok = d.members(ob); !ok {
			d.run.aborted = true
			return false
		}
	}
	nms, ok := d.members(nb)
	if !ok {
		d.run.aborted = true
		return false
	}
	if n.minProps != -1 || n.maxProps != -1 || d.conds > 0 {
		distinct := distinctKeys(nms)
		if distinct < len(nms) && d.conds > 0 {
			// A duplicate key: the walk would look at every one, decoding keeps the
			// last, and under a schema that need not hold the answer must be exact.
			d.run.aborted = true
			return false
		}
		if n.maxProps != -1 && distinct > n.maxProps || n.minProps != -1 && distinct < n.minProps {
			return false
		}
	}
	for _, p := range n.required {
		if !hasKey(nms, p) {
			return false
		}
	}
	for name, deps := range n.depRequired {
		if hasKey(nms, name) {
			for _, p := range deps {
				if !hasKey(nms, p) {
					return false
				}
			}
		}
	}
	cur := 0
	for _, m := range nms {
		key, value := m.key, m.value
		var old []byte
		// The members are in the same order in both (the same encoder wrote them):
		// look a few ahead for the stored one, else take it as new.
		for x := cur; x < len(oms) && x < cur+4; x++ {
			if bytes.Equal(oms[x].key, key) {
				old, cur = oms[x].value, x+1
				break
			}
		}
		name := jsonscan.Unquote(key)
		child := levelOther
		switch {
		case level == levelRoot && string(name) == "metadata":
			// Walked, never skipped whole: the store writes some of it after admission.
			child = levelMeta
		case level == levelMeta && (string(name) == "managedFields" || string(name) == "generation" ||
			string(name) == "resourceVersion"):
			old = nil // written by the store after admission: never validated as stored
		case old != nil && bytes.Equal(old, value):
			continue // passed in the stored object under the same schemas
		}
		if old == nil && n.propNames != nil && !n.propNames.valid(&d.run, string(name), 0) {
			return false // a new name (an old one passed propertyNames already)
		}
		evaluated := false
		if p, found := n.props[string(name)]; found {
			evaluated = true
			if !d.valid(p, value, old, child, 0) {
				return false
			}
		}
		for _, pp := range n.patternProps {
			if pp.re.Match(name) {
				evaluated = true
				if !d.valid(pp.node, value, old, child, 0) {
					return false
				}
			}
		}
		if evaluated {
			continue
		}
		if n.addlAllowed != nil && !*n.addlAllowed || n.addl != nil && !d.valid(n.addl, value, old, child, 0) {
			return false
		}
	}
	return true
}

// array checks the array nb against n's array keywords; an element equal to the
// stored one at the same index passed the same schema there.
func (d *differ) array(n *fastNode, nb, ob []byte) bool {
	var olds [][]byte
	if len(ob) > 0 && ob[0] == '[' {
		var ok bool
		if olds, ok = elements(ob); !ok {
			d.run.aborted = true
			return false
		}
	}
	elems, ok := elements(nb)
	if !ok {
		d.run.aborted = true
		return false
	}
	if n.minItems != -1 && len(elems) < n.minItems || n.maxItems != -1 && len(elems) > n.maxItems {
		return false
	}
	for i, e := range elems {
		var old []byte
		if i < len(olds) {
			old = olds[i]
			if bytes.Equal(old, e) {
				continue
			}
		}
		switch {
		case i < len(n.prefixItems):
			if !d.valid(n.prefixItems[i], e, old, levelOther, 0) {
				return false
			}
		case n.items != nil:
			if !d.valid(n.items, e, old, levelOther, 0) {
				return false
			}
		}
	}
	if n.contains != nil && (n.minContains != -1 || n.maxContains != -1) {
		// Not every element need pass contains: nothing under it is skipped.
		matched := 0
		for _, e := range elems {
			if d.cond(n.contains, e, -1) {
				matched++
			}
			if d.run.aborted {
				return false
			}
		}
		if n.minContains != -1 && matched < n.minContains || n.maxContains != -1 && matched > n.maxContains {
			return false
		}
	}
	return true
}

// elements lists the elements of the JSON array b.
func elements(b []byte) ([][]byte, bool) {
	var out [][]byte
	i := jsonscan.SkipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return out, jsonscan.SkipSpace(b, i+1) == len(b)
	}
	for {
		end, ok := jsonscan.SkipValue(b, i, 1)
		if !ok {
			return nil, false
		}
		out = append(out, b[i:end])
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case ']':
			return out, jsonscan.SkipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// hasKey reports whether an object has a member named name.
func hasKey(ms []member, name string) bool {
	for _, m := range ms {
		if string(jsonscan.Unquote(m.key)) == name {
			return true
		}
	}
	return false
}

// distinctKeys counts the distinct names of an object's members.
func distinctKeys(ms []member) int {
	if len(ms) <= 16 {
		n := 0
	outer:
		for i, m := range ms {
			for _, o := range ms[:i] {
				if bytes.Equal(jsonscan.Unquote(o.key), jsonscan.Unquote(m.key)) {
					continue outer
				}
			}
			n++
		}
		return n
	}
	names := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		names[string(jsonscan.Unquote(m.key))] = struct{}{}
	}
	return len(names)
}
