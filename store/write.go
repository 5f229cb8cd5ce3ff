package store

import (
	"bytes"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// write is one object on its way through the write pipeline shared by create and
// update: the metadata rules of each have run; what follows is admission, encoding,
// generation, managedFields and the write itself.
type write struct {
	op   Operation
	sub  string // "status" for a status write
	k    *resource.KindInfo
	key  string
	obj  resource.Object // the caller's, filled with the result on commit
	work resource.Object // what will be stored
	// sentFields are the managedFields the caller sent (nil and [] differ).
	sentFields []resource.ManagedFieldsEntry
	// old is the stored object, oldValue its bytes and oldRev its revision (an update).
	old      resource.Object
	oldValue []byte
	oldRev   int64
}

var metaPath = resource.NewPath("metadata")

// commitWrite runs the tail of the pipeline: admission → encode → generation →
// managedFields → the write (or nothing, when nothing changed; or the removal, when
// the write leaves a terminating object without finalizers).
func (tx *Tx) commitWrite(w *write, opts WriteOptions) error {
	s := tx.s
	if err := tx.admitWrite(w, opts); err != nil {
		return err
	}
	first, err := s.encodeFirst(w.k, w.work)
	if err != nil {
		return err
	}
	meta := w.work.GetObjectMeta()
	if w.op == OperationUpdate && w.sub == "" && specChanged(w.oldValue, first.data) {
		// generation counts changes of the desired state: anything outside metadata
		// and status.
		meta.Generation++
	}
	var live []resource.ManagedFieldsEntry
	if w.old != nil {
		live = w.old.GetObjectMeta().ManagedFields
	}
	if meta.ManagedFields, err = s.trackFields(w, live, first.data, opts); err != nil {
		return err
	}
	data, err := s.finish(w.k, w.work, first)
	if err != nil {
		return err
	}
	first.release()
	return tx.store(w, data)
}

// admitWrite runs the admission hooks on the write; after mutating hooks, w.work is
// normalized to what will be stored, so that the caller gets back exactly that.
func (tx *Tx) admitWrite(w *write, opts WriteOptions) error {
	req := &AdmissionRequest{Operation: w.op, Subresource: w.sub, Kind: w.k, Object: w.work, OldObject: w.old,
		User: opts.User, DryRun: tx.dryRun, Tx: tx, oldJSON: w.oldValue}
	if err := tx.s.admit(tx.ctx, req, metaPath); err != nil {
		return err
	}
	if len(tx.s.opts.Mutating) > 0 {
		w.work = objcodec.Normalize(w.k, w.work)
	}
	return nil
}

// store records the write of data, the encoding of w.work, and hands the result to
// the caller on commit.
func (tx *Tx) store(w *write, data []byte) error {
	obj, work := w.obj, w.work
	switch {
	case w.op == OperationUpdate && bytes.Equal(data, w.oldValue):
		// Nothing changed: nothing is written, the resourceVersion stays.
		rev := w.oldRev
		tx.onCommit(func(int64) error { return tx.giveResult(obj, work, rev) })
		return nil
	case w.op == OperationUpdate && leavesTerminated(w.old.GetObjectMeta(), work.GetObjectMeta(), tx.s.clock):
		// The write that leaves a terminating object without finalizers removes it.
		tx.del(w.key)
		tx.removed = append(tx.removed, removedObject{kind: w.k, uid: w.old.GetObjectMeta().UID})
	default:
		tx.putObject(w.k, w.key, data, work)
	}
	tx.onCommit(func(rev int64) error { return tx.giveResult(obj, work, rev) })
	return nil
}

// leavesTerminated reports whether a write that makes meta of an object whose stored
// metadata is old leaves it terminated: being deleted, without finalizers, its grace
// period run out.
func leavesTerminated(old, meta *resource.ObjectMeta, clock Clock) bool {
	return old.IsTerminating() && len(meta.Finalizers) == 0 && !clock.Now().Before(meta.DeletionTimestamp.Time)
}
