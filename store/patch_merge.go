package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// The byte-level merge patch.
//
// jsonpatch.MergePatch decodes the whole stored object into its own tree and encodes
// it again: for an object of 40,000 labels that is two passes over a megabyte to
// change one label. mergePatchBytes applies a merge patch to the stored JSON itself:
// it walks only the objects the patch names, copies every member the patch does not
// name as it stands, and writes the patch's values in. Its output is the very bytes
// jsonpatch.MergePatch returns for the same input, as long as the inputs are in the
// form in which jsonpatch's re-encoding changes nothing: compact JSON, ASCII only
// in the patch, no escape sequence, no '<', '>' or '&' (which jsonpatch writes as
// \u003c...), no duplicate key. The store's encoding of an object is compact and has
// no duplicate key; anything else, and any patch outside that form, takes the
// library (ok false). FuzzMergePatchBytes holds the two to the same output.
//
// jsonpatch's rules, which this file follows, are RFC 7386 with two details of its
// own that decide bytes: a member the patch adds to an object goes after the
// object's members (with several added to one object, jsonpatch's order is that of
// a Go map, so not fixed; here it is the patch's order), and the nulls inside a
// patch value are dropped (recursively, through arrays too) where the value
// replaces a non-object or is added, but kept where a non-object value replaces an
// object.

// maxMergePatchDepth bounds the nesting of a patch the byte-level merge takes.
const maxMergePatchDepth = 64

// patchValue is a parsed merge patch value.
type patchValue struct {
	kind byte   // '{' object, '[' array, 'n' null, 's' any other scalar
	raw  []byte // the value as written in the patch (compact: see mergePatchBytes)
	keys []string
	vals []*patchValue // members of an object, elements of an array
	used []bool        // members of an object already merged (scratch)
}

// mergePatchFast applies the merge patch patch to doc as jsonpatch.MergePatch does,
// or returns false when it leaves the case to the library (see above).
func mergePatchFast(doc, patch []byte) ([]byte, bool) {
	out, _, ok := mergePatchBytes(doc, patch)
	return out, ok
}

// mergePatchBytes is mergePatchFast that also says the most members it appended to
// one object (above one, jsonpatch's order of them is not fixed).
func mergePatchBytes(doc, patch []byte) (out []byte, maxAdded int, ok bool) {
	if !safePatchText(patch) || !json.Valid(patch) {
		return nil, 0, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, patch); err != nil {
		return nil, 0, false
	}
	p, end, ok := parsePatchValue(buf.Bytes(), 0, 0)
	if !ok || end != buf.Len() || p.kind != '{' {
		return nil, 0, false
	}
	if !safeDocText(doc) || len(doc) == 0 || doc[0] != '{' {
		return nil, 0, false
	}
	m := merger{doc: doc, out: make([]byte, 0, len(doc)+len(patch))}
	end, ok = m.object(0, p)
	if !ok || end != len(doc) {
		return nil, 0, false
	}
	return m.out, m.maxAdded, true
}

// safePatchText reports whether a patch is in the form the byte-level merge takes:
// ASCII, without escapes or the characters jsonpatch escapes.
func safePatchText(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// safeDocText reports whether a document has nothing jsonpatch's re-encoding would
// change outside white space (checked as the merge walks it): no escape, no '<',
// '>' or '&', no U+2028 or U+2029, valid UTF-8.
func safeDocText(b []byte) bool {
	if bytes.IndexByte(b, '\\') >= 0 || bytes.IndexAny(b, "<>&") >= 0 {
		return false
	}
	for _, c := range b {
		if c >= 0x80 {
			return utf8.Valid(b) && !bytes.ContainsRune(b, 0x2028) && !bytes.ContainsRune(b, 0x2029)
		}
	}
	return true
}

// parsePatchValue parses the compact, valid JSON value at b[i:].
func parsePatchValue(b []byte, i, depth int) (*patchValue, int, bool) {
	if depth > maxMergePatchDepth || i >= len(b) {
		return nil, 0, false
	}
	switch b[i] {
	case '{':
		p := &patchValue{kind: '{'}
		j := i + 1
		if b[j] == '}' {
			p.raw = b[i : j+1]
			return p, j + 1, true
		}
		for {
			ke := bytes.IndexByte(b[j+1:], '"') + j + 1 // no escapes: the key ends at the next quote
			key := string(b[j+1 : ke])
			for _, k := range p.keys {
				if k == key {
					return nil, 0, false // a duplicate key: the library decides which one counts
				}
			}
			v, e, ok := parsePatchValue(b, ke+2, depth+1)
			if !ok {
				return nil, 0, false
			}
			p.keys, p.vals = append(p.keys, key), append(p.vals, v)
			if b[e] == '}' {
				p.raw, p.used = b[i:e+1], make([]bool, len(p.keys))
				return p, e + 1, true
			}
			j = e + 1
		}
	case '[':
		p := &patchValue{kind: '['}
		j := i + 1
		if b[j] == ']' {
			p.raw = b[i : j+1]
			return p, j + 1, true
		}
		for {
			v, e, ok := parsePatchValue(b, j, depth+1)
			if !ok {
				return nil, 0, false
			}
			p.vals = append(p.vals, v)
			if b[e] == ']' {
				p.raw = b[i : e+1]
				return p, e + 1, true
			}
			j = e + 1
		}
	case '"':
		e := bytes.IndexByte(b[i+1:], '"') + i + 2
		return &patchValue{kind: 's', raw: b[i:e]}, e, true
	default:
		e := i
		for e < len(b) && b[e] != ',' && b[e] != '}' && b[e] != ']' {
			e++
		}
		p := &patchValue{kind: 's', raw: b[i:e]}
		if string(p.raw) == "null" {
			p.kind = 'n'
		}
		return p, e, true
	}
}

// merger writes the merge of a patch into a document.
type merger struct {
	doc      []byte
	out      []byte
	maxAdded int
}

// skip returns the end of the compact JSON value at doc[i:], false when the document
// is not compact JSON there.
func (m *merger) skip(i int) (int, bool) {
	b := m.doc
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			e := bytes.IndexByte(b[i+1:], '"')
			if e < 0 {
				return 0, false
			}
			i += e + 2
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		case ',', ':':
			if depth == 0 {
				return i, true
			}
			i++
		case ' ', '\t', '\n', '\r':
			return 0, false
		default:
			i++
		}
		if depth == 0 && (i >= len(b) || b[i] == ',' || b[i] == '}' || b[i] == ']') {
			return i, true
		}
		if depth < 0 {
			return 0, false
		}
	}
	return 0, false
}

// object merges p, a patch object, into the document object at doc[i:] and returns
// the end of the document object.
func (m *merger) object(i int, p *patchValue) (int, bool) {
	b := m.doc
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	clear(p.used)
	m.out = append(m.out, '{')
	first := true
	j := i + 1
	if j < len(b) && b[j] == '}' {
		j++
	} else {
		for {
			if j >= len(b) || b[j] != '"' {
				return 0, false
			}
			ke := bytes.IndexByte(b[j+1:], '"')
			if ke < 0 {
				return 0, false
			}
			ke += j + 1 // the closing quote of the key
			if ke+1 >= len(b) || b[ke+1] != ':' {
				return 0, false
			}
			vs := ke + 2
			idx := -1
			for x, k := range p.keys {
				if !p.used[x] && len(k) == ke-j-1 && k == string(b[j+1:ke]) {
					idx = x
					break
				}
			}
			var ve int
			if idx < 0 {
				var ok bool
				if ve, ok = m.skip(vs); !ok {
					return 0, false
				}
				if !first {
					m.out = append(m.out, ',')
				}
				m.out = append(m.out, b[j:ve]...)
				first = false
			} else {
				p.used[idx] = true
				var ok bool
				if ve, ok = m.member(b[j:vs], vs, p.vals[idx], &first); !ok {
					return 0, false
				}
			}
			if ve >= len(b) {
				return 0, false
			}
			if b[ve] == '}' {
				j = ve + 1
				break
			}
			if b[ve] != ',' {
				return 0, false
			}
			j = ve + 1
		}
	}
	added := 0
	for x, k := range p.keys {
		v := p.vals[x]
		if p.used[x] || v.kind == 'n' {
			continue
		}
		if !first {
			m.out = append(m.out, ',')
		}
		first = false
		m.out = append(m.out, '"')
		m.out = append(m.out, k...)
		m.out = append(m.out, '"', ':')
		m.pruned(v)
		added++
	}
	m.maxAdded = max(m.maxAdded, added)
	m.out = append(m.out, '}')
	return j, true
}

// member writes the member of key (with its quotes and colon) whose document value
// starts at doc[vs] as patch value v makes it, and returns the end of the document
// value.
func (m *merger) member(key []byte, vs int, v *patchValue, first *bool) (int, bool) {
	b := m.doc
	if vs >= len(b) {
		return 0, false
	}
	if v.kind == 'n' {
		return m.skip(vs) // removed
	}
	if !*first {
		m.out = append(m.out, ',')
	}
	*first = false
	m.out = append(m.out, key...)
	switch {
	case b[vs] == '{' && v.kind == '{':
		return m.object(vs, v)
	case b[vs] == '{':
		// A non-object replaces an object: jsonpatch keeps it as it came.
		m.out = append(m.out, v.raw...)
	default:
		m.pruned(v)
	}
	return m.skip(vs)
}

// pruned writes v without the null members of its objects, at every depth.
func (m *merger) pruned(v *patchValue) {
	switch v.kind {
	case '{':
		m.out = append(m.out, '{')
		first := true
		for x, k := range v.keys {
			if v.vals[x].kind == 'n' {
				continue
			}
			if !first {
				m.out = append(m.out, ',')
			}
			first = false
			m.out = append(m.out, '"')
			m.out = append(m.out, k...)
			m.out = append(m.out, '"', ':')
			m.pruned(v.vals[x])
		}
		m.out = append(m.out, '}')
	case '[':
		m.out = append(m.out, '[')
		for x, e := range v.vals {
			if x > 0 {
				m.out = append(m.out, ',')
			}
			m.pruned(e)
		}
		m.out = append(m.out, ']')
	default:
		m.out = append(m.out, v.raw...)
	}
}

// slowMergePatch makes Patch take jsonpatch.MergePatch for every merge patch (tests
// compare the two ways with it).
var slowMergePatch atomic.Bool

// mergePatchStored applies a merge patch to the stored bytes of namespace/name
// without decoding them: the byte-level merge, then the decode of the result. It
// returns a nil object when the case is the general path's (the object is missing or
// written by this transaction, its bytes are not as the store writes them, the patch
// is outside what mergePatchFast takes, or the result has fields its kind does not
// have: the general path, which decodes the stored object first, decides what those
// become). rv and uid are the stored object's.
func mergePatchStored(tx *Tx, codec *resource.Codec, k *resource.KindInfo, namespace, name string,
	patch []byte) (next resource.Object, unknown []string, out []byte, rv, uid string, err error) {
	e, err := tx.get(objectKey(k, namespace, name))
	if err != nil || e.value == nil || e.rev == 0 {
		return nil, nil, nil, "", "", err
	}
	doc, ok := withResourceVersion(k, e.value, e.rev)
	if !ok {
		return nil, nil, nil, "", "", nil
	}
	if uid, ok = storedUID(e.value); !ok {
		return nil, nil, nil, "", "", nil
	}
	if out, ok = mergePatchFast(doc, patch); !ok {
		return nil, nil, nil, "", "", nil
	}
	if next, ok = decodeMerged(codec, k, patch, out); !ok {
		return nil, nil, nil, "", "", nil
	}
	return next, nil, out, formatRV(e.rev), uid, nil
}

// decodeMerged decodes out, the stored object with a merge patch applied by
// mergePatchFast, as the codec's strict decoding of it would (false when it cannot
// say so). The codec checks a whole body for what it refuses or reports (syntax,
// depth, duplicate keys, unknown fields, numbers out of range, invalid UTF-8, the
// apiVersion and kind); in out, everything but what the patch wrote is the store's
// own encoding of a decoded object, which has none of those, and what the patch
// wrote sits at the same paths as in the patch: so the patch is checked instead of
// the megabyte it may land in. What remains is json.Unmarshal, as the codec does
// it, but for one step the codec takes after it (a zero *Time becomes nil), which
// only a time the patch writes as "" or near the year 1 can call for: such a patch
// takes the general path.
func decodeMerged(codec *resource.Codec, k *resource.KindInfo, patch, out []byte) (resource.Object, bool) {
	if bytes.Contains(patch, []byte(`""`)) || bytes.Contains(patch, []byte(`"000`)) {
		return nil, false
	}
	top := false
	if !jsonscan.EachMember(patch, func(key, _ []byte) bool {
		top = string(key) == "apiVersion" || string(key) == "kind"
		return !top
	}) || top {
		return nil, false
	}
	if _, unknown, err := codec.DecodeLenient(patch, resource.MediaTypeJSON, k); err != nil || len(unknown) > 0 {
		return nil, false
	}
	next := k.New()
	if !objcodec.Decode(out, next) {
		next = k.New() // Decode may have half filled it
		if err := json.Unmarshal(out, next); err != nil {
			return nil, false
		}
	}
	tm := next.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()
	return next, true
}

// storedUID reads metadata.uid from the stored bytes of an object.
func storedUID(data []byte) (string, bool) {
	meta, ok := memberNamed(data, "metadata")
	if !ok {
		return "", false
	}
	m, ok := memberNamed(meta.value, "uid")
	if !ok {
		return "", true
	}
	var uid string
	if err := json.Unmarshal(m.value, &uid); err != nil {
		return "", false
	}
	return uid, true
}

// decodePatched decodes the result of a patch, with the fields its kind does not
// have.
func decodePatched(codec *resource.Codec, k *resource.KindInfo, out []byte) (resource.Object, []string, error) {
	next, unknown, err := codec.DecodeLenient(out, resource.MediaTypeJSON, k)
	if err != nil {
		return nil, nil, resource.NewBadRequest(fmt.Sprintf("the patched %s does not decode: %v", k.Kind, err)).WithCause(err)
	}
	return next, unknown, nil
}
