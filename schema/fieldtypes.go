package schema

import (
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Kubernetes' structural-schema extensions that say how server-side apply merges a
// value. Missing means atomic for lists and granular for objects, as Kubernetes
// reads a CRD's schema.
const (
	// ListTypeKeyword is "atomic", "set" or "map".
	ListTypeKeyword = "x-kubernetes-list-type"
	// ListMapKeysKeyword lists the fields that identify an item of a "map" list.
	ListMapKeysKeyword = "x-kubernetes-list-map-keys"
	// MapTypeKeyword is "granular" (the default) or "atomic".
	MapTypeKeyword = "x-kubernetes-map-type"
)

// fieldTypes caches the store.FieldType of each validator.
var fieldTypes sync.Map // *Validator → *store.FieldType

// FieldType returns the shape of gvk's objects for the store's server-side apply and
// managedFields (store.FieldTypes), derived from its JSON Schema: "properties" make
// an object's fields, an "additionalProperties" schema the type of its other
// members, "items" a list's items, and the x-kubernetes-list-type,
// x-kubernetes-list-map-keys and x-kubernetes-map-type keywords how each merges;
// "$ref" and "allOf" are followed. nil when gvk has no schema.
func (r *Registry) FieldType(gvk resource.GroupVersionKind) *store.FieldType {
	v, ok := r.Validator(gvk)
	if !ok {
		return nil
	}
	if t, ok := fieldTypes.Load(v); ok {
		return t.(*store.FieldType)
	}
	base := documentURL(gvk)
	c := converter{docs: v.docs, visiting: map[string]bool{}}
	t := c.convert(v.docs[base], base, 0)
	got, _ := fieldTypes.LoadOrStore(v, t)
	return got.(*store.FieldType)
}

// documentURL is the in-memory URL of gvk's schema document (see Registry.Register).
func documentURL(gvk resource.GroupVersionKind) string {
	if gvk.Group == resource.Group && gvk.Version == resource.Version {
		for _, k := range builtinKinds {
			if k.kind == gvk.Kind {
				return BaseURL + k.file
			}
		}
	}
	group := gvk.Group
	if group == "" {
		group = "core"
	}
	return registeredBaseURL + url.PathEscape(group) + "/" + url.PathEscape(gvk.Version) + "/" + url.PathEscape(gvk.Kind) + ".json"
}

// converter turns JSON Schema documents into store.FieldTypes.
type converter struct {
	docs     map[string]any
	visiting map[string]bool // references being converted: a cycle becomes FieldAny
}

// maxFieldTypeDepth bounds the nesting a conversion follows.
const maxFieldTypeDepth = 64

// facet is one schema object that describes a value, with the URL its references
// resolve against.
type facet struct {
	m    map[string]any
	base string
}

// facets returns the schema objects that together describe a value: s itself, what
// its "$ref" points to and its "allOf" members, recursively. done lists the
// references followed, to be released by the caller.
func (c *converter) facets(s any, base string, depth int, out []facet, done *[]string) []facet {
	m, ok := s.(map[string]any)
	if !ok || depth > maxFieldTypeDepth {
		return out
	}
	out = append(out, facet{m, base})
	if ref, ok := m["$ref"].(string); ok {
		if target, tbase, key, ok := c.resolve(ref, base); ok && !c.visiting[key] {
			c.visiting[key] = true
			*done = append(*done, key)
			out = c.facets(target, tbase, depth+1, out, done)
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, sub := range all {
			out = c.facets(sub, base, depth+1, out, done)
		}
	}
	return out
}

// resolve finds the schema a reference points to.
func (c *converter) resolve(ref, base string) (any, string, string, bool) {
	b, err := url.Parse(base)
	if err != nil {
		return nil, "", "", false
	}
	r, err := url.Parse(ref)
	if err != nil {
		return nil, "", "", false
	}
	abs := b.ResolveReference(r)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	doc, ok := c.docs[abs.String()]
	if !ok {
		return nil, "", "", false
	}
	node := doc
	if frag != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch n := node.(type) {
			case map[string]any:
				node, ok = n[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				ok = err == nil && i >= 0 && i < len(n)
				if ok {
					node = n[i]
				}
			default:
				ok = false
			}
			if !ok {
				return nil, "", "", false
			}
		}
	}
	return node, abs.String(), abs.String() + "#" + frag, true
}

// convert returns the FieldType of the value schema s describes.
func (c *converter) convert(s any, base string, depth int) *store.FieldType {
	if depth > maxFieldTypeDepth {
		return &store.FieldType{Kind: store.FieldAny}
	}
	var done []string
	fs := c.facets(s, base, depth, nil, &done)
	defer func() {
		for _, k := range done {
			delete(c.visiting, k)
		}
	}()
	var isObject, isArray, isScalar bool
	for _, f := range fs {
		for _, t := range typesOf(f.m["type"]) {
			switch t {
			case "object":
				isObject = true
			case "array":
				isArray = true
			default:
				isScalar = true
			}
		}
		if _, ok := f.m["properties"]; ok {
			isObject = true
		}
		if _, ok := f.m["items"]; ok {
			isArray = true
		}
		if _, ok := f.m["const"]; ok {
			isScalar = true
		}
		if _, ok := f.m["enum"]; ok {
			isScalar = true
		}
	}
	switch {
	case isObject && !isArray:
		return c.object(fs, depth)
	case isArray && !isObject:
		return c.list(fs, depth)
	case isScalar && !isObject && !isArray:
		return &store.FieldType{Kind: store.FieldScalar}
	}
	return &store.FieldType{Kind: store.FieldAny}
}

func (c *converter) object(fs []facet, depth int) *store.FieldType {
	t := &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{}}
	for _, f := range fs {
		if props, ok := f.m["properties"].(map[string]any); ok {
			for name, sub := range props {
				if _, seen := t.Fields[name]; !seen {
					t.Fields[name] = c.convert(sub, f.base, depth+1)
				}
			}
		}
		if ap, ok := f.m["additionalProperties"].(map[string]any); ok && t.Elem == nil {
			t.Elem = c.convert(ap, f.base, depth+1)
		}
		if mt, _ := f.m[MapTypeKeyword].(string); mt == "atomic" {
			t.AtomicMap = true
		}
	}
	return t
}

func (c *converter) list(fs []facet, depth int) *store.FieldType {
	t := &store.FieldType{Kind: store.FieldList, ListType: store.ListAtomic}
	for _, f := range fs {
		if items, ok := f.m["items"]; ok && t.Elem == nil {
			t.Elem = c.convert(items, f.base, depth+1)
		}
		if lt, ok := f.m[ListTypeKeyword].(string); ok {
			t.ListType = lt
		}
		if keys, ok := f.m[ListMapKeysKeyword].([]any); ok {
			t.ListMapKeys = t.ListMapKeys[:0]
			for _, k := range keys {
				if s, ok := k.(string); ok {
					t.ListMapKeys = append(t.ListMapKeys, s)
				}
			}
		}
	}
	switch t.ListType {
	case store.ListSet:
		if t.Elem == nil || t.Elem.Kind != store.FieldScalar {
			t.ListType = store.ListAtomic // a set holds scalars only
		}
	case store.ListMap:
		if t.Elem == nil || t.Elem.Kind != store.FieldObject || len(t.ListMapKeys) == 0 {
			t.ListType, t.ListMapKeys = store.ListAtomic, nil
		}
	default:
		t.ListType, t.ListMapKeys = store.ListAtomic, nil
	}
	return t
}

// typesOf returns the "type" keyword's values.
func typesOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
