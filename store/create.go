package store

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
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
	var run createRun
	_, err := s.runTxn(ctx, opts.DryRun, func(tx *Tx) error { return tx.create(obj, opts, &run) })
	return err
}

// createRun is what a [Store.Create] carries from one run of its transaction to the
// next.
//
// A create of a given name in a transaction of its own need not read the key first
// to learn that it is free: the commit's compare on ModRevision 0 refuses the write
// when the key exists, exactly as it refuses it when the key was read as absent and
// created since. So the first run assumes the name is free and skips the read (a
// backend read per create). Should the commit fail for any reason, the next run
// reads the key as every create used to, and answers what that read decides
// (AlreadyExists, or the write); it is not counted as a conflict retry, and it
// reuses the uid and creationTimestamp the first run drew, so a store with a
// deterministic uid source hands out the same uids as when the first run had read.
// An error of the first run after the point of the read is answered only after the
// read, as before: AlreadyExists when the key exists. The assumption is made only
// where nothing outside the store can see that the read came later: no admission
// hooks, no owner authorizer, no dry run, no generated name.
type createRun struct {
	assumed bool          // the first run assumed the name free (and did not commit)
	reran   bool          // a run after it took over what it drew
	uid     string        // the uid it drew
	created resource.Time // the creationTimestamp it drew
}

// Create stores a new object in the transaction; see [Store.Create].
func (tx *Tx) Create(obj resource.Object, opts CreateOptions) error {
	return tx.create(obj, opts, nil)
}

// create is Create; run is nil in a transaction of the caller's.
func (tx *Tx) create(obj resource.Object, opts CreateOptions, run *createRun) error {
	s := tx.s
	k, err := s.kindOf(obj)
	if err != nil {
		return err
	}
	sentFields := obj.GetObjectMeta().ManagedFields // nil and [] mean different things
	work, err := objcodec.Copy(k, obj, s.private())
	if err != nil {
		return err
	}
	sentFields = sentManagedFields(sentFields, work, nil)
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

	if errs := resource.ValidateObjectMeta(meta, k.Namespaced, metaPath); len(errs) > 0 {
		return resource.NewInvalid(k, nameForError(meta), errs)
	}
	assume := run != nil && !run.assumed
	if run != nil && run.assumed && !run.reran {
		// The run before assumed the name free and did not commit: this one reads,
		// with what that run drew.
		meta.UID, meta.CreationTimestamp = run.uid, run.created
		run.reran = true
	} else {
		meta.UID = s.newUID()
		meta.CreationTimestamp = resource.NewTime(s.clock.Now())
	}
	if err := s.checkOwnerReferences(tx.ctx, k, nil, meta, opts.User); err != nil {
		return err
	}

	generate := meta.Name == ""
	var key string
	if assume && !generate && !tx.dryRun && s.private() {
		key = objectKey(k, meta.Namespace, meta.Name)
		if _, seen := tx.entry(key); !seen {
			// Assume the name is free; see createRun.
			tx.newEntry(key, txEntry{read: true})
			tx.assumed = true
			run.assumed, run.uid, run.created = true, meta.UID, meta.CreationTimestamp
			err := tx.createFree(obj, work, k, key, sentFields, opts)
			if err != nil {
				// Answer as when the key had been read first.
				tx.forget(key)
				if ferr := tx.nameFree(k, key, meta.Name); ferr != nil {
					return ferr
				}
			}
			return err
		}
	}
	key, err = tx.freeName(k, meta, generate)
	if err != nil {
		return err
	}
	return tx.createFree(obj, work, k, key, sentFields, opts)
}

// freeName settles the name of a create: the given one when it is free (else
// AlreadyExists), or one generated from generateName, up to MaxGenerateNameAttempts
// tries. It returns the object's key.
func (tx *Tx) freeName(k *resource.KindInfo, meta *resource.ObjectMeta, generate bool) (string, error) {
	for attempt := 1; ; attempt++ {
		if generate {
			meta.Name = generatedName(meta.GenerateName, tx.s.suffix)
			if errs := resource.ValidateName(meta.Name, metaPath.Child("name")); len(errs) > 0 {
				return "", resource.NewInvalid(k, meta.Name, errs)
			}
		}
		key := objectKey(k, meta.Namespace, meta.Name)
		if !generate {
			return key, tx.nameFree(k, key, meta.Name)
		}
		e, err := tx.get(key)
		if err != nil {
			return "", err
		}
		if e.value == nil {
			return key, nil
		}
		if attempt >= MaxGenerateNameAttempts {
			return "", resource.NewGenerateNameConflict(k, meta.Name, 1)
		}
	}
}

// nameFree reads key in the transaction: nil when it is absent, else AlreadyExists
// (or the read's error).
func (tx *Tx) nameFree(k *resource.KindInfo, key, name string) error {
	e, err := tx.get(key)
	if err != nil {
		return err
	}
	if e.value == nil {
		return nil
	}
	existing, derr := tx.s.decode(k, key, e.rev, e.value, e.rev)
	if derr == nil && existing.GetObjectMeta().IsTerminating() {
		err := resource.NewAlreadyExists(k, name)
		err.ErrStatus.Message = "object is being deleted: " + err.ErrStatus.Message
		return err
	}
	return resource.NewAlreadyExists(k, name)
}

// createFree is the rest of a create once its name is known to be free (or assumed
// so): the write pipeline for work at key.
func (tx *Tx) createFree(obj, work resource.Object, k *resource.KindInfo, key string,
	sentFields []resource.ManagedFieldsEntry, opts CreateOptions) error {
	return tx.commitWrite(&write{op: OperationCreate, k: k, key: key, obj: obj, work: work, sentFields: sentFields},
		opts.WriteOptions)
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
