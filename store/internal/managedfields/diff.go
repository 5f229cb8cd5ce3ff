package managedfields

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// neverTrackedMeta are the metadata fields no entry ever records: they are set by the
// server or are the bookkeeping itself.
var neverTrackedMeta = map[string]bool{
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

// skip reports whether the subtree at parent+key is never recorded.
func (s scope) skip(parent []string, key string) bool {
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
		return parent[0] == "f:metadata" && neverTrackedMeta[key]
	}
	return false
}

// markable reports whether the node at path may itself be a member: neither the root
// nor metadata ever is (Kubernetes strips both).
func markable(path []string) bool {
	return len(path) > 1 || (len(path) == 1 && path[0] != "f:metadata")
}

// comparison is what a write did to the recorded paths of an object.
type comparison struct {
	added, modified, removed builder
	scope                    scope
}

type valueKind int

const (
	absent   valueKind = iota
	scalar             // a string, number, boolean, null or list (lists are atomic)
	emptyObj           // {}: a leaf, like Kubernetes' "empty promotes to leaf"
	object             // a non-empty object: its fields are compared one by one
)

func kindOf(v any, ok bool) valueKind {
	if !ok {
		return absent
	}
	if m, isMap := v.(map[string]any); isMap {
		if len(m) == 0 {
			return emptyObj
		}
		return object
	}
	return scalar
}

// walk compares the values at path, following structured-merge-diff's comparison for
// a schema-less object: leaves are scalars, lists and empty objects; a non-empty
// object that appears is added itself (the "." marker), one that disappears is
// removed itself, and one that replaces a scalar (or is replaced by one) is modified
// itself, besides its fields being added or removed.
func (c *comparison) walk(path []string, l any, lok bool, r any, rok bool) {
	lk, rk := kindOf(l, lok), kindOf(r, rok)
	if lk != object && rk != object {
		if !markable(path) {
			return
		}
		switch {
		case lk == absent && rk == absent:
		case lk == absent:
			c.added.insert(path)
		case rk == absent:
			c.removed.insert(path)
		case !jsonEqual(l, r):
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
	if !markable(path) {
		return
	}
	switch {
	case lk == absent:
		c.added.insert(path)
	case rk == absent:
		c.removed.insert(path)
	case lk == scalar || rk == scalar:
		c.modified.insert(path)
	}
}

// jsonEqual compares two decoded JSON values (numbers as json.Number). Numbers are
// equal when they denote the same value as int64, or else as float64.
func jsonEqual(a, b any) bool {
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
		return ok && numbersEqual(av, bv)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
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
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return false
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

// compare decodes both objects (old may be nil: nothing existed) and compares them.
func compare(oldObj, newObj []byte, s scope) (*comparison, error) {
	var (
		l   map[string]any
		err error
	)
	if oldObj != nil {
		if l, err = decodeObject(oldObj); err != nil {
			return nil, fmt.Errorf("managedfields: old object: %w", err)
		}
	}
	r, err := decodeObject(newObj)
	if err != nil {
		return nil, fmt.Errorf("managedfields: new object: %w", err)
	}
	c := &comparison{scope: s}
	c.walk(nil, l, oldObj != nil, r, true)
	return c, nil
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
	c, err := compare(nil, obj, scopeOf(w))
	if err != nil {
		return Set{}, err
	}
	return c.added.set(), nil
}
