package crclient

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoapply "k8s.io/client-go/applyconfigurations"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// fieldTypes gives the store the shape of each kind for server-side apply: the
// JSON Schemas' (the store's own kinds, WithJSONSchema kinds) first, then, for the
// built-in Kubernetes kinds of the scheme, the structured-merge-diff schema that
// client-go generates from kube-apiserver's OpenAPI (so a Deployment's containers
// merge by name, as there).
type fieldTypes struct {
	schemas store.FieldTypes
	scheme  *runtime.Scheme
	conv    managedfields.TypeConverter

	mu    sync.Mutex
	cache map[resource.GroupVersionKind]*store.FieldType
}

func newFieldTypes(schemas store.FieldTypes, scheme *runtime.Scheme) *fieldTypes {
	return &fieldTypes{schemas: schemas, scheme: scheme, conv: clientgoapply.NewTypeConverter(scheme),
		cache: map[resource.GroupVersionKind]*store.FieldType{}}
}

// FieldType returns the type of gvk's objects, or nil (then everything below
// metadata is deduced from the values: objects field by field, lists atomic).
func (f *fieldTypes) FieldType(gvk resource.GroupVersionKind) *store.FieldType {
	if t := f.schemas.FieldType(gvk); t != nil {
		return t
	}
	if !builtinGroup(gvk.Group) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.cache[gvk]; ok {
		return t
	}
	t := f.builtin(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
	f.cache[gvk] = t
	return t
}

// builtin converts the structured-merge-diff type of a built-in kind; nil when
// client-go has none for it.
func (f *fieldTypes) builtin(gvk schema.GroupVersionKind) *store.FieldType {
	obj, err := f.scheme.New(gvk)
	if err != nil {
		return nil
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	tv, err := f.conv.ObjectToTyped(obj)
	if err != nil {
		return nil
	}
	c := smdConverter{s: tv.Schema(), named: map[string]*store.FieldType{}}
	return c.convert(tv.TypeRef(), 0)
}

// smdConverter turns structured-merge-diff types into store.FieldTypes; a named
// type is converted once, so shared and recursive types are shared.
type smdConverter struct {
	s     *smdschema.Schema
	named map[string]*store.FieldType
}

func (c *smdConverter) convert(tr smdschema.TypeRef, depth int) *store.FieldType {
	if depth > 64 {
		return nil
	}
	if tr.NamedType != nil && tr.ElementRelationship == nil {
		if t, ok := c.named[*tr.NamedType]; ok {
			return t
		}
	}
	atom, ok := c.s.Resolve(tr)
	if !ok {
		return nil
	}
	// A value that may be a scalar, a list or a map (int-or-string is a scalar
	// only) is deduced from the value.
	n := 0
	for _, p := range []bool{atom.Scalar != nil, atom.List != nil, atom.Map != nil} {
		if p {
			n++
		}
	}
	if n != 1 {
		return nil
	}
	t := &store.FieldType{}
	if tr.NamedType != nil && tr.ElementRelationship == nil {
		c.named[*tr.NamedType] = t
	}
	switch {
	case atom.Scalar != nil:
		t.Kind = store.FieldScalar
	case atom.List != nil:
		t.Kind = store.FieldList
		t.Elem = c.convert(atom.List.ElementType, depth+1)
		switch {
		case atom.List.ElementRelationship == smdschema.Associative && len(atom.List.Keys) > 0:
			t.ListType, t.ListMapKeys = store.ListMap, append([]string(nil), atom.List.Keys...)
			if t.Elem == nil || t.Elem.Kind != store.FieldObject {
				t.ListType, t.ListMapKeys = store.ListAtomic, nil
			}
		case atom.List.ElementRelationship == smdschema.Associative:
			t.ListType = store.ListSet
		default:
			t.ListType = store.ListAtomic
		}
	default:
		t.Kind = store.FieldObject
		t.AtomicMap = atom.Map.ElementRelationship == smdschema.Atomic
		if len(atom.Map.Fields) > 0 {
			t.Fields = make(map[string]*store.FieldType, len(atom.Map.Fields))
			for _, sf := range atom.Map.Fields {
				t.Fields[sf.Name] = c.convert(sf.Type, depth+1)
			}
		}
		if atom.Map.ElementType.NamedType != nil || atom.Map.ElementType.Inlined != (smdschema.Atom{}) {
			t.Elem = c.convert(atom.Map.ElementType, depth+1)
		}
	}
	return t
}
