package store

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/management-service/mgmt/resource"
)

// FieldKind is what a [FieldType] describes.
type FieldKind int

// The kinds of a FieldType.
const (
	// FieldAny is a value whose shape is deduced from the value: objects are
	// tracked field by field, lists are atomic. It is what a kind without a
	// FieldType gets everywhere but in metadata.
	FieldAny FieldKind = iota
	// FieldScalar is a string, number, boolean or null.
	FieldScalar
	// FieldObject is an object with known Fields and, when Elem is set, further
	// members of type Elem (a map such as labels has only Elem).
	FieldObject
	// FieldList is an array of Elem; ListType says how it merges.
	FieldList
)

// List types, as x-kubernetes-list-type names them.
const (
	// ListAtomic lists are replaced whole and owned as one field (the default).
	ListAtomic = "atomic"
	// ListSet lists hold distinct scalars, each owned on its own.
	ListSet = "set"
	// ListMap lists hold objects told apart by the ListMapKeys fields, each owned on
	// its own.
	ListMap = "map"
)

// FieldType is the shape of a value as server-side apply and managedFields see it:
// which members an object has, and how each list merges (atomic, set, or map with
// keys). The schema package derives one per kind from its JSON Schema
// ("x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type").
// metadata is always the store's own ObjectMeta shape (finalizers a set,
// ownerReferences a map keyed by uid), whatever the FieldType says.
type FieldType struct {
	// Kind says which of the fields below apply.
	Kind FieldKind
	// Fields are the known members of an object.
	Fields map[string]*FieldType
	// Elem is the type of an object's other members, or of a list's items; nil
	// means FieldAny.
	Elem *FieldType
	// ListType is ListAtomic (also when empty), ListSet or ListMap.
	ListType string
	// ListMapKeys are the fields that identify an item of a ListMap list.
	ListMapKeys []string
	// AtomicMap makes an object one field, replaced whole ("x-kubernetes-map-type":
	// "atomic").
	AtomicMap bool
}

// FieldTypes gives the store the [FieldType] of each kind (package schema's
// Registry is one). A kind it has none for (nil) is tracked with FieldAny below
// metadata.
type FieldTypes interface {
	// FieldType returns the type of the objects of gvk, or nil.
	FieldType(gvk resource.GroupVersionKind) *FieldType
}

// objectMetaType is the shape of metadata, as Kubernetes' ObjectMeta declares it.
var objectMetaType = func() *FieldType {
	sc := &FieldType{Kind: FieldScalar}
	strMap := &FieldType{Kind: FieldObject, Elem: sc}
	owner := &FieldType{Kind: FieldObject, Fields: map[string]*FieldType{
		"apiVersion": sc, "kind": sc, "name": sc, "uid": sc, "controller": sc, "blockOwnerDeletion": sc}}
	return &FieldType{Kind: FieldObject, Fields: map[string]*FieldType{
		"name": sc, "generateName": sc, "namespace": sc, "uid": sc, "resourceVersion": sc,
		"generation": sc, "creationTimestamp": sc, "deletionTimestamp": sc,
		"deletionGracePeriodSeconds": sc, "selfLink": sc,
		"labels": strMap, "annotations": strMap,
		"ownerReferences": {Kind: FieldList, Elem: owner, ListType: ListMap, ListMapKeys: []string{"uid"}},
		"finalizers":      {Kind: FieldList, Elem: sc, ListType: ListSet},
		"managedFields":   {Kind: FieldList, ListType: ListAtomic},
	}}
}()

// Names of the deduced types every schema carries, as structured-merge-diff's
// DeducedParseableType names them.
const (
	deducedType = "__untyped_deduced_"
	atomicType  = "__untyped_atomic_"
)

// kindType is what the store knows of one kind's shape: the structured-merge-diff
// type, and the object paths under which a granular (set or map) list may sit.
type kindType struct {
	pt typed.ParseableType
	// granular is the tree of object members that lead to set and map lists; an
	// object without any of them (see hasGranularLists) is tracked the fast way.
	granular *granularNode
	// listNames are the names of every set and map list in granular.
	listNames []string
}

// granularNode is one object on the way to granular lists: its members that are
// such lists, and its members that are objects with such lists below.
type granularNode struct {
	lists    []string
	children map[string]*granularNode
}

// kindTypes caches the kindType of each kind per store.
type kindTypes struct {
	m sync.Map // *resource.KindInfo → *kindType
}

// get returns the kindType of k, building it from src on first use.
func (c *kindTypes) get(k *resource.KindInfo, src FieldTypes) (*kindType, error) {
	if v, ok := c.m.Load(k); ok {
		return v.(*kindType), nil
	}
	var root *FieldType
	if src != nil {
		root = src.FieldType(k.GVK())
	}
	kt, err := buildKindType(root)
	if err != nil {
		return nil, fmt.Errorf("store: the field type of %s: %w", k.Kind, err)
	}
	v, _ := c.m.LoadOrStore(k, kt)
	return v.(*kindType), nil
}

// buildKindType turns a kind's FieldType (nil: FieldAny) into a structured-merge-diff
// schema whose metadata is objectMetaType.
func buildKindType(root *FieldType) (*kindType, error) {
	top := &FieldType{Kind: FieldObject, Fields: map[string]*FieldType{}}
	if root != nil && root.Kind == FieldObject {
		for n, f := range root.Fields {
			top.Fields[n] = f
		}
		top.Elem = root.Elem
	}
	top.Fields["metadata"] = objectMetaType
	top.Fields["apiVersion"] = &FieldType{Kind: FieldScalar}
	top.Fields["kind"] = &FieldType{Kind: FieldScalar}
	b := schemaBuilder{names: map[*FieldType]string{}}
	name := b.name(top)
	for len(b.queue) > 0 {
		t := b.queue[0]
		b.queue = b.queue[1:]
		b.define(t)
	}
	b.s.Types = append(b.s.Types,
		smdschema.TypeDef{Name: atomicType, Atom: smdschema.Atom{
			Scalar: ptr(smdschema.Untyped),
			List:   &smdschema.List{ElementType: named(atomicType), ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: named(atomicType), ElementRelationship: smdschema.Atomic}}},
		smdschema.TypeDef{Name: deducedType, Atom: smdschema.Atom{
			Scalar: ptr(smdschema.Untyped),
			List:   &smdschema.List{ElementType: named(atomicType), ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: named(deducedType), ElementRelationship: smdschema.Separable}}})
	if b.err != nil {
		return nil, b.err
	}
	s := &b.s
	g := granularTree(top, 0)
	return &kindType{pt: typed.ParseableType{Schema: s, TypeRef: named(name)}, granular: g, listNames: g.names(nil)}, nil
}

func ptr[T any](v T) *T { return &v }

func named(n string) smdschema.TypeRef { return smdschema.TypeRef{NamedType: ptr(n)} }

// schemaBuilder names each FieldType once (so shared and recursive types work) and
// defines it as a structured-merge-diff type.
type schemaBuilder struct {
	s     smdschema.Schema
	names map[*FieldType]string
	queue []*FieldType
	err   error
}

// ref returns the reference to t's type; FieldAny and nil are the deduced type.
func (b *schemaBuilder) ref(t *FieldType) smdschema.TypeRef {
	if t == nil || t.Kind == FieldAny {
		return named(deducedType)
	}
	return named(b.name(t))
}

func (b *schemaBuilder) name(t *FieldType) string {
	if n, ok := b.names[t]; ok {
		return n
	}
	n := fmt.Sprintf("t%d", len(b.names))
	b.names[t] = n
	b.queue = append(b.queue, t)
	return n
}

func (b *schemaBuilder) define(t *FieldType) {
	def := smdschema.TypeDef{Name: b.names[t]}
	switch t.Kind {
	case FieldScalar:
		def.Scalar = ptr(smdschema.Untyped)
	case FieldObject:
		m := &smdschema.Map{ElementType: b.ref(t.Elem), ElementRelationship: smdschema.Separable}
		if t.AtomicMap {
			m.ElementRelationship = smdschema.Atomic
		}
		names := make([]string, 0, len(t.Fields))
		for n := range t.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			tr := b.ref(t.Fields[n])
			tr.Nullable = true
			m.Fields = append(m.Fields, smdschema.StructField{Name: n, Type: tr})
		}
		def.Map = m
	case FieldList:
		l := &smdschema.List{ElementType: b.ref(t.Elem), ElementRelationship: smdschema.Atomic}
		switch t.ListType {
		case ListSet:
			l.ElementRelationship = smdschema.Associative
		case ListMap:
			if len(t.ListMapKeys) == 0 || t.Elem == nil || t.Elem.Kind != FieldObject {
				b.err = fmt.Errorf("a list of type map needs object items and list map keys")
				return
			}
			l.ElementRelationship = smdschema.Associative
			l.Keys = append([]string(nil), t.ListMapKeys...)
		}
		def.List = l
	}
	b.s.Types = append(b.s.Types, def)
}

// names appends the names of the lists in the tree to dst, each once.
func (n *granularNode) names(dst []string) []string {
	if n == nil {
		return dst
	}
	for _, l := range n.lists {
		if !slices.Contains(dst, l) {
			dst = append(dst, l)
		}
	}
	for _, c := range n.children {
		dst = c.names(dst)
	}
	return dst
}

// granularTree returns the members of the object t that lead to set or map lists,
// or nil when there are none.
func granularTree(t *FieldType, depth int) *granularNode {
	if t == nil || t.Kind != FieldObject || t.AtomicMap || depth > 32 {
		return nil
	}
	var n granularNode
	for name, f := range t.Fields {
		switch {
		case f.Kind == FieldList && (f.ListType == ListSet || f.ListType == ListMap):
			n.lists = append(n.lists, name)
		case f.Kind == FieldObject:
			if c := granularTree(f, depth+1); c != nil {
				if n.children == nil {
					n.children = map[string]*granularNode{}
				}
				n.children[name] = c
			}
		}
	}
	if len(n.lists) == 0 && n.children == nil {
		return nil
	}
	return &n
}
