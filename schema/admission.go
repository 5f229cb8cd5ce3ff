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
	// known is what the admitter let through (see unchanged.go).
	known knownValid
	// wholeAlways turns off the validation of only what an update changed (tests).
	wholeAlways bool
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
//
// An update of an object this admitter let through at its stored version, under the
// same compiled schema, validates only what the update changed where the schema
// allows it; the answer is always that of a full validation (unchanged.go tells
// how, and why this is not Kubernetes' validation ratcheting).
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
	newDoc, err := req.ObjectJSON()
	if err != nil {
		return v.validateEncoded(func() ([]byte, error) { return nil, err }, info)
	}
	key := knownKey(gvk, req.Object)
	if !a.wholeAlways && req.Operation == store.OperationUpdate && req.OldObject != nil &&
		a.known.passed(key, req.OldObject.GetObjectMeta().ResourceVersion, v) {
		// An update of a version this admitter passed: validate what changed; when the
		// walk does not show the object valid, the full validation answers.
		if oldDoc, err := req.OldObjectJSON(); err == nil && v.validUnchanged(newDoc, oldDoc) {
			a.remember(req, key, v)
			return nil
		}
	}
	if err := v.validate(newDoc, info); err != nil {
		return err
	}
	a.remember(req, key, v)
	return nil
}

// remember records, once the write commits, that the version it stores passed v.
func (a *Admitter) remember(req *store.AdmissionRequest, key string, v *Validator) {
	if req.DryRun || req.Tx == nil {
		return
	}
	req.OnCommit(func(rv string) { a.known.put(key, rv, v) })
}

// knownKey names an object for knownValid.
func knownKey(gvk resource.GroupVersionKind, obj resource.Object) string {
	m := obj.GetObjectMeta()
	return gvk.Group + "/" + gvk.Kind + "/" + m.Namespace + "/" + m.Name
}
