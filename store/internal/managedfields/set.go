package managedfields

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// Set is a set of field paths, the value of a managedFields entry's fieldsV1. A path
// is a sequence of FieldsV1 keys such as "f:spec", "f:ttl". Every node of the trie
// except the root may itself be a member (the field is owned) and may have children
// (fields below it are owned); a node that is both is what FieldsV1 writes with the
// "." key.
//
// The zero Set is empty. A Set is immutable: every operation returns a new Set and
// may share structure with its operands, so Sets are safe for concurrent use.
type Set struct {
	// enc is the set's canonical FieldsV1 encoding (what FieldsV1 returns), nil for
	// the empty set. The trie is kept in that form and the operations work on it
	// directly. The bytes are never modified once the Set exists.
	enc []byte
}

// In a canonical encoding a node is a JSON object: {} for a member with no children
// (or, at the top level only, the empty set), otherwise {".":{},<children>} for a
// member with children and {<children>} for a node that only has children. A child
// is "<key>":<node>, keys are json.Marshal-encoded, unique and in keyLess order, and
// there is no white space. Every node but the root is a member or has a child, and
// the root is never a member.

// dotMember is the "." entry that marks a node with children as a member.
const dotMember = `".":{}`

// Empty reports whether s holds no path.
func (s Set) Empty() bool { return len(s.enc) == 0 }

// Equal reports whether s and o hold the same paths.
func (s Set) Equal(o Set) bool { return bytes.Equal(s.enc, o.enc) }

// Has reports whether the path made of the given FieldsV1 keys (for example
// Has("f:metadata", "f:labels", "f:app")) is a member of s. The empty path is never
// a member.
func (s Set) Has(path ...string) bool {
	if len(path) == 0 || s.Empty() {
		return false
	}
	n, i := s.enc, 0 // the node at n[i]
	var buf [64]byte
	for _, k := range path {
		want := jsonscan.AppendQuote(buf[:0], []byte(k))
		want = want[1 : len(want)-1]
		_, c := nodeHead(n, i)
		for {
			if n[c] == '}' {
				return false
			}
			ke := c + endOfKey(n[c:])
			if bytes.Equal(n[c+1:ke], want) {
				i = ke + 2
				break
			}
			c = nextKid(n, endOfNode(n, ke+2, 0))
		}
	}
	member, _ := nodeHead(n, i)
	return member
}

// Union returns the paths in s or in o.
func (s Set) Union(o Set) Set {
	var ar arena
	return Set{enc: ar.union(s.enc, o.enc)}
}

// Difference returns the paths of s that are not members of o. Like Kubernetes'
// fieldpath.Set.Difference it removes exact members only: a path of o does not remove
// the paths below it.
func (s Set) Difference(o Set) Set {
	var ar arena
	return Set{enc: ar.difference(s.enc, o.enc, false)}
}

// RecursiveDifference returns the paths of s that are neither members of o nor below a
// member of o: each path of o removes itself and its whole subtree. Update uses it
// because a field that is removed or rewritten takes everything below it along.
func (s Set) RecursiveDifference(o Set) Set {
	var ar arena
	return Set{enc: ar.difference(s.enc, o.enc, true)}
}

// FieldsV1 encodes s in Kubernetes' FieldsV1 form: a JSON object per trie node whose
// keys are the children, each mapping to {} for a member with no children, to the
// child's object otherwise, with a leading ".":{} key when the child is also a member
// itself. Keys are ordered as structured-merge-diff orders path elements: "." first,
// then f: keys by field name, then k:, then v: (both by their canonical JSON text),
// then i: by index. The encoding is compact and deterministic; the empty set is {}.
func (s Set) FieldsV1() json.RawMessage {
	if s.Empty() {
		return json.RawMessage("{}")
	}
	return bytes.Clone(s.enc)
}

// String returns the FieldsV1 encoding of s.
func (s Set) String() string {
	if s.Empty() {
		return "{}"
	}
	return string(s.enc)
}

// nodeHead reads the node encoding at n[i] == '{': whether it is a member (as a
// child; the root never is) and where its first child, or else its closing brace,
// is.
func nodeHead(n []byte, i int) (member bool, kids int) {
	switch {
	case n[i+1] == '}':
		return true, i + 1
	case bytes.HasPrefix(n[i+1:], []byte(dotMember+",")):
		return true, i + 1 + len(dotMember) + 1
	}
	return false, i + 1
}

// nextKid returns where the child after the one ending at n[e] starts, or the
// closing brace of their node.
func nextKid(n []byte, e int) int {
	if n[e] == ',' {
		return e + 1
	}
	return e
}

// appendNode appends the encoding of a non-root node with the given children.
func appendNode(dst []byte, member bool, kids []byte) []byte {
	if len(kids) == 0 {
		return append(dst, "{}"...)
	}
	dst = append(dst, '{')
	if member {
		dst = append(dst, dotMember+","...)
	}
	dst = append(dst, kids...)
	return append(dst, '}')
}

// Masks for testing the 8 bytes of a uint64 at once: x^(lsb*c) has a zero byte where
// x has c, and ((y-lsb)&^y)&msb marks the first zero byte of y.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// endOfKey returns the index of the closing quote of the encoded key at r[0] == '"'.
func endOfKey(r []byte) int {
	end, _, _ := jsonscan.ScanString(r, 0)
	return end - 1
}

// endOfNode returns the index after the node encoding at r[i] == '{', or with
// depth 1 after the closing brace of the node whose child (or closing brace) is at
// r[i].
func endOfNode(r []byte, i, depth int) int {
	for {
		for i+8 <= len(r) {
			x := binary.LittleEndian.Uint64(r[i:])
			o, c, q := x^(lsb*'{'), x^(lsb*'}'), x^(lsb*'"')
			if m := ((o-lsb)&^o | (c-lsb)&^c | (q-lsb)&^q) & msb; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		switch r[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			i += endOfKey(r[i:])
			if i+3 < len(r) && r[i+1] == ':' && r[i+2] == '{' && r[i+3] == '}' {
				i += 3 // a leaf: "<key>":{}
			}
		}
		i++
	}
}

// keyCmp orders two encoded canonical keys (without quotes) by keyLess.
func keyCmp(a, b []byte) int {
	if bytes.Equal(a, b) {
		return 0
	}
	if bytes.IndexByte(a, '\\') >= 0 || bytes.IndexByte(b, '\\') >= 0 {
		a, b = jsonscan.AppendUnquoted(nil, a), jsonscan.AppendUnquoted(nil, b)
	}
	return keyCmpDecoded(a, b)
}

// keyCmpDecoded is keyCmp for keys that need no unquoting.
func keyCmpDecoded(a, b []byte) int {
	ra, rb := keyRankBytes(a), keyRankBytes(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	if ra == 3 {
		if ia, ib := indexOf(a[2:]), indexOf(b[2:]); ia != ib {
			return cmp.Compare(ia, ib)
		}
	}
	return bytes.Compare(a, b)
}

func keyRankBytes(k []byte) int {
	if len(k) >= 2 && k[1] == ':' {
		switch k[0] {
		case 'f':
			return 0
		case 'k':
			return 1
		case 'v':
			return 2
		}
	}
	return 3
}

// indexOf parses the index of a canonical i: key.
func indexOf(s []byte) int {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n
}

// arena holds the encodings the set operations produce. Results are slices of buf
// that later operations never overwrite; with a zero arena every result is a fresh
// allocation.
type arena struct {
	buf []byte
}

func (ar *arena) result(start int) []byte {
	if len(ar.buf) == start {
		return nil
	}
	return ar.buf[start:len(ar.buf):len(ar.buf)]
}

// union returns the encoding of the union of the sets encoded as a and b.
func (ar *arena) union(a, b []byte) []byte {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0 || bytes.Equal(a, b):
		return a
	}
	start := len(ar.buf)
	ar.buf = append(ar.buf, '{')
	ar.buf, _, _ = appendUnionKids(ar.buf, a, 1, b, 1)
	ar.buf = append(ar.buf, '}')
	return ar.result(start)
}

// difference returns the encoding of a minus b's members, and with recursive minus
// everything below them.
func (ar *arena) difference(a, b []byte, recursive bool) []byte {
	if len(a) == 0 || len(b) == 0 {
		return a
	}
	start := len(ar.buf)
	ar.buf = append(ar.buf, '{')
	var n int
	var changed bool
	ar.buf, _, _, n, changed = appendDiffKids(ar.buf, a, 1, b, 1, 0, recursive)
	switch {
	case !changed:
		ar.buf = ar.buf[:start]
		return a
	case n == 0:
		ar.buf = ar.buf[:start]
	default:
		ar.buf = append(ar.buf, '}')
	}
	return ar.result(start)
}

// The set operations walk two encodings at once, each child of a node at a time
// (a[ai] and b[bi] are a child or the node's closing brace). They return where the
// nodes end, so that each byte is read once whatever the depth.

// appendUnionKids appends the union of the children at a[ai] and b[bi] and returns
// the ends of their nodes.
func appendUnionKids(dst, a []byte, ai int, b []byte, bi int) (_ []byte, aEnd, bEnd int) {
	for n := 0; ; n++ {
		aDone, bDone := a[ai] == '}', b[bi] == '}'
		if aDone && bDone {
			return dst, ai + 1, bi + 1
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		if bDone {
			e := endOfNode(a, ai, 1)
			return append(dst, a[ai:e-1]...), e, bi + 1
		}
		if aDone {
			e := endOfNode(b, bi, 1)
			return append(dst, b[bi:e-1]...), ai + 1, e
		}
		ak, bk := ai+endOfKey(a[ai:]), bi+endOfKey(b[bi:])
		switch c := keyCmp(a[ai+1:ak], b[bi+1:bk]); {
		case c < 0:
			e := endOfNode(a, ak+2, 0)
			dst = append(dst, a[ai:e]...)
			ai = nextKid(a, e)
		case c > 0:
			e := endOfNode(b, bk+2, 0)
			dst = append(dst, b[bi:e]...)
			bi = nextKid(b, e)
		default:
			dst = append(dst, a[ai:ak+2]...) // "<key>":
			ma, ac := nodeHead(a, ak+2)
			mb, bc := nodeHead(b, bk+2)
			if a[ac] == '}' && b[bc] == '}' {
				dst = append(dst, "{}"...)
				ai, bi = nextKid(a, ac+1), nextKid(b, bc+1)
				continue
			}
			dst = append(dst, '{')
			if ma || mb {
				dst = append(dst, dotMember+","...)
			}
			var ae, be int
			dst, ae, be = appendUnionKids(dst, a, ac, b, bc)
			dst = append(dst, '}')
			ai, bi = nextKid(a, ae), nextKid(b, be)
		}
	}
}

// appendDiffKids appends the children at a[ai] minus the members among the children
// at b[bi] (and with recursive what is below them), after n entries already written
// into the same object. It returns the ends of the nodes, the new count and whether
// anything was left out.
func appendDiffKids(dst, a []byte, ai int, b []byte, bi, n int, recursive bool) (_ []byte, aEnd, bEnd, _ int, changed bool) {
	for {
		if a[ai] == '}' {
			return dst, ai + 1, endOfNode(b, bi, 1), n, changed
		}
		ak := ai + endOfKey(a[ai:])
		key := a[ai+1 : ak]
		c, bk := 1, 0
		for b[bi] != '}' {
			bk = bi + endOfKey(b[bi:])
			if c = keyCmp(b[bi+1:bk], key); c >= 0 {
				break
			}
			bi = nextKid(b, endOfNode(b, bk+2, 0))
		}
		if b[bi] == '}' {
			e := endOfNode(a, ai, 1)
			if n > 0 {
				dst = append(dst, ',')
			}
			return append(dst, a[ai:e-1]...), e, bi + 1, n + 1, changed
		}
		if c > 0 {
			e := endOfNode(a, ak+2, 0)
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, a[ai:e]...)
			n++
			ai = nextKid(a, e)
			continue
		}
		ma, ac := nodeHead(a, ak+2)
		mb, bc := nodeHead(b, bk+2)
		if recursive && mb {
			changed = true
			ai = nextKid(a, endOfNode(a, ak+2, 0))
			bi = nextKid(b, endOfNode(b, bk+2, 0))
			continue
		}
		member := ma && !mb
		changed = changed || member != ma
		start := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, a[ai:ak+2]...) // "<key>":
		keyEnd := len(dst)
		dst = append(dst, '{')
		m := 0
		if member {
			dst = append(dst, dotMember...)
			m = 1
		}
		var m2, ae, be int
		var kidsChanged bool
		dst, ae, be, m2, kidsChanged = appendDiffKids(dst, a, ac, b, bc, m, recursive)
		changed = changed || kidsChanged
		switch {
		case m2 > m:
			dst = append(dst, '}')
			n++
		case member:
			dst = append(dst[:keyEnd], "{}"...)
			n++
		default:
			dst = dst[:start]
		}
		ai, bi = nextKid(a, ae), nextKid(b, be)
	}
}

// unionNodes returns the union of two non-root node encodings.
func unionNodes(a, b []byte) []byte {
	ma, ac := nodeHead(a, 0)
	mb, bc := nodeHead(b, 0)
	if a[ac] == '}' && b[bc] == '}' {
		return []byte("{}")
	}
	dst := []byte{'{'}
	if ma || mb {
		dst = append(dst, dotMember+","...)
	}
	dst, _, _ = appendUnionKids(dst, a, ac, b, bc)
	return append(dst, '}')
}

// keyRank orders the kinds of path element the way structured-merge-diff does.
func keyRank(k string) int {
	switch k[:2] {
	case "f:":
		return 0
	case "k:":
		return 1
	case "v:":
		return 2
	default: // "i:"
		return 3
	}
}

// keyLess orders canonical keys (as produced by canonicalKey or the object walker).
func keyLess(a, b string) bool {
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return ra < rb
	}
	if ra == 3 {
		ia, _ := strconv.Atoi(a[2:])
		ib, _ := strconv.Atoi(b[2:])
		if ia != ib {
			return ia < ib
		}
	}
	return a < b
}

// ParseFieldsV1 decodes a fieldsV1 value. Empty input and JSON null are the empty
// set. Otherwise the value must be a JSON object in which every value is an object;
// keys are "." (which must map to {} and marks the enclosing node as a member; at the
// top level it is ignored, as in Kubernetes), "f:<name>", "k:<JSON object>",
// "v:<JSON value>" or "i:<integer>". k:, v: and i: keys are canonicalised (compact
// JSON with sorted object keys, base-10 index), so equal elements written differently
// become one. A key that maps to {} is a member; a key whose object has children is a
// member only if the object also has ".". Anything else is an error naming the
// offending path.
func ParseFieldsV1(raw json.RawMessage) (Set, error) {
	s, err := parseFieldsV1(raw)
	if err == nil && len(s.enc) > 0 && len(raw) > 0 && &s.enc[0] == &raw[0] {
		s.enc = bytes.Clone(s.enc)
	}
	return s, err
}

// parseFieldsV1 is ParseFieldsV1 returning raw itself when it is already the
// canonical encoding of its set, as every fieldsV1 Update writes is.
func parseFieldsV1(raw []byte) (Set, error) {
	if isCanonical(raw) {
		if len(raw) == 2 {
			return Set{}, nil
		}
		return Set{enc: raw[:len(raw):len(raw)]}, nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return Set{}, nil
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		return Set{}, fmt.Errorf("invalid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Set{}, fmt.Errorf("must be a JSON object, not %s", jsonKind(v))
	}
	_, kids, err := parseNode(obj, nil)
	if err != nil || len(kids) == 0 {
		return Set{}, err
	}
	enc := make([]byte, 0, len(kids)+2)
	enc = append(enc, '{')
	enc = append(enc, kids...)
	return Set{enc: append(enc, '}')}, nil
}

// parseNode checks a decoded fieldsV1 object and returns whether it marks its node
// as a member (".") and the canonical encoding of its children.
func parseNode(obj map[string]any, path []string) (member bool, kids []byte, err error) {
	type kid struct {
		key string
		enc []byte
	}
	list := make([]kid, 0, len(obj))
	for k, v := range obj {
		child, ok := v.(map[string]any)
		if !ok {
			return false, nil, fmt.Errorf("at %s: the value of %q must be a JSON object, not %s",
				pathString(path), k, jsonKind(v))
		}
		if k == "." {
			if len(child) != 0 {
				return false, nil, fmt.Errorf(`at %s: "." must map to {}`, pathString(path))
			}
			member = true
			continue
		}
		key, err := canonicalKey(k)
		if err != nil {
			return false, nil, fmt.Errorf("at %s: %w", pathString(path), err)
		}
		cm, ck, err := parseNode(child, append(path, key))
		if err != nil {
			return false, nil, err
		}
		list = append(list, kid{key: key, enc: appendNode(nil, cm, ck)})
	}
	sort.Slice(list, func(i, j int) bool { return keyLess(list[i].key, list[j].key) })
	for i := 0; i < len(list); {
		enc := list[i].enc
		j := i + 1
		for ; j < len(list) && list[j].key == list[i].key; j++ {
			enc = unionNodes(enc, list[j].enc)
		}
		if len(kids) > 0 {
			kids = append(kids, ',')
		}
		kids = jsonscan.AppendQuote(kids, []byte(list[i].key))
		kids = append(kids, ':')
		kids = append(kids, enc...)
		i = j
	}
	return member, kids, nil
}

// isCanonical reports whether raw is exactly the canonical encoding of a set, so
// that ParseFieldsV1 would accept it and FieldsV1 give it back unchanged.
func isCanonical(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '{' {
		return false
	}
	end, ok := canonicalNode(raw, 0, true, 1)
	return ok && end == len(raw)
}

func canonicalNode(b []byte, i int, root bool, depth int) (int, bool) {
	if depth > jsonscan.MaxDepth {
		return 0, false
	}
	i++
	if i >= len(b) {
		return 0, false
	}
	if b[i] == '}' {
		return i + 1, true
	}
	if !root && bytes.HasPrefix(b[i:], []byte(dotMember+",")) {
		i += len(dotMember) + 1
	}
	var prev []byte
	prevPlain := false
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		// Most keys are plain: printable ASCII that json.Marshal does not escape.
		j := i + 1
		for j < len(b) && plainKeyByte[b[j]] {
			j++
		}
		plain := j < len(b) && b[j] == '"'
		end := j + 1
		if !plain {
			var err error
			if end, _, err = jsonscan.ScanString(b, i); err != nil {
				return 0, false
			}
		}
		key := b[i+1 : end-1]
		if !canonicalKeyBytes(key, plain) {
			return 0, false
		}
		if prev != nil {
			c := 0
			if plain && prevPlain {
				c = keyCmpDecoded(prev, key)
			} else {
				c = keyCmp(prev, key)
			}
			if c >= 0 {
				return 0, false
			}
		}
		prevPlain = plain
		prev = key
		i = end
		if i+1 >= len(b) || b[i] != ':' || b[i+1] != '{' {
			return 0, false
		}
		var ok bool
		if i, ok = canonicalNode(b, i+1, false, depth+1); !ok || i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '}':
			return i + 1, true
		case ',':
			i++
		default:
			return 0, false
		}
	}
}

// plainKeyByte is true for the bytes json.Marshal writes as they are: printable
// ASCII but '"', '\\', '<', '>' and '&'.
var plainKeyByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// canonicalKeyBytes reports whether the encoded key (a valid JSON string without its
// quotes; plain: made of plainKeyByte bytes only) is what ParseFieldsV1 makes of it
// and what json.Marshal writes for that.
func canonicalKeyBytes(key []byte, plain bool) bool {
	if plain && len(key) >= 2 && key[1] == ':' {
		switch key[0] {
		case 'f':
			return true
		case 'i':
			n, err := strconv.Atoi(string(key[2:]))
			return err == nil && strconv.Itoa(n) == string(key[2:])
		}
	}
	dec := string(jsonscan.AppendUnquoted(nil, key))
	ck, err := canonicalKey(dec)
	if err != nil || ck != dec {
		return false
	}
	enc := jsonscan.AppendQuote(nil, []byte(ck))
	return bytes.Equal(enc[1:len(enc)-1], key)
}

func pathString(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	return strings.Join(path, " > ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// canonicalKey validates a FieldsV1 key other than "." and returns its canonical form.
func canonicalKey(k string) (string, error) {
	if len(k) < 2 {
		return "", fmt.Errorf("unknown path element %q: want f:, k:, v: or i: prefix", k)
	}
	prefix, rest := k[:2], k[2:]
	switch prefix {
	case "f:":
		return k, nil
	case "i:":
		i, err := strconv.Atoi(rest)
		if err != nil {
			return "", fmt.Errorf("path element %q: the index is not an integer", k)
		}
		return "i:" + strconv.Itoa(i), nil
	case "k:", "v:":
		v, err := decodeJSON([]byte(rest))
		if err != nil {
			return "", fmt.Errorf("path element %q: %w", k, err)
		}
		if _, ok := v.(map[string]any); prefix == "k:" && !ok {
			return "", fmt.Errorf("path element %q: the key must be a JSON object", k)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("path element %q: %w", k, err)
		}
		return prefix + string(b), nil
	default:
		return "", fmt.Errorf("unknown path element %q: want f:, k:, v: or i: prefix", k)
	}
}

// decodeJSON decodes exactly one JSON value, keeping numbers as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}
