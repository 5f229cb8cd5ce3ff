package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// ListInfo is how a list field merges, from the Kubernetes annotations of its schema:
// x-kubernetes-list-type (atomic, set or map), x-kubernetes-list-map-keys,
// x-kubernetes-patch-merge-key and x-kubernetes-patch-strategy.
type ListInfo struct {
	// Type is "atomic" (replaced as a whole), "set" (scalars, each once) or "map"
	// (objects told apart by MapKeys); "" when the schema says nothing (atomic).
	Type string
	// MapKeys are the fields that identify an item of a map list.
	MapKeys []string
	// MergeKey is the field a strategic merge patch matches items by; "" for none.
	MergeKey string
	// Strategy is the strategic merge patch strategy: "merge" merges the list with the
	// patch's (by MergeKey, or as a set of scalars); "" replaces it.
	Strategy string
}

// node is a schema object and the URL of the document it is in, to resolve its $ref.
type node struct {
	m    map[string]any
	base string
}

// maxRefDepth bounds the references and allOf entries followed from one schema.
const maxRefDepth = 32

func (v *Validator) rootNode() (node, bool) {
	m, ok := v.docs[v.root].(map[string]any)
	return node{m: m, base: v.root}, ok
}

// resolve follows ref from n: an in-memory document and a JSON pointer in it.
func (v *Validator) resolve(n node, ref string) (node, bool) {
	b, err := url.Parse(n.base)
	if err != nil {
		return node{}, false
	}
	r, err := url.Parse(ref)
	if err != nil {
		return node{}, false
	}
	abs := b.ResolveReference(r)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	cur, ok := v.docs[abs.String()]
	if !ok {
		return node{}, false
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return node{}, false
		}
		cur = m[tok]
	}
	m, ok := cur.(map[string]any)
	return node{m: m, base: abs.String()}, ok
}

// each calls fn on n, then on the schemas n refers to ($ref) and combines with
// (allOf), depth first, until fn returns true.
func (v *Validator) each(n node, depth int, fn func(node) bool) bool {
	if depth > maxRefDepth || n.m == nil {
		return false
	}
	if fn(n) {
		return true
	}
	if ref, ok := n.m["$ref"].(string); ok {
		if r, ok := v.resolve(n, ref); ok && v.each(r, depth+1, fn) {
			return true
		}
	}
	if all, ok := n.m["allOf"].([]any); ok {
		for _, a := range all {
			if am, ok := a.(map[string]any); ok && v.each(node{m: am, base: n.base}, depth+1, fn) {
				return true
			}
		}
	}
	return false
}

// property returns the schema of field name of an object schema: a named property,
// else the schema of additional properties (a map's values).
func (v *Validator) property(n node, name string) (node, bool) {
	var out node
	found := v.each(n, 0, func(c node) bool {
		if props, ok := c.m["properties"].(map[string]any); ok {
			if p, ok := props[name].(map[string]any); ok {
				out = node{m: p, base: c.base}
				return true
			}
		}
		return false
	})
	if found {
		return out, true
	}
	found = v.each(n, 0, func(c node) bool {
		if p, ok := c.m["additionalProperties"].(map[string]any); ok {
			out = node{m: p, base: c.base}
			return true
		}
		return false
	})
	return out, found
}

// items returns the schema of the items of an array schema.
func (v *Validator) items(n node) (node, bool) {
	var out node
	found := v.each(n, 0, func(c node) bool {
		if p, ok := c.m["items"].(map[string]any); ok {
			out = node{m: p, base: c.base}
			return true
		}
		return false
	})
	return out, found
}

func (v *Validator) listInfo(n node) ListInfo {
	var li ListInfo
	v.each(n, 0, func(c node) bool {
		if s, ok := c.m["x-kubernetes-list-type"].(string); ok && li.Type == "" {
			li.Type = s
		}
		if keys, ok := c.m["x-kubernetes-list-map-keys"].([]any); ok && li.MapKeys == nil {
			for _, k := range keys {
				if s, ok := k.(string); ok {
					li.MapKeys = append(li.MapKeys, s)
				}
			}
		}
		if s, ok := c.m["x-kubernetes-patch-merge-key"].(string); ok && li.MergeKey == "" {
			li.MergeKey = s
		}
		if s, ok := c.m["x-kubernetes-patch-strategy"].(string); ok && li.Strategy == "" {
			li.Strategy = s
		}
		return false
	})
	return li
}

// ListInfo returns how the list at a field path merges (the path of field names from
// the object's root, e.g. "spec", "allowedClusters"); false when the schema has no
// such field.
func (v *Validator) ListInfo(path ...string) (ListInfo, bool) {
	n, ok := v.rootNode()
	for _, name := range path {
		if !ok {
			return ListInfo{}, false
		}
		n, ok = v.property(n, name)
	}
	if !ok {
		return ListInfo{}, false
	}
	return v.listInfo(n), true
}

// StrategicMergePatch applies a strategic merge patch (application/
// strategic-merge-patch+json) to original, the JSON of an object of the kind gvk,
// with the merge rules of its schema; see [Validator.StrategicMergePatch].
func (r *Registry) StrategicMergePatch(gvk resource.GroupVersionKind, original, patch []byte) ([]byte, error) {
	v, ok := r.Validator(gvk)
	if !ok {
		return nil, resource.NewUnsupportedMediaType("application/strategic-merge-patch+json (the kind has no schema)")
	}
	return v.StrategicMergePatch(original, patch)
}

// StrategicMergePatch applies a strategic merge patch to original, the JSON of an
// object of the validator's kind, as kube-apiserver applies one to a built-in kind:
// objects merge field by field (null deletes a field); a list whose schema says
// x-kubernetes-patch-strategy merge merges with the patch's, items matched by
// x-kubernetes-patch-merge-key (a scalar list as a set); any other list is replaced.
// The directives are those of Kubernetes: "$patch" (replace or delete, in an object
// or a list item; replace as a list element), "$retainKeys",
// "$deleteFromPrimitiveList/<field>" and "$setElementOrder/<field>". A patch that is
// not a JSON object, or a malformed directive, is 400.
func (v *Validator) StrategicMergePatch(original, patch []byte) ([]byte, error) {
	var orig, p map[string]any
	if err := decodeNumbers(original, &orig); err != nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("the object to patch is not a JSON object: %v", err))
	}
	if err := decodeNumbers(patch, &p); err != nil || p == nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("a strategic merge patch must be a JSON object: %v", err))
	}
	root, _ := v.rootNode()
	out, err := v.mergeMap(orig, p, root, true, nil)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, resource.NewBadRequest("a strategic merge patch cannot delete the whole object")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, resource.NewInternalError(err)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func smpError(path []string, format string, args ...any) error {
	where := strings.Join(path, ".")
	if where != "" {
		where = " at " + where
	}
	return resource.NewBadRequest("invalid strategic merge patch" + where + ": " + fmt.Sprintf(format, args...))
}

const (
	directivePatch       = "$patch"
	directiveRetainKeys  = "$retainKeys"
	prefixDeletePrimList = "$deleteFromPrimitiveList/"
	prefixSetOrder       = "$setElementOrder/"
)

// mergeMap merges patch into orig (which it may change); known says whether n is a
// schema (else everything below is merged without list rules). nil means delete.
func (v *Validator) mergeMap(orig, patch map[string]any, n node, known bool, path []string) (map[string]any, error) {
	if d, ok := patch[directivePatch]; ok {
		switch d {
		case "replace":
			return stripDirectives(patch, path)
		case "delete":
			return nil, nil
		default:
			return nil, smpError(path, "unknown %s directive %v", directivePatch, d)
		}
	}
	if orig == nil {
		orig = map[string]any{}
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pv := patch[k]
		if strings.HasPrefix(k, "$") {
			continue
		}
		fpath := append(slices.Clip(path), k)
		child, childKnown := node{}, false
		if known {
			child, childKnown = v.property(n, k)
		}
		if pv == nil {
			delete(orig, k)
			continue
		}
		switch pt := pv.(type) {
		case map[string]any:
			om, _ := orig[k].(map[string]any)
			merged, err := v.mergeMap(om, pt, child, childKnown, fpath)
			if err != nil {
				return nil, err
			}
			if merged == nil {
				delete(orig, k)
			} else {
				orig[k] = merged
			}
		case []any:
			ol, _ := orig[k].([]any)
			merged, err := v.mergeList(ol, pt, child, childKnown, fpath)
			if err != nil {
				return nil, err
			}
			orig[k] = merged
		default:
			orig[k] = pv
		}
	}
	// The list directives, once the fields are merged.
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, prefixDeletePrimList):
			field := strings.TrimPrefix(k, prefixDeletePrimList)
			drop, ok := patch[k].([]any)
			if !ok {
				return nil, smpError(path, "%s must be a list", k)
			}
			if ol, ok := orig[field].([]any); ok {
				orig[field] = slices.DeleteFunc(slices.Clone(ol), func(x any) bool { return containsValue(drop, x) })
				if len(orig[field].([]any)) == 0 {
					delete(orig, field)
				}
			}
		case strings.HasPrefix(k, prefixSetOrder):
			field := strings.TrimPrefix(k, prefixSetOrder)
			order, ok := patch[k].([]any)
			if !ok {
				return nil, smpError(path, "%s must be a list", k)
			}
			ol, ok := orig[field].([]any)
			if !ok {
				continue
			}
			mergeKey := ""
			if known {
				if child, ok := v.property(n, field); ok {
					mergeKey = v.listInfo(child).MergeKey
				}
			}
			reordered, err := setElementOrder(ol, order, mergeKey, append(slices.Clip(path), field))
			if err != nil {
				return nil, err
			}
			orig[field] = reordered
		case k == directiveRetainKeys:
			retain, ok := patch[k].([]any)
			if !ok {
				return nil, smpError(path, "%s must be a list", k)
			}
			for f := range orig {
				if !containsValue(retain, f) {
					delete(orig, f)
				}
			}
		case k == directivePatch, !strings.HasPrefix(k, "$"):
		default:
			return nil, smpError(path, "unknown directive %q", k)
		}
	}
	return orig, nil
}

// mergeList merges a patch's list into the original one by the list's rules.
func (v *Validator) mergeList(orig, patch []any, n node, known bool, path []string) ([]any, error) {
	// A {"$patch": "replace"} element replaces the list with the patch's others.
	for i, e := range patch {
		if m, ok := e.(map[string]any); ok && m[directivePatch] == "replace" && len(m) == 1 {
			rest := append(slices.Clone(patch[:i]), patch[i+1:]...)
			return stripList(rest, path)
		}
	}
	var li ListInfo
	var itemNode node
	itemKnown := false
	if known {
		li = v.listInfo(n)
		itemNode, itemKnown = v.items(n)
	}
	if li.Strategy != "merge" {
		return stripList(patch, path)
	}
	if li.MergeKey == "" {
		// A set of scalars: the original's, then the patch's new ones.
		out := slices.Clone(orig)
		for _, e := range patch {
			if _, ok := e.(map[string]any); ok {
				return nil, smpError(path, "an object in a list merged as a set of values")
			}
			if !containsValue(out, e) {
				out = append(out, e)
			}
		}
		return out, nil
	}
	out := slices.Clone(orig)
	for _, e := range patch {
		pm, ok := e.(map[string]any)
		if !ok {
			return nil, smpError(path, "a list merged by %q holds a value that is not an object", li.MergeKey)
		}
		key, has := pm[li.MergeKey]
		if !has {
			return nil, smpError(path, "an item does not contain the merge key %q", li.MergeKey)
		}
		at := -1
		for i, o := range out {
			if om, ok := o.(map[string]any); ok && jsonEqual(om[li.MergeKey], key) {
				at = i
				break
			}
		}
		if pm[directivePatch] == "delete" {
			if at >= 0 {
				out = slices.Delete(out, at, at+1)
			}
			continue
		}
		var base map[string]any
		if at >= 0 {
			base, _ = out[at].(map[string]any)
		}
		merged, err := v.mergeMap(base, pm, itemNode, itemKnown, path)
		if err != nil {
			return nil, err
		}
		switch {
		case merged == nil && at >= 0:
			out = slices.Delete(out, at, at+1)
		case merged == nil:
		case at >= 0:
			out[at] = merged
		default:
			out = append(out, merged)
		}
	}
	return out, nil
}

// setElementOrder orders list by order (values, or merge key values for a list of
// objects): the items order names first, in its order, then the others as they were.
func setElementOrder(list, order []any, mergeKey string, path []string) ([]any, error) {
	keyOf := func(e any) any {
		if mergeKey == "" {
			return e
		}
		if m, ok := e.(map[string]any); ok {
			return m[mergeKey]
		}
		return nil
	}
	out := make([]any, 0, len(list))
	used := make([]bool, len(list))
	for _, o := range order {
		want := o
		if mergeKey != "" {
			m, ok := o.(map[string]any)
			if !ok {
				return nil, smpError(path, "%s entries must be objects with the merge key %q", prefixSetOrder, mergeKey)
			}
			want = m[mergeKey]
		}
		for i, e := range list {
			if !used[i] && jsonEqual(keyOf(e), want) {
				out = append(out, e)
				used[i] = true
				break
			}
		}
	}
	for i, e := range list {
		if !used[i] {
			out = append(out, e)
		}
	}
	return out, nil
}

// stripDirectives returns a copy of m without directives, refusing unknown ones.
func stripDirectives(m map[string]any, path []string) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, val := range m {
		if strings.HasPrefix(k, "$") {
			continue
		}
		switch t := val.(type) {
		case map[string]any:
			c, err := stripDirectives(t, append(slices.Clip(path), k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		case []any:
			c, err := stripList(t, append(slices.Clip(path), k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		default:
			out[k] = val
		}
	}
	return out, nil
}

func stripList(l []any, path []string) ([]any, error) {
	out := make([]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			if m[directivePatch] == "delete" {
				continue
			}
			c, err := stripDirectives(m, path)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if jsonEqual(e, v) {
			return true
		}
	}
	return false
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	if as, ok := a.(string); ok {
		bs, ok := b.(string)
		return ok && as == bs
	}
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}
