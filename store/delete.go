package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/management-service/mgmt/resource"
)

// Delete deletes the object that obj names (its kind, namespace and name) and fills
// obj with the object's state after the call. removed is true when the object is gone;
// false when deletion only started: an object with finalizers, or deleted with a grace
// period, gets deletionTimestamp (now + grace) and deletionGracePeriodSeconds, and
// generation goes up by one; it is removed when its last finalizer goes and the grace
// period has passed (by the write that removes the finalizer, or by the store's
// reaper). Deleting an object that is already terminating can only move its
// deletionTimestamp earlier.
//
// PropagationPolicy Orphan adds the "orphan" finalizer (dependents lose their
// reference to the object, then it goes); Foreground adds "foregroundDeletion" (the
// object stays until every dependent that blocks owner deletion is gone); Background,
// the default, removes the object now and its dependents after it.
//
// Errors: 404 when it does not exist; 409 when a precondition fails; 422 for an
// unknown propagation policy.
func (s *Store) Delete(ctx context.Context, obj resource.Object, opts DeleteOptions) (removed bool, err error) {
	_, err = s.runTxn(ctx, opts.DryRun, func(tx *Tx) error {
		var err error
		removed, err = tx.Delete(obj, opts)
		return err
	})
	return removed, err
}

// Delete deletes an object in the transaction; see [Store.Delete]. Its steps: read
// the object and check the preconditions, the validating hooks, then remove it or mark
// it for deletion.
func (tx *Tx) Delete(obj resource.Object, opts DeleteOptions) (removed bool, err error) {
	d, err := tx.readForDelete(obj, opts)
	if err != nil {
		return false, err
	}
	req := &AdmissionRequest{Operation: OperationDelete, Kind: d.k, OldObject: d.cur, User: opts.User, DryRun: tx.dryRun, Tx: tx}
	for _, v := range tx.s.opts.Validating {
		if err := v.Validate(tx.ctx, req); err != nil {
			return false, err
		}
	}
	if opts.SkipFinalizers {
		if opts.MovedTo != nil {
			if err := tx.recordMove(d.k, d.key, d.cur.GetObjectMeta().UID, d.e.rev, opts.MovedTo); err != nil {
				return false, err
			}
		}
		return tx.remove(d.k, d.key, d.e, d.cur, obj)
	}
	return tx.markDeleted(d, obj, opts)
}

// deletion is an object on its way through Delete.
type deletion struct {
	k   *resource.KindInfo
	key string
	e   *txEntry
	cur resource.Object // the stored object, decoded
}

// readForDelete checks a delete's options and names, reads the object in the
// transaction and checks the preconditions against it.
func (tx *Tx) readForDelete(obj resource.Object, opts DeleteOptions) (*deletion, error) {
	s := tx.s
	k, err := s.kindOf(obj)
	if err != nil {
		return nil, err
	}
	in := obj.GetObjectMeta()
	namespace, name := normalizeNamespace(k, in.Namespace), in.Name
	if err := checkKeyNames(k, namespace, name); err != nil {
		return nil, err
	}
	switch opts.PropagationPolicy {
	case "", DeletePropagationBackground, DeletePropagationForeground, DeletePropagationOrphan:
	default:
		return nil, resource.NewInvalid(k, name, resource.ErrorList{resource.NotSupported(
			resource.NewPath("propagationPolicy"), opts.PropagationPolicy,
			[]string{DeletePropagationForeground, DeletePropagationBackground, DeletePropagationOrphan})})
	}
	if err := checkMove(k, namespace, name, opts); err != nil {
		return nil, err
	}
	d := &deletion{k: k, key: objectKey(k, namespace, name)}
	if d.e, err = tx.get(d.key); err != nil {
		return nil, err
	}
	if d.e.value == nil {
		return nil, resource.NewNotFound(k, name)
	}
	if d.cur, err = s.decode(k, d.key, d.e.rev, d.e.value, d.e.rev); err != nil {
		return nil, err
	}
	meta := d.cur.GetObjectMeta()
	if p := opts.Preconditions.UID; p != nil && *p != meta.UID {
		return nil, resource.NewConflict(k, name, fmt.Sprintf(
			"Precondition failed: UID in precondition: %s, UID in object meta: %s; the object might have been deleted and then recreated",
			*p, meta.UID))
	}
	if p := opts.Preconditions.ResourceVersion; p != nil && *p != meta.ResourceVersion {
		return nil, resource.NewConflict(k, name, fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
			*p, meta.ResourceVersion))
	}
	return d, nil
}

// markDeleted applies the deletion rules: the propagation policy's finalizer, the
// deletion timestamp and grace period (which only ever move earlier), and the
// removal itself once no finalizer and no grace period hold the object.
func (tx *Tx) markDeleted(d *deletion, obj resource.Object, opts DeleteOptions) (bool, error) {
	s, k, key, cur := tx.s, d.k, d.key, d.cur
	meta := cur.GetObjectMeta()
	var grace int64
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
		if grace < 0 {
			grace = 1
		}
	}
	now := resource.NewTime(s.clock.Now())
	deadline := resource.NewTime(now.Add(time.Duration(grace) * time.Second))

	if meta.IsTerminating() {
		// A shorter grace period moves the deadline earlier, never later. Without a
		// pending grace period (held by finalizers alone), the propagation policy
		// still sets its finalizer, as kube-apiserver does.
		changed := false
		if g := meta.DeletionGracePeriodSeconds; g == nil || *g == 0 {
			changed = propagationFinalizers(meta, opts.PropagationPolicy)
		}
		if opts.GracePeriodSeconds != nil && deadline.Before(meta.DeletionTimestamp.Time) {
			meta.DeletionTimestamp = &deadline
			meta.DeletionGracePeriodSeconds = &grace
			changed = true
		}
		if !changed {
			return false, s.result(k, key, d.e.value, d.e.rev, obj)
		}
	} else {
		propagationFinalizers(meta, opts.PropagationPolicy)
		if len(meta.Finalizers) == 0 && grace == 0 {
			return tx.remove(k, key, d.e, cur, obj)
		}
		meta.DeletionTimestamp = &deadline
		meta.DeletionGracePeriodSeconds = &grace
		if meta.Generation > 0 {
			meta.Generation++
		}
	}
	if len(meta.Finalizers) == 0 && !now.Before(meta.DeletionTimestamp.Time) {
		return tx.remove(k, key, d.e, cur, obj)
	}
	data, err := s.encode(k, cur)
	if err != nil {
		return false, err
	}
	tx.putObject(k, key, data, cur)
	tx.onCommit(func(rev int64) error { return tx.giveResult(obj, cur, rev) })
	return false, nil
}

// propagationFinalizers sets the finalizer of an explicit propagation policy, as
// kube-apiserver does: Orphan has "orphan" and not "foregroundDeletion", Foreground
// the other way round, Background neither; no policy leaves them. It reports whether
// the finalizers changed.
func propagationFinalizers(meta *resource.ObjectMeta, policy string) bool {
	switch policy {
	case DeletePropagationOrphan:
		a := meta.RemoveFinalizer(FinalizerForegroundDeletion)
		return meta.AddFinalizer(FinalizerOrphan) || a
	case DeletePropagationForeground:
		a := meta.RemoveFinalizer(FinalizerOrphan)
		return meta.AddFinalizer(FinalizerForegroundDeletion) || a
	case DeletePropagationBackground:
		a := meta.RemoveFinalizer(FinalizerOrphan)
		return meta.RemoveFinalizer(FinalizerForegroundDeletion) || a
	}
	return false
}

// remove deletes key now; obj gets the last state with the deletion's revision.
func (tx *Tx) remove(k *resource.KindInfo, key string, e *txEntry, cur resource.Object, obj resource.Object) (bool, error) {
	data, modRev := e.value, e.rev
	tx.del(key)
	tx.removed = append(tx.removed, removedObject{kind: k, uid: cur.GetObjectMeta().UID})
	tx.onCommit(func(rev int64) error {
		tx.s.cache.Drop(key)
		if err := tx.s.decodeTo(k, key, modRev, data, rev, obj); err != nil {
			return err
		}
		if rev == 0 {
			obj.GetObjectMeta().ResourceVersion = ""
		}
		return nil
	})
	return true, nil
}

// DeleteCollection deletes every object of list's kind that listOpts select, each
// through a normal [Store.Delete] with opts (not atomic, as in Kubernetes), and
// returns how many it deleted or marked for deletion. Objects that are gone by the
// time their turn comes are skipped. list is left holding the objects it looked at.
func (s *Store) DeleteCollection(ctx context.Context, list resource.ObjectList, listOpts ListOptions, opts DeleteOptions) (int, error) {
	if listOpts.Continue != "" {
		return 0, resource.NewBadRequest("DeleteCollection does not take a continue token")
	}
	if err := s.List(ctx, list, listOpts); err != nil {
		return 0, err
	}
	n := 0
	for i := 0; i < list.Len(); i++ {
		obj := list.Item(i)
		if _, err := s.Delete(ctx, obj, opts); err != nil {
			if errors.Is(err, resource.ErrNotFound) {
				continue
			}
			return n, err
		}
		n++
	}
	return n, nil
}
