package managedfields

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
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
	root *node
}

// node is one trie node. Invariant: every node below the root is a member or has at
// least one child; an empty trie is a nil root.
type node struct {
	member   bool
	children map[string]*node
}

// Empty reports whether s holds no path.
func (s Set) Empty() bool { return s.root == nil }

// Equal reports whether s and o hold the same paths.
func (s Set) Equal(o Set) bool { return nodesEqual(s.root, o.root) }

// Has reports whether the path made of the given FieldsV1 keys (for example
// Has("f:metadata", "f:labels", "f:app")) is a member of s. The empty path is never
// a member.
func (s Set) Has(path ...string) bool {
	if len(path) == 0 {
		return false
	}
	n := s.root
	for _, k := range path {
		if n == nil {
			return false
		}
		n = n.children[k]
	}
	return n != nil && n.member
}

// Union returns the paths in s or in o.
func (s Set) Union(o Set) Set { return Set{root: union(s.root, o.root)} }

// Difference returns the paths of s that are not members of o. Like Kubernetes'
// fieldpath.Set.Difference it removes exact members only: a path of o does not remove
// the paths below it.
func (s Set) Difference(o Set) Set { return Set{root: prune(difference(s.root, o.root, false))} }

// RecursiveDifference returns the paths of s that are neither members of o nor below a
// member of o: each path of o removes itself and its whole subtree. Update uses it
// because a field that is removed or rewritten takes everything below it along.
func (s Set) RecursiveDifference(o Set) Set {
	return Set{root: prune(difference(s.root, o.root, true))}
}

// FieldsV1 encodes s in Kubernetes' FieldsV1 form: a JSON object per trie node whose
// keys are the children, each mapping to {} for a member with no children, to the
// child's object otherwise, with a leading ".":{} key when the child is also a member
// itself. Keys are ordered as structured-merge-diff orders path elements: "." first,
// then f: keys by field name, then k:, then v: (both by their canonical JSON text),
// then i: by index. The encoding is compact and deterministic; the empty set is {}.
func (s Set) FieldsV1() json.RawMessage {
	var b bytes.Buffer
	encodeNode(&b, s.root, false)
	return b.Bytes()
}

// String returns the FieldsV1 encoding of s.
func (s Set) String() string { return string(s.FieldsV1()) }

func nodesEqual(a, b *node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a == b {
		return true
	}
	if a.member != b.member || len(a.children) != len(b.children) {
		return false
	}
	for k, ac := range a.children {
		bc, ok := b.children[k]
		if !ok || !nodesEqual(ac, bc) {
			return false
		}
	}
	return true
}

func union(a, b *node) *node {
	if a == nil {
		return b
	}
	if b == nil || a == b {
		return a
	}
	n := &node{member: a.member || b.member}
	if len(a.children)+len(b.children) > 0 {
		n.children = make(map[string]*node, len(a.children)+len(b.children))
	}
	for k, c := range a.children {
		n.children[k] = c
	}
	for k, c := range b.children {
		n.children[k] = union(n.children[k], c)
	}
	return n
}

// difference removes b's members from a. With recursive, a member of b also removes
// everything below it. The result may contain empty non-member nodes; prune removes
// them.
func difference(a, b *node, recursive bool) *node {
	if a == nil || b == nil {
		return a
	}
	if recursive && b.member {
		return nil
	}
	n := &node{member: a.member && !b.member}
	for k, ac := range a.children {
		c := ac
		if bc, ok := b.children[k]; ok {
			c = prune(difference(ac, bc, recursive))
		}
		if c != nil {
			if n.children == nil {
				n.children = make(map[string]*node, len(a.children))
			}
			n.children[k] = c
		}
	}
	return n
}

// prune returns nil for a node that is neither a member nor has children. Children
// are already pruned by the callers.
func prune(n *node) *node {
	if n == nil || (!n.member && len(n.children) == 0) {
		return nil
	}
	return n
}

func encodeNode(b *bytes.Buffer, n *node, self bool) {
	b.WriteByte('{')
	if n == nil {
		b.WriteByte('}')
		return
	}
	first := true
	if self && n.member && len(n.children) > 0 {
		b.WriteString(`".":{}`)
		first = false
	}
	for _, k := range sortedKeys(n.children) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k) // a string always marshals
		b.Write(kb)
		b.WriteByte(':')
		c := n.children[k]
		if len(c.children) == 0 {
			b.WriteString("{}")
			continue
		}
		encodeNode(b, c, true)
	}
	b.WriteByte('}')
}

func sortedKeys(m map[string]*node) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return keys
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
	root, err := parseNode(obj, nil)
	if err != nil {
		return Set{}, err
	}
	root.member = false
	return Set{root: prune(root)}, nil
}

func parseNode(obj map[string]any, path []string) (*node, error) {
	n := &node{}
	for k, v := range obj {
		child, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("at %s: the value of %q must be a JSON object, not %s",
				pathString(path), k, jsonKind(v))
		}
		if k == "." {
			if len(child) != 0 {
				return nil, fmt.Errorf(`at %s: "." must map to {}`, pathString(path))
			}
			n.member = true
			continue
		}
		key, err := canonicalKey(k)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", pathString(path), err)
		}
		c, err := parseNode(child, append(path, key))
		if err != nil {
			return nil, err
		}
		if len(c.children) == 0 {
			c.member = true
		}
		if n.children == nil {
			n.children = make(map[string]*node, len(obj))
		}
		n.children[key] = union(n.children[key], c)
	}
	return n, nil
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

// builder collects paths into a trie. It is mutable and used only while one Set is
// being built.
type builder struct {
	root *node
}

// insert makes path a member. The path slice is not retained.
func (b *builder) insert(path []string) {
	if len(path) == 0 {
		return
	}
	if b.root == nil {
		b.root = &node{}
	}
	n := b.root
	for _, k := range path {
		c := n.children[k]
		if c == nil {
			c = &node{}
			if n.children == nil {
				n.children = map[string]*node{}
			}
			n.children[k] = c
		}
		n = c
	}
	n.member = true
}

func (b *builder) set() Set { return Set{root: b.root} }
