package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Group is the API group of every kind this library defines.
const Group = "management.service"

// Version is the only API version of [Group].
const Version = "v1"

// GroupVersion is the apiVersion written on every object of [Group]: "management.service/v1".
const GroupVersion = Group + "/" + Version

// TypeMeta names the kind and API version of an object. It is written inline at the top
// level of every object and list, as "kind" and "apiVersion".
type TypeMeta struct {
	// Kind is the CamelCase kind name, e.g. "Project". Servers may infer it from the
	// endpoint; it cannot be updated.
	Kind string `json:"kind,omitempty"`
	// APIVersion is "group/version" (or "version" for the core group), e.g.
	// "management.service/v1".
	APIVersion string `json:"apiVersion,omitempty"`
}

// GetTypeMeta returns t itself so that every kind embedding TypeMeta satisfies [Object].
func (t *TypeMeta) GetTypeMeta() *TypeMeta { return t }

// Time is a timestamp that encodes as RFC 3339 in UTC at second precision, and as JSON
// null when zero, the way Kubernetes writes creationTimestamp.
type Time struct {
	time.Time
}

// NewTime returns t in UTC truncated to whole seconds, the precision the wire keeps.
func NewTime(t time.Time) Time {
	return Time{t.UTC().Truncate(time.Second)}
}

// NewTimePtr is [NewTime] returning a pointer, for optional timestamps.
func NewTimePtr(t time.Time) *Time {
	v := NewTime(t)
	return &v
}

// Equal reports whether t and u are the same instant; two zero values are equal and
// nil pointers are equal to each other only.
func (t *Time) Equal(u *Time) bool {
	if t == nil || u == nil {
		return t == u
	}
	return t.Time.Equal(u.Time)
}

// MarshalJSON writes the time as an RFC 3339 UTC string at second precision, or null
// when it is zero. A time outside the years 0000-9999 in UTC is an error.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("timestamp %v is outside the years 0000-9999 that RFC 3339 can write", u)
	}
	b := make([]byte, 0, len(time.RFC3339)+2)
	b = append(b, '"')
	b = u.Truncate(time.Second).AppendFormat(b, time.RFC3339)
	return append(b, '"'), nil
}

// UnmarshalJSON reads an RFC 3339 string (any offset, fractional seconds dropped) or
// null, which leaves the zero time. A time outside the years 0000-9999 once moved to
// UTC is an error, since it could not be written back.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be an RFC 3339 string: %w", err)
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("timestamp must be RFC 3339: %w", err)
	}
	pt = pt.UTC()
	if y := pt.Year(); y < 0 || y > 9999 {
		return fmt.Errorf("timestamp %q is outside the years 0000-9999 in UTC", s)
	}
	t.Time = pt.Truncate(time.Second)
	return nil
}

// ObjectMeta is the metadata every stored object carries. It holds every field of the
// spec's metadata table with its Kubernetes JSON name. Fields marked server-populated
// are set by the store; whatever a client sends there is replaced or refused.
type ObjectMeta struct {
	// Name is unique within a namespace (or cluster-wide for cluster-scoped kinds).
	// Required on create unless GenerateName is given. Cannot be updated.
	Name string `json:"name,omitempty"`
	// GenerateName is a prefix the server uses to generate a unique name when Name is
	// empty: the prefix is cut to 58 characters and 5 random characters are appended.
	GenerateName string `json:"generateName,omitempty"`
	// Namespace is the DNS label within which Name is unique. Empty means "default" for
	// namespaced kinds; cluster-scoped objects have it empty. Cannot be updated.
	Namespace string `json:"namespace,omitempty"`
	// UID is unique in time and space; server-generated on create, read-only.
	UID string `json:"uid,omitempty"`
	// ResourceVersion is the opaque version of this object: the store revision of its
	// last write. Pass it back unchanged for optimistic concurrency and watch.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Generation is the sequence number of the desired state: 1 on create, +1 whenever
	// anything outside metadata and status changes, and +1 when deletion starts.
	// Server-populated; a client's value is ignored.
	Generation int64 `json:"generation,omitempty"`
	// CreationTimestamp is the server time of creation (RFC 3339, UTC). It is written as
	// null when unset. Clients may not set it.
	CreationTimestamp Time `json:"creationTimestamp"`
	// DeletionTimestamp is set by the server when graceful deletion is requested; the
	// object is removed after it once Finalizers is empty. It can only move earlier.
	DeletionTimestamp *Time `json:"deletionTimestamp,omitempty"`
	// DeletionGracePeriodSeconds is the grace period in force; set only together with
	// DeletionTimestamp and only ever shortened. Read-only.
	DeletionGracePeriodSeconds *int64 `json:"deletionGracePeriodSeconds,omitempty"`
	// Labels organise and select objects.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations hold unstructured metadata set by tools; not queryable.
	Annotations map[string]string `json:"annotations,omitempty"`
	// OwnerReferences list the objects this one depends on. When every owner is gone the
	// object is garbage collected. At most one entry may be the managing controller.
	OwnerReferences []OwnerReference `json:"ownerReferences,omitempty"`
	// Finalizers must be empty before the object is removed. Once DeletionTimestamp is
	// set, entries can only be removed.
	Finalizers []string `json:"finalizers,omitempty"`
	// ManagedFields maps each field manager to the fields it manages.
	ManagedFields []ManagedFieldsEntry `json:"managedFields,omitempty"`
}

// GetObjectMeta returns m itself so that every kind embedding ObjectMeta satisfies
// [Object].
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// IsTerminating reports whether deletion of the object has started (DeletionTimestamp
// is set).
func (m *ObjectMeta) IsTerminating() bool { return m.DeletionTimestamp != nil }

// HasFinalizer reports whether name is among the object's finalizers.
func (m *ObjectMeta) HasFinalizer(name string) bool {
	for _, f := range m.Finalizers {
		if f == name {
			return true
		}
	}
	return false
}

// AddFinalizer adds name to the finalizers unless it is there already, and reports
// whether it changed anything.
func (m *ObjectMeta) AddFinalizer(name string) bool {
	if m.HasFinalizer(name) {
		return false
	}
	m.Finalizers = append(m.Finalizers, name)
	return true
}

// RemoveFinalizer removes every occurrence of name and reports whether it changed
// anything.
func (m *ObjectMeta) RemoveFinalizer(name string) bool {
	out := m.Finalizers[:0:0]
	for _, f := range m.Finalizers {
		if f != name {
			out = append(out, f)
		}
	}
	changed := len(out) != len(m.Finalizers)
	if changed {
		if len(out) == 0 {
			out = nil
		}
		m.Finalizers = out
	}
	return changed
}

// OwnerReference points at an object this one depends on.
type OwnerReference struct {
	// APIVersion of the referent, "group/version".
	APIVersion string `json:"apiVersion"`
	// Kind of the referent.
	Kind string `json:"kind"`
	// Name of the referent.
	Name string `json:"name"`
	// UID of the referent; an owner recreated with another uid counts as gone.
	UID string `json:"uid"`
	// Controller marks the managing controller; at most one reference may set it.
	Controller *bool `json:"controller,omitempty"`
	// BlockOwnerDeletion, when true and the owner is being deleted in the foreground,
	// keeps the owner until this reference is gone. Setting it requires delete
	// permission on the owner.
	BlockOwnerDeletion *bool `json:"blockOwnerDeletion,omitempty"`
}

// IsController reports whether the reference has controller: true.
func (r OwnerReference) IsController() bool { return r.Controller != nil && *r.Controller }

// BlocksOwnerDeletion reports whether the reference has blockOwnerDeletion: true.
func (r OwnerReference) BlocksOwnerDeletion() bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

// Operations a [ManagedFieldsEntry] may record.
const (
	// ManagedFieldsOperationApply records a server-side apply.
	ManagedFieldsOperationApply = "Apply"
	// ManagedFieldsOperationUpdate records a create, update or non-apply patch.
	ManagedFieldsOperationUpdate = "Update"
)

// FieldsTypeV1 is the only fieldsType value: the FieldsV1 trie format.
const FieldsTypeV1 = "FieldsV1"

// ManagedFieldsEntry records which fields one manager set through one operation.
type ManagedFieldsEntry struct {
	// Manager identifies the workflow managing the fields.
	Manager string `json:"manager,omitempty"`
	// Operation is "Apply" or "Update".
	Operation string `json:"operation,omitempty"`
	// APIVersion is the "group/version" the field set applies to.
	APIVersion string `json:"apiVersion,omitempty"`
	// Time is when a field of this entry was last added, changed by this manager, or
	// removed. It is not updated when another manager takes a field over.
	Time *Time `json:"time,omitempty"`
	// FieldsType is the format of FieldsV1; always "FieldsV1".
	FieldsType string `json:"fieldsType,omitempty"`
	// FieldsV1 is the field set in the FieldsV1 trie form, e.g. {"f:spec":{"f:ttl":{}}},
	// kept as raw JSON.
	FieldsV1 json.RawMessage `json:"fieldsV1,omitempty"`
	// Subresource is the subresource used for the write ("status"), or empty for the
	// main resource.
	Subresource string `json:"subresource,omitempty"`
}

// ListMeta is the metadata of a list.
type ListMeta struct {
	// ResourceVersion is the store revision the list was read at; start a watch from it.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Continue is set when more items remain: pass it back to get the next page, which
	// is served from the same snapshot.
	Continue string `json:"continue,omitempty"`
	// RemainingItemCount is the number of items after this page, when known.
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// GetListMeta returns m itself so that every list kind embedding ListMeta satisfies
// [ObjectList].
func (m *ListMeta) GetListMeta() *ListMeta { return m }
