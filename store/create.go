package store

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
)

// Create stores a new object and fills obj with the result: uid, creationTimestamp,
// resourceVersion and generation 1 set by the store, name generated from generateName
// when no name is given, namespace defaulted to "default" for namespaced kinds and
// cleared for cluster-scoped ones, status dropped for kinds with a status subresource.
//
// Errors: 400 when resourceVersion is set; 422 for invalid metadata; 409
// AlreadyExists when the name is taken (also when every generated name collided);
// 413 when the encoded object is larger than the limit; an admission hook's error.
func (s *Store) Create(ctx context.Context, obj resource.Object, opts CreateOptions) error {
	_, err := s.runTxn(ctx, opts.DryRun, func(tx *Tx) error { return tx.Create(obj, opts) })
	return err
}

// Create stores a new object in the transaction; see [Store.Create].
func (tx *Tx) Create(obj resource.Object, opts CreateOptions) error {
	s := tx.s
	k, err := s.kindOf(obj)
	if err != nil {
		return err
	}
	sentFields := obj.GetObjectMeta().ManagedFields // nil and [] mean different things
	work, err := copyObject(k, obj, s.private())
	if err != nil {
		return err
	}
	meta := work.GetObjectMeta()
	if meta.ResourceVersion != "" {
		return resource.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	// System fields a client may not set are wiped, as kube-apiserver does.
	meta.UID = ""
	meta.CreationTimestamp = resource.Time{}
	meta.DeletionTimestamp = nil
	meta.DeletionGracePeriodSeconds = nil
	meta.Generation = 1
	meta.Namespace = normalizeNamespace(k, meta.Namespace)
	if k.HasStatus {
		copyStatus(work, nil) // status is written only through the status path
	}

	metaPath := resource.NewPath("metadata")
	if errs := resource.ValidateObjectMeta(meta, k.Namespaced, metaPath); len(errs) > 0 {
		return resource.NewInvalid(k, nameForError(meta), errs)
	}
	meta.UID = s.newUID()
	meta.CreationTimestamp = resource.NewTime(s.clock.Now())
	if err := s.checkOwnerReferences(tx.ctx, k, nil, meta, opts.User); err != nil {
		return err
	}

	generate := meta.Name == ""
	for attempt := 1; ; attempt++ {
		if generate {
			meta.Name = generatedName(meta.GenerateName, s.suffix)
			if errs := resource.ValidateName(meta.Name, metaPath.Child("name")); len(errs) > 0 {
				return resource.NewInvalid(k, meta.Name, errs)
			}
		}
		key := objectKey(k, meta.Namespace, meta.Name)
		e, err := tx.get(key)
		if err != nil {
			return err
		}
		if e.value == nil {
			break
		}
		if generate && attempt < MaxGenerateNameAttempts {
			continue
		}
		if generate {
			return resource.NewGenerateNameConflict(k, meta.Name, 1)
		}
		existing, derr := s.decode(k, key, e.rev, e.value, e.rev)
		if derr == nil && existing.GetObjectMeta().IsTerminating() {
			err := resource.NewAlreadyExists(k, meta.Name)
			err.ErrStatus.Message = "object is being deleted: " + err.ErrStatus.Message
			return err
		}
		return resource.NewAlreadyExists(k, meta.Name)
	}

	req := &AdmissionRequest{Operation: OperationCreate, Kind: k, Object: work, User: opts.User, DryRun: tx.dryRun}
	if err := s.admit(tx.ctx, req, metaPath); err != nil {
		return err
	}
	if len(s.opts.Mutating) > 0 {
		work = normalized(k, work) // as stored: the caller gets back what is stored
		meta = work.GetObjectMeta()
	}
	first, err := s.encodeFirst(k, work)
	if err != nil {
		return err
	}
	data := first.data
	if meta.ManagedFields, err = s.trackFields(k, meta.Name, nil, sentFields, nil, data, opts.FieldManager, ""); err != nil {
		return err
	}
	if data, err = s.finish(k, work, first); err != nil {
		return err
	}
	key := objectKey(k, meta.Namespace, meta.Name)
	tx.putObject(k, key, data, work)
	tx.onCommit(func(rev int64) error { return tx.giveResult(obj, work, rev) })
	return nil
}

// admit runs the mutating hooks, the store's metadata validation of what they
// produced, and the validating hooks.
func (s *Store) admit(ctx context.Context, req *AdmissionRequest, metaPath resource.Path) error {
	meta := req.Object.GetObjectMeta()
	name, ns := meta.Name, meta.Namespace
	for _, m := range s.opts.Mutating {
		if err := m.Admit(ctx, req); err != nil {
			return err
		}
	}
	meta = req.Object.GetObjectMeta()
	if meta.Name != name || meta.Namespace != ns {
		return resource.NewInternalError(fmt.Errorf("store: a mutating admission hook changed the object's name or namespace"))
	}
	if len(s.opts.Mutating) > 0 {
		if errs := resource.ValidateObjectMeta(meta, req.Kind.Namespaced, metaPath); len(errs) > 0 {
			return resource.NewInvalid(req.Kind, meta.Name, errs)
		}
	}
	for _, v := range s.opts.Validating {
		if err := v.Validate(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

func nameForError(m *resource.ObjectMeta) string {
	if m.Name != "" {
		return m.Name
	}
	return m.GenerateName
}

// generatedName cuts prefix to 58 characters and appends 5 random ones.
func generatedName(prefix string, suffix func(int) string) string {
	if len(prefix) > 58 {
		prefix = prefix[:58]
	}
	return prefix + suffix(5)
}
