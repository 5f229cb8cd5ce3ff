package schema

import (
	"context"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Admitter is the store's validating admission hook: it validates the object of every
// create, update and status update (dry runs included, since the store runs its hooks
// for them too) against the schema of its kind, and lets through deletes and kinds
// without a schema. Register it with the store as a [store.ValidatingAdmitter].
type Admitter struct {
	registry *Registry
}

var _ store.ValidatingAdmitter = (*Admitter)(nil)

// NewAdmitter returns the admission hook of a registry; a nil registry means
// [NewRegistry]. Schemas registered later are used as soon as Register returns.
func NewAdmitter(r *Registry) *Admitter {
	if r == nil {
		r = NewRegistry()
	}
	return &Admitter{registry: r}
}

// Validate refuses the write with an Invalid (422) *resource.StatusError if req.Object
// does not conform to the schema of its kind. The kind is req.Kind, or the object's
// own apiVersion and kind when req.Kind is nil.
func (a *Admitter) Validate(ctx context.Context, req *store.AdmissionRequest) error {
	if req == nil || req.Object == nil || req.Operation == store.OperationDelete {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var gvk resource.GroupVersionKind
	info := req.Kind
	if info != nil {
		gvk = info.GVK()
	} else if tm := req.Object.GetTypeMeta(); tm != nil {
		gvk.Group, gvk.Version = resource.SplitAPIVersion(tm.APIVersion)
		gvk.Kind = tm.Kind
	}
	v, ok := a.registry.Validator(gvk)
	if !ok {
		return nil
	}
	if info == nil {
		info = v.info
	}
	return v.validateEncoded(req.ObjectJSON, info)
}
