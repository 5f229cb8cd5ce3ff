package store

import (
	"errors"
	"fmt"
	"unicode"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/managedfields"
)

// trackFields returns the managedFields of a write: starting from the stored entries
// (live) or those the client sent, it records what the write changed under the
// caller's field manager (package internal/managedfields has the rules). apiVersion
// is the object's: when it is k's, it is used rather than built again.
func (s *Store) trackFields(k *resource.KindInfo, apiVersion, name string, live, sent []resource.ManagedFieldsEntry,
	oldData, newData []byte, manager, subresource string) ([]resource.ManagedFieldsEntry, error) {
	if len(manager) > 128 {
		return nil, resource.NewInvalid(k, name, resource.ErrorList{resource.TooLong(resource.NewPath("fieldManager"), manager, 128)})
	}
	for _, r := range manager {
		if !unicode.IsPrint(r) {
			return nil, resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(resource.NewPath("fieldManager"), manager, "must only contain printable characters")})
		}
	}
	base, err := managedfields.Resolve(live, sent, subresource)
	if err == nil {
		var out []resource.ManagedFieldsEntry
		out, err = managedfields.Update(base, oldData, newData, managedfields.Write{
			Manager: manager, APIVersion: apiVersionOf(k, apiVersion), Subresource: subresource,
			Now: s.clock.Now(), StatusSubresource: k.HasStatus,
		})
		if err == nil {
			return out, nil
		}
	}
	var ee *managedfields.EntryError
	if errors.As(err, &ee) {
		return nil, resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(resource.NewPath(ee.Field), ee.Manager, ee.Err.Error())})
	}
	return nil, resource.NewInternalError(fmt.Errorf("store: managedFields: %w", err))
}
