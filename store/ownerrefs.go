package store

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
)

// checkOwnerReferences asks the OwnerAuthorizer about every reference that a write
// sets blockOwnerDeletion on, or turns it on for: a caller who may not delete that
// owner gets 422 (the spec's rule; Kubernetes answers 403 here).
func (s *Store) checkOwnerReferences(ctx context.Context, k *resource.KindInfo, old, cur *resource.ObjectMeta, user *UserInfo) error {
	if s.opts.OwnerAuthorizer == nil {
		return nil
	}
	var errs resource.ErrorList
	for i, ref := range cur.OwnerReferences {
		if !ref.BlocksOwnerDeletion() {
			continue
		}
		if old != nil {
			already := false
			for _, o := range old.OwnerReferences {
				if o.UID == ref.UID && o.BlocksOwnerDeletion() {
					already = true
				}
			}
			if already {
				continue
			}
		}
		ok, err := s.opts.OwnerAuthorizer.CanDeleteOwner(ctx, user, ref, cur.Namespace)
		if err != nil {
			return err
		}
		if !ok {
			errs = append(errs, resource.Invalid(resource.NewPath("metadata", "ownerReferences").Index(i).Child("blockOwnerDeletion"),
				true, fmt.Sprintf("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete: %s %q", ref.Kind, ref.Name)))
		}
	}
	if len(errs) > 0 {
		return resource.NewInvalid(k, cur.Name, errs)
	}
	return nil
}
