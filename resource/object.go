package resource

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Object is what the store keeps: any struct that embeds [TypeMeta] inline and
// [ObjectMeta] as "metadata". Every kind of this package implements it through those
// embedded fields; a host program's own kinds do the same and are registered in a
// [Scheme].
type Object interface {
	// GetTypeMeta returns the object's kind and apiVersion, for reading and writing.
	GetTypeMeta() *TypeMeta
	// GetObjectMeta returns the object's metadata, for reading and writing.
	GetObjectMeta() *ObjectMeta
}

// ObjectList is a list kind: [TypeMeta], [ListMeta] as "metadata" and "items".
type ObjectList interface {
	// GetTypeMeta returns the list's kind ("<Kind>List") and apiVersion.
	GetTypeMeta() *TypeMeta
	// GetListMeta returns the list's metadata: resourceVersion and continue.
	GetListMeta() *ListMeta
	// Len is the number of items.
	Len() int
	// Item returns the i-th item, pointing into the list (not a copy).
	Item(i int) Object
	// NewItem returns a new, empty object of the list's item type.
	NewItem() Object
	// SetItems replaces the items. Every element must be of the list's item type,
	// otherwise SetItems returns an error and leaves the list unchanged.
	SetItems(items []Object) error
}

// List is the generic list of objects of type T; every XxxList of this package is an
// instance of it. PT is *T, which must implement [Object].
type List[T any, PT interface {
	*T
	Object
}] struct {
	TypeMeta `json:",inline"`
	// ListMeta holds the list's resourceVersion and continue token.
	ListMeta `json:"metadata"`
	// Items are the objects of the list, in key order (namespace, then name).
	Items []T `json:"items"`
}

// Len is the number of items.
func (l *List[T, PT]) Len() int { return len(l.Items) }

// Item returns a pointer to the i-th item.
func (l *List[T, PT]) Item(i int) Object { return PT(&l.Items[i]) }

// NewItem returns a new, empty T.
func (l *List[T, PT]) NewItem() Object { return PT(new(T)) }

// SetItems replaces the items with copies of the given objects, which must all be *T.
func (l *List[T, PT]) SetItems(items []Object) error {
	out := make([]T, 0, len(items))
	for i, o := range items {
		p, ok := o.(PT)
		if !ok {
			return fmt.Errorf("resource: item %d is %T, list holds %T", i, o, PT(nil))
		}
		out = append(out, *p)
	}
	l.Items = out
	return nil
}

// DeepCopy returns a copy of obj that shares no memory with it. It copies through the
// object's JSON form, so every field that is not encoded (there should be none) is lost.
func DeepCopy[O Object](obj O) (O, error) {
	var zero O
	t := reflect.TypeOf(obj)
	if t == nil || t.Kind() != reflect.Pointer {
		return zero, fmt.Errorf("resource: DeepCopy needs a pointer to a struct, got %T", obj)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return zero, fmt.Errorf("resource: DeepCopy: %w", err)
	}
	out := reflect.New(t.Elem()).Interface().(O)
	if err := json.Unmarshal(b, out); err != nil {
		return zero, fmt.Errorf("resource: DeepCopy: %w", err)
	}
	return out, nil
}
