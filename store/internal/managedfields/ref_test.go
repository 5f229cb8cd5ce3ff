package managedfields

// This file keeps the original map-based implementation of the package as an
// unexported reference: the objects are decoded into map[string]any and compared
// there, and sets are tries of maps. The fuzz targets check that the byte-level
// implementation gives exactly the same results. Identifiers carry a ref prefix.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/management-service/mgmt/resource"
)

// refNeverTrackedMeta are the metadata fields no entry ever records: they are set by the
// server or are the bookkeeping itself.
var refNeverTrackedMeta = map[string]bool{
	"f:name":                       true,
	"f:namespace":                  true,
	"f:uid":                        true,
	"f:resourceVersion":            true,
	"f:generation":                 true,
	"f:creationTimestamp":          true,
	"f:deletionTimestamp":          true,
	"f:deletionGracePeriodSeconds": true,
	"f:managedFields":              true,
}

// refScope decides which paths of an object a write records.
type refScope struct {
	onlyStatus   bool // a status subresource write records status only
	ignoreStatus bool // a main-resource write of a kind with a status subresource
}

func refScopeOf(w Write) refScope {
	if w.Subresource == "status" {
		return refScope{onlyStatus: true}
	}
	return refScope{ignoreStatus: w.Subresource == "" && w.StatusSubresource}
}

// skip reports whether the subtree at parent+key is never recorded.
func (s refScope) skip(parent []string, key string) bool {
	switch len(parent) {
	case 0:
		switch key {
		case "f:apiVersion", "f:kind":
			return true
		case "f:status":
			return s.ignoreStatus
		}
		return s.onlyStatus
	case 1:
		return parent[0] == "f:metadata" && refNeverTrackedMeta[key]
	}
	return false
}

// refMarkable reports whether the node at path may itself be a member: neither the root
// nor metadata ever is (Kubernetes strips both).
func refMarkable(path []string) bool {
	return len(path) > 1 || (len(path) == 1 && path[0] != "f:metadata")
}

// refComparison is what a write did to the recorded paths of an object.
type refComparison struct {
	added, modified, removed refBuilder
	scope                    refScope
}

type refValueKind int

const (
	refAbsent   refValueKind = iota
	refScalar                // a string, number, boolean, null or list (lists are atomic)
	refEmptyObj              // {}: a leaf, like Kubernetes' "empty promotes to leaf"
	refObject                // a non-empty object: its fields are compared one by one
)

func refKindOf(v any, ok bool) refValueKind {
	if !ok {
		return refAbsent
	}
	if m, isMap := v.(map[string]any); isMap {
		if len(m) == 0 {
			return refEmptyObj
		}
		return refObject
	}
	return refScalar
}

// walk compares the values at path, following structured-merge-diff's comparison for
// a schema-less object: leaves are scalars, lists and empty objects; a non-empty
// object that appears is added itself (the "." marker), one that disappears is
// removed itself, and one that replaces a scalar (or is replaced by one) is modified
// itself, besides its fields being added or removed.
func (c *refComparison) walk(path []string, l any, lok bool, r any, rok bool) {
	lk, rk := refKindOf(l, lok), refKindOf(r, rok)
	if lk != refObject && rk != refObject {
		if !refMarkable(path) {
			return
		}
		switch {
		case lk == refAbsent && rk == refAbsent:
		case lk == refAbsent:
			c.added.insert(path)
		case rk == refAbsent:
			c.removed.insert(path)
		case !refJsonEqual(l, r):
			c.modified.insert(path)
		}
		return
	}
	lm, _ := l.(map[string]any)
	rm, _ := r.(map[string]any)
	child := append(path, "")
	for k, lv := range lm {
		key := "f:" + k
		if c.scope.skip(path, key) {
			continue
		}
		child[len(path)] = key
		rv, rok := rm[k]
		c.walk(child, lv, true, rv, rok)
	}
	for k, rv := range rm {
		if _, inL := lm[k]; inL {
			continue
		}
		key := "f:" + k
		if c.scope.skip(path, key) {
			continue
		}
		child[len(path)] = key
		c.walk(child, nil, false, rv, true)
	}
	if !refMarkable(path) {
		return
	}
	switch {
	case lk == refAbsent:
		c.added.insert(path)
	case rk == refAbsent:
		c.removed.insert(path)
	case lk == refScalar || rk == refScalar:
		c.modified.insert(path)
	}
}

// refJsonEqual compares two decoded JSON values (numbers as json.Number). Numbers are
// equal when they denote the same value as int64, or else as float64.
func refJsonEqual(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		bv, ok := b.(json.Number)
		return ok && refNumbersEqual(av, bv)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !refJsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !refJsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return false
}

func refNumbersEqual(a, b json.Number) bool {
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

// refDecodeObject decodes an encoded object, which must be one JSON object.
func refDecodeObject(b []byte) (map[string]any, error) {
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

// refCompare decodes both objects (old may be nil: nothing existed) and compares them.
func refCompare(oldObj, newObj []byte, s refScope) (*refComparison, error) {
	var (
		l   map[string]any
		err error
	)
	if oldObj != nil {
		if l, err = refDecodeObject(oldObj); err != nil {
			return nil, fmt.Errorf("managedfields: old object: %w", err)
		}
	}
	r, err := refDecodeObject(newObj)
	if err != nil {
		return nil, fmt.Errorf("managedfields: new object: %w", err)
	}
	c := &refComparison{scope: s}
	c.walk(nil, l, oldObj != nil, r, true)
	return c, nil
}

// refFromObject returns the paths a write by w records when it creates obj, an encoded
// JSON object: every field at any depth that is a scalar, null, a list (lists are
// atomic: their items are never tracked separately) or an empty object, plus every
// non-empty object below the top level (written with the "." marker, as Kubernetes
// writes it for objects without a typed schema), except what is never tracked:
// apiVersion, kind, metadata itself and metadata.name, namespace, uid,
// resourceVersion, generation, creationTimestamp, deletionTimestamp,
// deletionGracePeriodSeconds and managedFields. When w.StatusSubresource is set and
// w.Subresource is empty, status is not tracked either; when w.Subresource is
// "status", only status is tracked. Only those two fields of w are used.
// refFromObject(obj, w) is the set Update records for w when it creates obj.
func refFromObject(obj []byte, w Write) (refSet, error) {
	c, err := refCompare(nil, obj, refScopeOf(w))
	if err != nil {
		return refSet{}, err
	}
	return c.added.set(), nil
}

// refSet is a set of field paths, the value of a managedFields entry's fieldsV1. A path
// is a sequence of FieldsV1 keys such as "f:spec", "f:ttl". Every node of the trie
// except the root may itself be a member (the field is owned) and may have children
// (fields below it are owned); a node that is both is what FieldsV1 writes with the
// "." key.
//
// The zero Set is empty. A Set is immutable: every operation returns a new Set and
// may share structure with its operands, so Sets are safe for concurrent use.
type refSet struct {
	root *refNode
}

// refNode is one trie node. Invariant: every node below the root is a member or has at
// least one child; an empty trie is a nil root.
type refNode struct {
	member   bool
	children map[string]*refNode
}

// Empty reports whether s holds no path.
func (s refSet) Empty() bool { return s.root == nil }

// Equal reports whether s and o hold the same paths.
func (s refSet) Equal(o refSet) bool { return refNodesEqual(s.root, o.root) }

// Has reports whether the path made of the given FieldsV1 keys (for example
// Has("f:metadata", "f:labels", "f:app")) is a member of s. The empty path is never
// a member.
func (s refSet) Has(path ...string) bool {
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

// refUnion returns the paths in s or in o.
func (s refSet) Union(o refSet) refSet { return refSet{root: refUnion(s.root, o.root)} }

// refDifference returns the paths of s that are not members of o. Like Kubernetes'
// fieldpath.Set.Difference it removes exact members only: a path of o does not remove
// the paths below it.
func (s refSet) Difference(o refSet) refSet {
	return refSet{root: refPrune(refDifference(s.root, o.root, false))}
}

// RecursiveDifference returns the paths of s that are neither members of o nor below a
// member of o: each path of o removes itself and its whole subtree. Update uses it
// because a field that is removed or rewritten takes everything below it along.
func (s refSet) RecursiveDifference(o refSet) refSet {
	return refSet{root: refPrune(refDifference(s.root, o.root, true))}
}

// FieldsV1 encodes s in Kubernetes' FieldsV1 form: a JSON object per trie node whose
// keys are the children, each mapping to {} for a member with no children, to the
// child's object otherwise, with a leading ".":{} key when the child is also a member
// itself. Keys are ordered as structured-merge-diff orders path elements: "." first,
// then f: keys by field name, then k:, then v: (both by their canonical JSON text),
// then i: by index. The encoding is compact and deterministic; the empty set is {}.
func (s refSet) FieldsV1() json.RawMessage {
	var b bytes.Buffer
	refEncodeNode(&b, s.root, false)
	return b.Bytes()
}

// String returns the FieldsV1 encoding of s.
func (s refSet) String() string { return string(s.FieldsV1()) }

func refNodesEqual(a, b *refNode) bool {
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
		if !ok || !refNodesEqual(ac, bc) {
			return false
		}
	}
	return true
}

func refUnion(a, b *refNode) *refNode {
	if a == nil {
		return b
	}
	if b == nil || a == b {
		return a
	}
	n := &refNode{member: a.member || b.member}
	if len(a.children)+len(b.children) > 0 {
		n.children = make(map[string]*refNode, len(a.children)+len(b.children))
	}
	for k, c := range a.children {
		n.children[k] = c
	}
	for k, c := range b.children {
		n.children[k] = refUnion(n.children[k], c)
	}
	return n
}

// refDifference removes b's members from a. With recursive, a member of b also removes
// everything below it. The result may contain empty non-member nodes; prune removes
// them.
func refDifference(a, b *refNode, recursive bool) *refNode {
	if a == nil || b == nil {
		return a
	}
	if recursive && b.member {
		return nil
	}
	n := &refNode{member: a.member && !b.member}
	for k, ac := range a.children {
		c := ac
		if bc, ok := b.children[k]; ok {
			c = refPrune(refDifference(ac, bc, recursive))
		}
		if c != nil {
			if n.children == nil {
				n.children = make(map[string]*refNode, len(a.children))
			}
			n.children[k] = c
		}
	}
	return n
}

// refPrune returns nil for a node that is neither a member nor has children. Children
// are already pruned by the callers.
func refPrune(n *refNode) *refNode {
	if n == nil || (!n.member && len(n.children) == 0) {
		return nil
	}
	return n
}

func refEncodeNode(b *bytes.Buffer, n *refNode, self bool) {
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
	for _, k := range refSortedKeys(n.children) {
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
		refEncodeNode(b, c, true)
	}
	b.WriteByte('}')
}

func refSortedKeys(m map[string]*refNode) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return refKeyLess(keys[i], keys[j]) })
	return keys
}

// refKeyRank orders the kinds of path element the way structured-merge-diff does.
func refKeyRank(k string) int {
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

// refKeyLess orders canonical keys (as produced by canonicalKey or the object walker).
func refKeyLess(a, b string) bool {
	ra, rb := refKeyRank(a), refKeyRank(b)
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

// refParseFieldsV1 decodes a fieldsV1 value. Empty input and JSON null are the empty
// set. Otherwise the value must be a JSON object in which every value is an object;
// keys are "." (which must map to {} and marks the enclosing node as a member; at the
// top level it is ignored, as in Kubernetes), "f:<name>", "k:<JSON object>",
// "v:<JSON value>" or "i:<integer>". k:, v: and i: keys are canonicalised (compact
// JSON with sorted object keys, base-10 index), so equal elements written differently
// become one. A key that maps to {} is a member; a key whose object has children is a
// member only if the object also has ".". Anything else is an error naming the
// offending path.
func refParseFieldsV1(raw json.RawMessage) (refSet, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return refSet{}, nil
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		return refSet{}, fmt.Errorf("invalid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return refSet{}, fmt.Errorf("must be a JSON object, not %s", jsonKind(v))
	}
	root, err := refParseNode(obj, nil)
	if err != nil {
		return refSet{}, err
	}
	root.member = false
	return refSet{root: refPrune(root)}, nil
}

func refParseNode(obj map[string]any, path []string) (*refNode, error) {
	n := &refNode{}
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
		key, err := refCanonicalKey(k)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", pathString(path), err)
		}
		c, err := refParseNode(child, append(path, key))
		if err != nil {
			return nil, err
		}
		if len(c.children) == 0 {
			c.member = true
		}
		if n.children == nil {
			n.children = make(map[string]*refNode, len(obj))
		}
		n.children[key] = refUnion(n.children[key], c)
	}
	return n, nil
}

// refCanonicalKey validates a FieldsV1 key other than "." and returns its canonical form.
func refCanonicalKey(k string) (string, error) {
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

// refBuilder collects paths into a trie. It is mutable and used only while one Set is
// being built.
type refBuilder struct {
	root *refNode
}

// insert makes path a member. The path slice is not retained.
func (b *refBuilder) insert(path []string) {
	if len(path) == 0 {
		return
	}
	if b.root == nil {
		b.root = &refNode{}
	}
	n := b.root
	for _, k := range path {
		c := n.children[k]
		if c == nil {
			c = &refNode{}
			if n.children == nil {
				n.children = map[string]*refNode{}
			}
			n.children[k] = c
		}
		n = c
	}
	n.member = true
}

func (b *refBuilder) set() refSet { return refSet{root: b.root} }

// refResolve returns the entries a write starts from, given the stored entries (live;
// nil on create) and those in the object the client sent. It follows Kubernetes'
// decodeManagedFields:
//   - a subresource write (subresource != "") ignores what was sent: live;
//   - a reset (see IsReset) starts from no entries at all, so after Update only the
//     fields this write changed are recorded (an unchanged object ends up with no
//     managedFields);
//   - nothing sent (nil) keeps live, so clients unaware of managedFields never erase
//     them;
//   - otherwise the client's entries replace live ones, and Update records this
//     write on top of them.
//
// Sent entries whose fieldsV1 does not parse or whose operation is not Apply or
// Update give an *EntryError (Kubernetes silently keeps live instead; here malformed
// entries are refused with 422). Other validation is resource.ValidateManagedFields'
// job. The returned slice may be live or sent itself; it must not be modified.
func refResolve(live, sent []resource.ManagedFieldsEntry, subresource string) ([]resource.ManagedFieldsEntry, error) {
	switch {
	case subresource != "":
		return live, nil
	case IsReset(sent):
		return nil, nil
	case len(sent) == 0:
		return live, nil
	}
	if _, err := refDecodeEntries(sent); err != nil {
		return nil, err
	}
	return sent, nil
}

// refUpdate returns the managedFields after w wrote newObj over oldObj (both encoded JSON
// objects; oldObj is nil on create), starting from entries (usually what Resolve
// returned). It never modifies its arguments. The rules:
//
//   - Entries are keyed by manager, operation, apiVersion and subresource (Apply
//     entries by manager, operation and subresource, as in Kubernetes); when keys
//     repeat, the last entry wins.
//   - The writer's entry (w.Manager, Update, w.APIVersion, w.Subresource) gains every
//     path the write added or whose value it changed; on create that is
//     FromObject(newObj, w).
//   - Those paths, with everything below them, leave every other entry: a changed
//     field owned by another manager moves to the writer.
//   - Paths the write removed, with everything below them, leave every entry.
//   - The writer's time becomes w.Now when the write added, changed or removed any
//     path, and is kept otherwise (a write that changes nothing changes no time).
//     Other entries keep their time even when they lose fields to the writer.
//   - Entries left with no paths are dropped.
//   - When more than MaxUpdateEntries Update entries remain, the oldest (by time,
//     then by the output order below) are folded into an AncientChangesManager
//     Update entry for their apiVersion, with no subresource: the union of their
//     fields and the latest of their times. As in Kubernetes, the oldest entry of an
//     apiVersion is folded only once a second one of that apiVersion must be, so
//     more than MaxUpdateEntries can remain when their apiVersions all differ.
//   - The result is sorted as Kubernetes sorts it: by operation (Apply before
//     Update), time (missing first), manager, apiVersion, subresource. fieldsType is
//     FieldsV1 and fieldsV1 is Set.FieldsV1's canonical encoding. No entries is nil.
//
// An entry whose fieldsV1 does not parse gives an *EntryError; an object that is not
// a JSON object gives an error.
func refUpdate(entries []resource.ManagedFieldsEntry, oldObj, newObj []byte, w Write) ([]resource.ManagedFieldsEntry, error) {
	if w.Manager == "" {
		w.Manager = UnknownManager
	}
	if w.Now.IsZero() {
		w.Now = time.Now()
	}
	c, err := refCompare(oldObj, newObj, refScopeOf(w))
	if err != nil {
		return nil, err
	}
	list, err := refDecodeEntries(entries)
	if err != nil {
		return nil, err
	}
	changed := c.added.set().Union(c.modified.set())
	removed := c.removed.set()
	lost := changed.Union(removed)

	writer := refEntryKey{manager: w.Manager, operation: resource.ManagedFieldsOperationUpdate,
		apiVersion: w.APIVersion, subresource: w.Subresource}
	var self *refEntry
	for _, e := range list {
		if e.key == writer {
			self = e
			continue
		}
		e.set = e.set.RecursiveDifference(lost)
	}
	if self == nil {
		self = &refEntry{key: writer}
		list = append(list, self)
	}
	self.set = self.set.RecursiveDifference(removed).Union(changed)
	if !lost.Empty() {
		self.time = resource.NewTimePtr(w.Now)
	}

	kept := list[:0]
	for _, e := range list {
		if !e.set.Empty() {
			kept = append(kept, e)
		}
	}
	list = refCapUpdates(kept, MaxUpdateEntries)
	refSortEntries(list)
	return refEncodeEntries(list), nil
}

// refEntryKey identifies an entry, like Kubernetes' manager identifier.
type refEntryKey struct {
	manager, operation, apiVersion, subresource string
}

type refEntry struct {
	key  refEntryKey
	time *resource.Time
	set  refSet
}

func refKeyOf(e resource.ManagedFieldsEntry) refEntryKey {
	k := refEntryKey{manager: e.Manager, operation: e.Operation, apiVersion: e.APIVersion, subresource: e.Subresource}
	if k.operation == resource.ManagedFieldsOperationApply {
		k.apiVersion = ""
	}
	return k
}

// refDecodeEntries parses entries; a repeated key replaces the earlier entry in place.
func refDecodeEntries(entries []resource.ManagedFieldsEntry) ([]*refEntry, error) {
	list := make([]*refEntry, 0, len(entries)+1)
	index := make(map[refEntryKey]int, len(entries))
	for i, e := range entries {
		switch e.Operation {
		case resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate:
		default:
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].operation", i),
				Err:   fmt.Errorf("must be %q or %q, not %q", resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate, e.Operation)}
		}
		s, err := refParseFieldsV1(e.FieldsV1)
		if err != nil {
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].fieldsV1", i), Err: err}
		}
		var t *resource.Time
		if e.Time != nil && !e.Time.IsZero() {
			v := *e.Time
			t = &v
		}
		k := refKeyOf(e)
		ne := &refEntry{key: k, time: t, set: s}
		ne.key.apiVersion = e.APIVersion // keep the recorded apiVersion, also for Apply
		if j, ok := index[k]; ok {
			list[j] = ne
			continue
		}
		index[k] = len(list)
		list = append(list, ne)
	}
	return list, nil
}

func refUnixOrZero(t *resource.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// refEntryLess is the output order: operation, time, manager, apiVersion, subresource.
func refEntryLess(a, b *refEntry) bool {
	if a.key.operation != b.key.operation {
		return a.key.operation < b.key.operation
	}
	if ta, tb := refUnixOrZero(a.time), refUnixOrZero(b.time); !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.key.manager != b.key.manager {
		return a.key.manager < b.key.manager
	}
	if a.key.apiVersion != b.key.apiVersion {
		return a.key.apiVersion < b.key.apiVersion
	}
	return a.key.subresource < b.key.subresource
}

func refSortEntries(list []*refEntry) {
	sort.SliceStable(list, func(i, j int) bool { return refEntryLess(list[i], list[j]) })
}

func refIsBucket(e *refEntry) bool {
	return e.key.manager == AncientChangesManager &&
		e.key.operation == resource.ManagedFieldsOperationUpdate && e.key.subresource == ""
}

// refCapUpdates folds the oldest Update entries into per-apiVersion AncientChangesManager
// entries until at most max Update entries remain (or nothing more can be folded).
func refCapUpdates(list []*refEntry, max int) []*refEntry {
	var updates []*refEntry
	buckets := map[string]*refEntry{}
	for _, e := range list {
		if e.key.operation != resource.ManagedFieldsOperationUpdate {
			continue
		}
		updates = append(updates, e)
		if refIsBucket(e) {
			buckets[e.key.apiVersion] = e
		}
	}
	n := len(updates)
	if n <= max {
		return list
	}
	refSortEntries(updates)
	folded := map[*refEntry]bool{}
	first := map[string]*refEntry{}
	for _, e := range updates {
		if n <= max {
			break
		}
		if refIsBucket(e) {
			continue
		}
		v := e.key.apiVersion
		b := buckets[v]
		if b == nil {
			f := first[v]
			if f == nil {
				first[v] = e
				continue
			}
			// The first entry of this apiVersion becomes the bucket.
			f.key = refEntryKey{manager: AncientChangesManager, operation: resource.ManagedFieldsOperationUpdate, apiVersion: v}
			buckets[v] = f
			b = f
		}
		b.set = b.set.Union(e.set)
		if refUnixOrZero(e.time).After(refUnixOrZero(b.time)) {
			b.time = e.time
		}
		folded[e] = true
		n--
	}
	out := list[:0]
	for _, e := range list {
		if !folded[e] {
			out = append(out, e)
		}
	}
	return out
}

func refEncodeEntries(list []*refEntry) []resource.ManagedFieldsEntry {
	if len(list) == 0 {
		return nil
	}
	out := make([]resource.ManagedFieldsEntry, 0, len(list))
	for _, e := range list {
		var t *resource.Time
		if e.time != nil {
			v := *e.time
			t = &v
		}
		out = append(out, resource.ManagedFieldsEntry{
			Manager:     e.key.manager,
			Operation:   e.key.operation,
			APIVersion:  e.key.apiVersion,
			Time:        t,
			FieldsType:  resource.FieldsTypeV1,
			FieldsV1:    e.set.FieldsV1(),
			Subresource: e.key.subresource,
		})
	}
	return out
}
