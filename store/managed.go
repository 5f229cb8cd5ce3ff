package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/managedfields"
)

// managedFieldsPath is where managedFields are, for validation.
var managedFieldsPath = metaPath.Child("managedFields")

// sentManagedFields returns the managedFields a create or update takes from what
// the client sent (sent, also in work), as a kube-apiserver serving a custom
// resource does; live are the stored entries (nil on create):
//   - [] is ignored (the stored entries are kept): kube-apiserver's metadata
//     round trip drops an empty list before its field manager sees it;
//   - [{}] resets them (see managedfields.IsReset): the object has none after the
//     write, which is not tracked either (trackFields);
//   - a list with an entry that is not valid (an operation other than Apply or
//     Update, a fieldsType other than FieldsV1, fieldsV1 that does not parse) is
//     ignored, and the stored entries are kept;
//   - the stored entries sent back unchanged, what a client that read the object
//     does, are taken without checking them again.
//
// A reset or ignored list is removed from work, so validation does not see it.
func sentManagedFields(sent []resource.ManagedFieldsEntry, work resource.Object, live []resource.ManagedFieldsEntry) []resource.ManagedFieldsEntry {
	switch {
	case len(sent) == 0:
		return nil
	case sameEntries(sent, live):
		return sent
	case managedfields.IsReset(sent):
		work.GetObjectMeta().ManagedFields = nil
		return sent
	}
	if len(resource.ValidateManagedFields(sent, managedFieldsPath)) > 0 {
		work.GetObjectMeta().ManagedFields = nil
		return nil
	}
	if _, err := managedfields.Resolve(nil, sent, ""); err != nil {
		work.GetObjectMeta().ManagedFields = nil
		return nil
	}
	return sent
}

// sameEntries reports whether a and b hold the same entries.
func sameEntries(a, b []resource.ManagedFieldsEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Manager != y.Manager || x.Operation != y.Operation || x.APIVersion != y.APIVersion ||
			x.FieldsType != y.FieldsType || x.Subresource != y.Subresource || !bytes.Equal(x.FieldsV1, y.FieldsV1) ||
			(x.Time == nil) != (y.Time == nil) || (x.Time != nil && !x.Time.Time.Equal(y.Time.Time)) {
			return false
		}
	}
	return true
}

// checkFieldManager refuses a field manager longer than 128 characters or with a
// character that is not printable.
func checkFieldManager(k *resource.KindInfo, name, manager string) error {
	if len(manager) > 128 {
		return resource.NewInvalid(k, name, resource.ErrorList{resource.TooLong(resource.NewPath("fieldManager"), manager, 128)})
	}
	for _, r := range manager {
		if !unicode.IsPrint(r) {
			return resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(resource.NewPath("fieldManager"), manager, "must only contain printable characters")})
		}
	}
	return nil
}

// trackFields returns the managedFields of the write w, whose new encoding is
// newData: starting from the stored entries (live) or those the client sent, it
// records what the write changed under the caller's field manager. An apply brings
// its entries, computed when it merged (apply.go).
//
// Objects with a set or map list (metadata.finalizers, metadata.ownerReferences,
// and the lists the kind's FieldType declares so) are tracked with
// structured-merge-diff, which knows their merge rules; all others by package
// internal/managedfields, which is much faster and gives the same result when every
// list is atomic.
func (s *Store) trackFields(w *write, live []resource.ManagedFieldsEntry, newData []byte, opts WriteOptions) ([]resource.ManagedFieldsEntry, error) {
	if opts.apply != nil {
		if w.old != nil && onlyTimesDiffer(opts.apply.entries, live) && sameIgnoringManagedFields(w.oldValue, newData) {
			// As kube-apiserver's IgnoreManagedFieldsTimestampsTransformer: an apply
			// that changes nothing but times is no write.
			return live, nil
		}
		return opts.apply.entries, nil
	}
	k, name := w.k, w.work.GetObjectMeta().Name
	if err := checkFieldManager(k, name, opts.FieldManager); err != nil {
		return nil, err
	}
	apiVersion := apiVersionOf(k, w.work.GetTypeMeta().APIVersion)
	base, err := managedfields.Resolve(live, w.sentFields, w.sub)
	if err != nil {
		return nil, fieldsError(k, name, err)
	}
	if w.old != nil && len(base) == 0 {
		// As kube-apiserver's skipNonAppliedManager: an object without managedFields
		// (reset with [{}]) is not tracked again by updates, only from its next
		// apply on (see before-first-apply).
		return nil, nil
	}
	now := s.clock.Now()
	kt, err := s.types.get(k, s.opts.FieldTypes)
	if err == nil && (hasGranularLists(kt, w.oldValue) || hasGranularLists(kt, newData)) {
		manager := opts.FieldManager
		if manager == "" {
			manager = managedfields.UnknownManager
		}
		out, err := typedUpdate(kt, k, base, w.oldValue, newData, managerKey{manager: manager,
			operation: resource.ManagedFieldsOperationUpdate, apiVersion: apiVersion, subresource: w.sub}, now)
		var ee *managedfields.EntryError
		if err == nil || errors.As(err, &ee) {
			return out, fieldsError(k, name, err)
		}
		// The object does not fit the kind's FieldType (a schema that disagrees
		// with the Go type): track it as before, every list atomic.
		s.log.Warn("store: managedFields: the object does not fit its field type; lists are tracked as atomic",
			"kind", k.Kind, "name", name, "error", err)
	}
	out, err := managedfields.Update(base, w.oldValue, newData, managedfields.Write{
		Manager: opts.FieldManager, APIVersion: apiVersion, Subresource: w.sub,
		Now: now, StatusSubresource: k.HasStatus,
	})
	return out, fieldsError(k, name, err)
}

// fieldsError maps an error of the managedFields computation: an entry that cannot
// be used is 422, anything else 500; nil stays nil.
func fieldsError(k *resource.KindInfo, name string, err error) error {
	if err == nil {
		return nil
	}
	var ee *managedfields.EntryError
	if errors.As(err, &ee) {
		return resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(resource.NewPath(ee.Field), ee.Manager, ee.Err.Error())})
	}
	return resource.NewInternalError(fmt.Errorf("store: managedFields: %w", err))
}

// onlyTimesDiffer reports whether a and b are the same entries but for their times.
func onlyTimesDiffer(a, b []resource.ManagedFieldsEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Time, y.Time = nil, nil
		if !sameEntries([]resource.ManagedFieldsEntry{x}, []resource.ManagedFieldsEntry{y}) {
			return false
		}
	}
	return true
}

// sameIgnoringManagedFields reports whether two encoded objects are equal as JSON
// once metadata.managedFields and metadata.resourceVersion are left out.
func sameIgnoringManagedFields(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	for _, o := range []map[string]any{x, y} {
		if m, ok := o["metadata"].(map[string]any); ok {
			delete(m, "managedFields")
			delete(m, "resourceVersion")
		}
	}
	return reflect.DeepEqual(x, y)
}
