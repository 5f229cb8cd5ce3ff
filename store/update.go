package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// Update replaces a stored object with obj and fills obj with the result. The
// object's metadata.resourceVersion is a precondition: empty gives 422, a stale one
// 409 Conflict. A non-empty uid must match (409). name, namespace, uid,
// creationTimestamp and generation cannot be changed (the stored values are kept;
// setting a deletionTimestamp or changing deletionGracePeriodSeconds is 422). For a
// kind with a status subresource the stored status is kept. generation goes up by one
// when anything outside metadata and status changes. An update that changes nothing
// writes nothing: the resourceVersion stays and no watch event fires. An update that
// leaves a terminating object with no finalizers removes it.
func (s *Store) Update(ctx context.Context, obj resource.Object, opts UpdateOptions) error {
	_, err := s.runTxn(ctx, opts.DryRun, func(tx *Tx) error { return tx.Update(obj, opts) })
	return err
}

// UpdateStatus changes only the status of a stored object (everything else is kept
// from the stored object) and fills obj with the result. It is 404 for kinds without
// a status subresource. The resourceVersion precondition is as for [Store.Update].
func (s *Store) UpdateStatus(ctx context.Context, obj resource.Object, opts UpdateOptions) error {
	_, err := s.runTxn(ctx, opts.DryRun, func(tx *Tx) error { return tx.UpdateStatus(obj, opts) })
	return err
}

// GuaranteedUpdate reads namespace/name into out, calls fn to change it, and writes it
// back with the resourceVersion it read as precondition; when a concurrent write got
// in between, it reads again and calls fn again (up to Options.MaxUpdateRetries
// times). An error from fn aborts and is returned as is.
func (s *Store) GuaranteedUpdate(ctx context.Context, namespace, name string, out resource.Object,
	fn func(obj resource.Object) error, opts UpdateOptions) error {
	_, err := s.runTxn(ctx, opts.DryRun, func(tx *Tx) error {
		if err := tx.Get(namespace, name, out); err != nil {
			return err
		}
		if err := fn(out); err != nil {
			return err
		}
		return tx.Update(out, opts)
	})
	return err
}

// Update replaces an object in the transaction; see [Store.Update].
func (tx *Tx) Update(obj resource.Object, opts UpdateOptions) error {
	return tx.update(obj, opts, false)
}

// UpdateStatus changes an object's status in the transaction; see [Store.UpdateStatus].
func (tx *Tx) UpdateStatus(obj resource.Object, opts UpdateOptions) error {
	return tx.update(obj, opts, true)
}

// update runs an update or status update through the pipeline: read the stored
// object and check the preconditions, apply the metadata rules, then commitWrite.
func (tx *Tx) update(obj resource.Object, opts UpdateOptions, status bool) error {
	var w write
	if err := tx.readForUpdate(&w, obj, status); err != nil {
		return err
	}
	if status {
		// Only status changes through the status path: everything else is the stored
		// object's. A copy, so that OldObject stays the stored object.
		fresh := objcodec.DeepCopy(w.old)
		copyStatus(fresh, w.work)
		w.work = fresh
	} else if err := tx.updateMetadata(&w, opts); err != nil {
		return err
	}
	w.work.GetObjectMeta().ResourceVersion = ""
	removed := len(tx.removed)
	if err := tx.commitWrite(&w, opts.WriteOptions); err != nil {
		return err
	}
	if len(tx.removed) > removed && w.oldRev != 0 {
		// The update removed the object (it left it terminating without finalizers):
		// the answer is the object as updated, with the resourceVersion of the stored
		// object it replaced, as kube-apiserver answers (it returns the object of the
		// request; a watch from that version sees the deletion).
		obj, rv := w.obj, tx.formatRV(w.oldRev)
		tx.onCommit(func(int64) error { obj.GetObjectMeta().ResourceVersion = rv; return nil })
	} else if tx.dryRun && w.oldRev != 0 {
		// A dry-run update answers with the resourceVersion of the stored object it
		// would replace, as kube-apiserver does (a dry-run create has none).
		obj, rv := w.obj, tx.formatRV(w.oldRev)
		tx.onCommit(func(int64) error { obj.GetObjectMeta().ResourceVersion = rv; return nil })
	}
	return nil
}

// readForUpdate prepares w, the write of an update: the caller's object copied, its
// key, and the stored object read in the transaction, with the resourceVersion and
// uid preconditions checked against it.
func (tx *Tx) readForUpdate(w *write, obj resource.Object, status bool) error {
	s := tx.s
	k, err := s.kindOf(obj)
	if err != nil {
		return err
	}
	if status && !k.HasStatus {
		return resource.NewNotFound(k, obj.GetObjectMeta().Name+"/status")
	}
	*w = write{op: OperationUpdate, k: k, obj: obj, sentFields: obj.GetObjectMeta().ManagedFields}
	if status {
		w.sub = "status"
	}
	if w.work, err = objcodec.Copy(k, obj, s.private()); err != nil {
		return err
	}
	meta := w.work.GetObjectMeta()
	meta.Namespace = normalizeNamespace(k, meta.Namespace)
	if err := checkKeyNames(k, meta.Namespace, meta.Name); err != nil {
		return err
	}
	wantRV, err := parseRV(meta.ResourceVersion)
	if err != nil {
		return err
	}
	w.key = objectKey(k, meta.Namespace, meta.Name)
	e, err := tx.get(w.key)
	if err != nil {
		return err
	}
	if e.value == nil {
		// A missing object is 404 (or 409 when it was moved), with or without a
		// resourceVersion, as kube-apiserver answers.
		if err := tx.movedConflict(k, w.key, meta.Name, meta.UID, wantRV); err != nil {
			return err
		}
		return resource.NewNotFound(k, meta.Name)
	}
	w.oldValue, w.oldRev = e.value, e.rev
	if len(s.opts.Mutating) == 0 && len(s.opts.Validating) == 0 {
		// No hook gets OldObject: the update only reads the stored object, so it
		// reads the shared one (nothing of it may end up in work).
		w.old, _, err = s.stored(k, w.key, e.rev, e.value, e.rev, reflect.TypeOf(obj))
	} else {
		w.old, err = s.decode(k, w.key, e.rev, e.value, e.rev)
	}
	if err != nil {
		return err
	}
	// The order is kube-apiserver's: the uid and a given resourceVersion are
	// preconditions of the storage write (409), checked before the rule that an
	// update names a resourceVersion (422).
	oldMeta := w.old.GetObjectMeta()
	w.sentFields = sentManagedFields(w.sentFields, w.work, oldMeta.ManagedFields)
	if meta.UID != "" && meta.UID != oldMeta.UID {
		return resource.NewConflict(k, meta.Name, fmt.Sprintf(
			"Precondition failed: UID in precondition: %s, UID in object meta: %s", meta.UID, oldMeta.UID))
	}
	if meta.ResourceVersion == "" {
		// kube-apiserver's details name the resource here, in the kind's place.
		asKind := &resource.KindInfo{Group: k.Group, Version: k.Version, Kind: k.Resource, Resource: k.Resource}
		return resource.NewInvalid(asKind, meta.Name, resource.ErrorList{
			resource.Invalid(metaPath.Child("resourceVersion"), "", "must be specified for an update")})
	}
	if e.rev != 0 && wantRV != e.rev {
		return resource.NewConflict(k, meta.Name, resource.OptimisticLockMessage)
	}
	return nil
}

// updateMetadata applies the metadata rules of an update of the main resource: the
// stored status is kept, system fields come from the stored object, deletion fields
// are immutable, a terminating object takes no new finalizers, and the metadata and
// owner references are validated.
func (tx *Tx) updateMetadata(w *write, opts UpdateOptions) error {
	k, meta, oldMeta := w.k, w.work.GetObjectMeta(), w.old.GetObjectMeta()
	if k.HasStatus {
		copyStatusDeep(w.work, w.old) // the stored status is kept
	}
	meta.UID = oldMeta.UID
	meta.CreationTimestamp = oldMeta.CreationTimestamp
	meta.Generation = oldMeta.Generation
	errs := keepDeletionFields(meta, oldMeta)
	if oldMeta.IsTerminating() {
		var added []string
		for _, f := range meta.Finalizers {
			if !slices.Contains(oldMeta.Finalizers, f) {
				added = append(added, f)
			}
		}
		if len(added) > 0 {
			errs = append(errs, resource.Forbidden(metaPath.Child("finalizers"), fmt.Sprintf(
				"no new finalizers can be added if the object is being deleted, found new finalizers %q", added)))
		}
	}
	if len(errs) > 0 {
		return resource.NewInvalid(k, meta.Name, errs)
	}
	if errs := resource.ValidateObjectMeta(meta, k.Namespaced, metaPath); len(errs) > 0 {
		return resource.NewInvalid(k, meta.Name, errs)
	}
	return tx.s.checkOwnerReferences(tx.ctx, k, oldMeta, meta, opts.User)
}

// keepDeletionFields carries deletionTimestamp and deletionGracePeriodSeconds over
// from the stored metadata: a client may leave them out, not change them.
func keepDeletionFields(meta, oldMeta *resource.ObjectMeta) resource.ErrorList {
	var errs resource.ErrorList
	switch {
	case oldMeta.DeletionTimestamp != nil:
		t := *oldMeta.DeletionTimestamp
		meta.DeletionTimestamp = &t
	case meta.DeletionTimestamp != nil:
		errs = append(errs, resource.Invalid(metaPath.Child("deletionTimestamp"), meta.DeletionTimestamp.Format("2006-01-02T15:04:05Z"), "field is immutable"))
	}
	switch {
	case meta.DeletionGracePeriodSeconds == nil && oldMeta.DeletionGracePeriodSeconds != nil:
		g := *oldMeta.DeletionGracePeriodSeconds
		meta.DeletionGracePeriodSeconds = &g
	case meta.DeletionGracePeriodSeconds == nil:
	case oldMeta.DeletionGracePeriodSeconds == nil || *meta.DeletionGracePeriodSeconds != *oldMeta.DeletionGracePeriodSeconds:
		errs = append(errs, resource.Invalid(metaPath.Child("deletionGracePeriodSeconds"), *meta.DeletionGracePeriodSeconds, "field is immutable"))
	}
	return errs
}
