package crclient

import (
	"encoding/json"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/management-service/mgmt/resource"
)

// Object metadata crosses between the user's types and the store field by field:
// both sides are Go structs with the same fields, and going through JSON would
// encode and decode the largest part of most objects for nothing. Each conversion
// gives what the JSON round trip would (times in UTC at whole seconds, empty lists
// and maps as nil, as omitempty drops them).

var metaType = reflect.TypeFor[metav1.ObjectMeta]()

// objectMetaField returns the index of the embedded metav1.ObjectMeta encoded as
// "metadata" in the struct type t, or nil when t has none.
func objectMetaField(t reflect.Type) []int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type == metaType && f.Tag.Get("json") == "metadata,omitempty" {
			return f.Index
		}
	}
	return nil
}

func nilIfEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sharedMap is m, or nil when it is empty (as omitempty drops it).
func sharedMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// sharedStrings is s, or nil when it is empty (as omitempty drops it).
func sharedStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nilIfEmptyStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

func copyInt64(i *int64) *int64 {
	if i == nil {
		return nil
	}
	v := *i
	return &v
}

// toStoreMeta converts the user's metadata.
func toStoreMeta(m *metav1.ObjectMeta) resource.ObjectMeta {
	out := resource.ObjectMeta{
		Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace, UID: string(m.UID),
		ResourceVersion: m.ResourceVersion, Generation: m.Generation,
		DeletionGracePeriodSeconds: copyInt64(m.DeletionGracePeriodSeconds),
		// The store changes nothing of what it is given (it copies before changing),
		// so the maps and lists are shared, not copied.
		Labels: sharedMap(m.Labels), Annotations: sharedMap(m.Annotations),
		Finalizers: sharedStrings(m.Finalizers),
	}
	if !m.CreationTimestamp.IsZero() {
		out.CreationTimestamp = resource.NewTime(m.CreationTimestamp.Time)
	}
	if m.DeletionTimestamp != nil {
		out.DeletionTimestamp = resource.NewTimePtr(m.DeletionTimestamp.Time)
	}
	if len(m.OwnerReferences) > 0 {
		out.OwnerReferences = make([]resource.OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			out.OwnerReferences[i] = resource.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name,
				UID: string(r.UID), Controller: copyBool(r.Controller), BlockOwnerDeletion: copyBool(r.BlockOwnerDeletion)}
		}
	}
	if len(m.ManagedFields) > 0 {
		out.ManagedFields = make([]resource.ManagedFieldsEntry, len(m.ManagedFields))
		for i, e := range m.ManagedFields {
			o := resource.ManagedFieldsEntry{Manager: e.Manager, Operation: string(e.Operation),
				APIVersion: e.APIVersion, FieldsType: e.FieldsType, Subresource: e.Subresource}
			if e.Time != nil {
				o.Time = resource.NewTimePtr(e.Time.Time)
			}
			if e.FieldsV1 != nil {
				o.FieldsV1 = compactJSON(e.FieldsV1.Raw)
			}
			out.ManagedFields[i] = o
		}
	}
	return out
}

// compactJSON returns raw as json.Marshal writes a json.RawMessage holding it: nil
// stays nil, anything that is not valid JSON is kept for the store to refuse.
func compactJSON(raw []byte) json.RawMessage {
	if raw == nil {
		return nil
	}
	b, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b
}

// fromStoreMeta converts the store's metadata into the user's.
func fromStoreMeta(m *resource.ObjectMeta, out *metav1.ObjectMeta) {
	*out = metav1.ObjectMeta{
		Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace, UID: types.UID(m.UID),
		ResourceVersion: m.ResourceVersion, Generation: m.Generation,
		DeletionGracePeriodSeconds: copyInt64(m.DeletionGracePeriodSeconds),
		Labels:                     nilIfEmptyMap(m.Labels), Annotations: nilIfEmptyMap(m.Annotations),
		Finalizers: nilIfEmptyStrings(m.Finalizers),
	}
	// metav1.Time decodes into local time: so do these.
	if !m.CreationTimestamp.IsZero() {
		out.CreationTimestamp = metav1.NewTime(m.CreationTimestamp.Local())
	}
	if m.DeletionTimestamp != nil {
		t := metav1.NewTime(m.DeletionTimestamp.Local())
		out.DeletionTimestamp = &t
	}
	if len(m.OwnerReferences) > 0 {
		out.OwnerReferences = make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			out.OwnerReferences[i] = metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name,
				UID: types.UID(r.UID), Controller: copyBool(r.Controller), BlockOwnerDeletion: copyBool(r.BlockOwnerDeletion)}
		}
	}
	if len(m.ManagedFields) > 0 {
		out.ManagedFields = make([]metav1.ManagedFieldsEntry, len(m.ManagedFields))
		for i, e := range m.ManagedFields {
			o := metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: metav1.ManagedFieldsOperationType(e.Operation),
				APIVersion: e.APIVersion, FieldsType: e.FieldsType, Subresource: e.Subresource}
			if e.Time != nil {
				t := metav1.NewTime(e.Time.Local())
				o.Time = &t
			}
			if e.FieldsV1 != nil {
				o.FieldsV1 = &metav1.FieldsV1{Raw: append([]byte(nil), e.FieldsV1...)}
			}
			out.ManagedFields[i] = o
		}
	}
}
