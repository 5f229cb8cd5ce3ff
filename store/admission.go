package store

import (
	"context"
	"encoding/json"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// Operation is the kind of write an admission hook is asked about.
type Operation string

// Operations.
const (
	OperationCreate Operation = "CREATE"
	OperationUpdate Operation = "UPDATE"
	OperationDelete Operation = "DELETE"
)

// UserInfo identifies who makes a request. The store does not interpret it beyond
// passing it to admission hooks and the [OwnerAuthorizer]; Extra carries whatever the
// host program needs there (an access key's scope, for instance).
type UserInfo struct {
	// Name of the user or service.
	Name string
	// UID of the user.
	UID string
	// Groups the user belongs to.
	Groups []string
	// Extra is host-defined data about the caller, passed through untouched.
	Extra any
}

// AdmissionRequest describes one write to admission hooks.
type AdmissionRequest struct {
	// Operation is CREATE, UPDATE or DELETE.
	Operation Operation
	// Kind is the kind of the object.
	Kind *resource.KindInfo
	// Subresource is "status" for status writes, "" for the main resource.
	Subresource string
	// Object is the object as it will be written, after the store's own defaulting
	// (nil for DELETE). Mutating hooks may change it.
	Object resource.Object
	// OldObject is the stored object (nil for CREATE).
	OldObject resource.Object
	// User is the caller, if the request named one.
	User *UserInfo
	// DryRun is true when nothing will be stored.
	DryRun bool
	// Tx is the transaction the write runs in. A hook that reads other objects
	// through it (Tx.Get) makes the write depend on them: when one of them changes
	// before the write commits, the write runs again, hooks included, so a rule that
	// spans objects holds under concurrent writers. A hook may also write through it
	// (Tx.Create, Tx.Update, Tx.Delete); those writes commit with the request's, or
	// not at all. The Tx must not be kept after the hook returns.
	Tx *Tx

	// oldJSON is the stored encoding of OldObject (no resourceVersion), when the
	// store has it.
	oldJSON []byte
}

// OldObjectJSON returns the JSON of r.OldObject as the store holds it: the stored
// bytes themselves when the store handed them over, which have no
// metadata.resourceVersion (the store keeps it beside them), else json.Marshal's
// encoding of r.OldObject. It is nil for a create. The bytes are shared: a hook
// must not change them.
func (r *AdmissionRequest) OldObjectJSON() ([]byte, error) {
	if r.OldObject == nil {
		return nil, nil
	}
	if r.oldJSON != nil {
		return r.oldJSON, nil
	}
	if b, ok := objcodec.Encode(r.OldObject); ok {
		return b, nil
	}
	return json.Marshal(r.OldObject)
}

// OnCommit arranges for fn to be called once the write's transaction has committed
// and written something, with the resourceVersion it committed at: the object's new
// resourceVersion when the write stored it (a write that changes nothing keeps the
// one it had; when it is the only write of its transaction, fn is not called). fn is
// not called for a dry run, nor when the write or its transaction fails. It must be
// quick and must not call the store.
func (r *AdmissionRequest) OnCommit(fn func(resourceVersion string)) {
	if r.Tx == nil {
		return
	}
	tx := r.Tx
	tx.onCommit(func(rev int64) error {
		if rev != 0 && !tx.dryRun {
			fn(tx.formatRV(rev))
		}
		return nil
	})
}

// ObjectJSON returns json.Marshal's encoding of r.Object, written by the store's
// compiled encoder where it covers the object's type (the same bytes, several times
// faster), for a hook that validates the object as JSON.
func (r *AdmissionRequest) ObjectJSON() ([]byte, error) {
	if r.Object == nil {
		return []byte("null"), nil
	}
	if b, ok := objcodec.Encode(r.Object); ok {
		return b, nil
	}
	return json.Marshal(r.Object)
}

// MutatingAdmitter may change the object of a write before it is validated. Mutating
// hooks run in the order they were registered, before every validating hook. An error
// refuses the write; return a *resource.StatusError to choose its code.
type MutatingAdmitter interface {
	Admit(ctx context.Context, req *AdmissionRequest) error
}

// ValidatingAdmitter may refuse a write but not change it. Validating hooks run after
// the store's own validation and every mutating hook.
type ValidatingAdmitter interface {
	Validate(ctx context.Context, req *AdmissionRequest) error
}

// MutatingAdmitterFunc adapts a function to [MutatingAdmitter].
type MutatingAdmitterFunc func(ctx context.Context, req *AdmissionRequest) error

// Admit calls f.
func (f MutatingAdmitterFunc) Admit(ctx context.Context, req *AdmissionRequest) error {
	return f(ctx, req)
}

// ValidatingAdmitterFunc adapts a function to [ValidatingAdmitter].
type ValidatingAdmitterFunc func(ctx context.Context, req *AdmissionRequest) error

// Validate calls f.
func (f ValidatingAdmitterFunc) Validate(ctx context.Context, req *AdmissionRequest) error {
	return f(ctx, req)
}

// OwnerAuthorizer decides whether user may delete the owner an ownerReference with
// blockOwnerDeletion: true points at. The store refuses the write with 422 when it
// answers false. The host plugs its policy engine in here.
type OwnerAuthorizer interface {
	CanDeleteOwner(ctx context.Context, user *UserInfo, owner resource.OwnerReference, namespace string) (bool, error)
}

// private reports whether no code of the user's (admission hooks, the owner
// authorizer) sees the objects of a write, so that a write may share the caller's
// maps and lists until it commits (it changes nothing through them).
func (s *Store) private() bool {
	return len(s.opts.Mutating) == 0 && len(s.opts.Validating) == 0 && s.opts.OwnerAuthorizer == nil
}
