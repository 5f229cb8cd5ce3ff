package store

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
)

// Garbage collection, run by the store's background loop:
//
//   - A dependent whose owners are all gone (no object at the reference's kind,
//     namespace and name, or one with another uid) is deleted, in the background, or
//     in the foreground when one of its owners is itself being deleted in the
//     foreground and the dependent has dependents of its own.
//   - A dependent with some owners gone and some present loses the references to the
//     gone ones.
//   - An owner with the orphan finalizer: every dependent loses its reference to it,
//     then the finalizer is removed.
//   - An owner with the foregroundDeletion finalizer: its dependents are deleted; the
//     finalizer is removed once no dependent with blockOwnerDeletion is left.
//
// Every decision is re-read and written in one store transaction, so a concurrent
// write makes the collector look again rather than act on stale data.

const gcManager = "garbage-collector"

type ownerState int

const (
	ownerPresent ownerState = iota
	ownerAbsent
	ownerWaiting // present and being deleted in the foreground
	ownerUnknown // its kind is not registered: the collector leaves the dependent alone
)

// collect looks at one key and does what garbage collection requires of it.
func (s *Store) collect(ctx context.Context, key string) error {
	k := s.kindOfKey(key)
	if k == nil {
		return nil
	}
	// Dependents are found through the index: bring it up to the store's revision.
	if rev, err := s.b.Revision(ctx); err == nil {
		s.track.catchUp(ctx, rev)
	}
	_, err := s.runTxn(ctx, false, func(tx *Tx) error {
		e, err := tx.get(key)
		if err != nil || e.value == nil {
			return err
		}
		obj, err := s.decode(k, key, e.rev, e.value, e.rev)
		if err != nil {
			return err
		}
		m := obj.GetObjectMeta()
		if m.IsTerminating() && m.HasFinalizer(FinalizerOrphan) {
			return s.orphanDependents(tx, obj)
		}
		if m.IsTerminating() && m.HasFinalizer(FinalizerForegroundDeletion) {
			return s.deleteDependentsInForeground(tx, obj)
		}
		if len(m.OwnerReferences) == 0 {
			return nil
		}
		var keep []resource.OwnerReference
		var waiting, dangling bool
		for _, ref := range m.OwnerReferences {
			switch tx.ownerState(k, m.Namespace, ref) {
			case ownerPresent, ownerUnknown:
				keep = append(keep, ref)
			case ownerWaiting:
				waiting = true
				keep = append(keep, ref)
			case ownerAbsent:
				dangling = true
			}
		}
		solid := false
		for _, ref := range keep {
			if tx.ownerState(k, m.Namespace, ref) != ownerWaiting {
				solid = true
			}
		}
		switch {
		case !solid && !m.IsTerminating():
			// Under an owner deleted in the foreground, the dependent goes in the
			// foreground too: whether it has dependents of its own is decided when its
			// own deletion is looked at, after every earlier write is in the index.
			policy := DeletePropagationBackground
			if waiting {
				policy = DeletePropagationForeground
			}
			target := k.New()
			target.GetObjectMeta().Namespace, target.GetObjectMeta().Name = m.Namespace, m.Name
			uid := m.UID
			_, err := tx.Delete(target, DeleteOptions{PropagationPolicy: policy,
				Preconditions: Preconditions{UID: &uid}, WriteOptions: WriteOptions{FieldManager: gcManager}})
			return err
		case solid && dangling:
			m.OwnerReferences = keep
			return tx.Update(obj, UpdateOptions{WriteOptions: WriteOptions{FieldManager: gcManager}})
		}
		return nil
	})
	return err
}

// ownerState reads the owner a reference points at.
func (tx *Tx) ownerState(depKind *resource.KindInfo, depNamespace string, ref resource.OwnerReference) ownerState {
	ok, found := tx.s.scheme.KindFor(ref.APIVersion, ref.Kind)
	if !found {
		return ownerUnknown
	}
	ns := ""
	if ok.Namespaced {
		if !depKind.Namespaced {
			// A cluster-scoped dependent cannot have a namespaced owner.
			return ownerAbsent
		}
		ns = depNamespace
	}
	e, err := tx.get(objectKey(ok, ns, ref.Name))
	if err != nil {
		return ownerUnknown
	}
	if e.value == nil {
		return ownerAbsent
	}
	owner, err := tx.s.decode(ok, objectKey(ok, ns, ref.Name), e.rev, e.value, e.rev)
	if err != nil {
		return ownerUnknown
	}
	om := owner.GetObjectMeta()
	if om.UID != ref.UID {
		return ownerAbsent
	}
	if om.IsTerminating() && om.HasFinalizer(FinalizerForegroundDeletion) {
		return ownerWaiting
	}
	return ownerPresent
}

// dependentsOf reads the objects that reference uid, as the transaction sees them.
func (tx *Tx) dependentsOf(uid string) ([]resource.Object, []*resource.KindInfo, error) {
	var objs []resource.Object
	var kinds []*resource.KindInfo
	for _, key := range tx.s.track.dependentKeys(uid) {
		k := tx.s.kindOfKey(key)
		if k == nil {
			continue
		}
		e, err := tx.get(key)
		if err != nil {
			return nil, nil, err
		}
		if e.value == nil {
			continue
		}
		obj, err := tx.s.decode(k, key, e.rev, e.value, e.rev)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range obj.GetObjectMeta().OwnerReferences {
			if r.UID == uid {
				objs = append(objs, obj)
				kinds = append(kinds, k)
				break
			}
		}
	}
	return objs, kinds, nil
}

// orphanDependents removes every reference to obj from its dependents, then obj's
// orphan finalizer.
func (s *Store) orphanDependents(tx *Tx, obj resource.Object) error {
	m := obj.GetObjectMeta()
	deps, _, err := tx.dependentsOf(m.UID)
	if err != nil {
		return err
	}
	for _, d := range deps {
		dm := d.GetObjectMeta()
		var keep []resource.OwnerReference
		for _, r := range dm.OwnerReferences {
			if r.UID != m.UID {
				keep = append(keep, r)
			}
		}
		dm.OwnerReferences = keep
		if err := tx.Update(d, UpdateOptions{WriteOptions: WriteOptions{FieldManager: gcManager}}); err != nil {
			return fmt.Errorf("orphan dependent %s: %w", dm.Name, err)
		}
	}
	m.RemoveFinalizer(FinalizerOrphan)
	return tx.Update(obj, UpdateOptions{WriteOptions: WriteOptions{FieldManager: gcManager}})
}

// deleteDependentsInForeground deletes obj's dependents and removes its
// foregroundDeletion finalizer once none that blocks is left.
func (s *Store) deleteDependentsInForeground(tx *Tx, obj resource.Object) error {
	m := obj.GetObjectMeta()
	deps, kinds, err := tx.dependentsOf(m.UID)
	if err != nil {
		return err
	}
	blocking := 0
	for i, d := range deps {
		dm := d.GetObjectMeta()
		blocks := false
		for _, r := range dm.OwnerReferences {
			if r.UID == m.UID && r.BlocksOwnerDeletion() {
				blocks = true
			}
		}
		if !dm.IsTerminating() {
			// Foreground, always: the dependent's own dependents are found when its
			// marked state is looked at, by which time the index has every write
			// before it (events are applied in revision order).
			policy := DeletePropagationForeground
			target := kinds[i].New()
			target.GetObjectMeta().Namespace, target.GetObjectMeta().Name = dm.Namespace, dm.Name
			uid := dm.UID
			removed, err := tx.Delete(target, DeleteOptions{PropagationPolicy: policy,
				Preconditions: Preconditions{UID: &uid}, WriteOptions: WriteOptions{FieldManager: gcManager}})
			if err != nil {
				return err
			}
			if removed {
				continue
			}
			dm = target.GetObjectMeta()
		}
		if blocks && !s.track.waitsOn(dm.UID, m.UID) {
			blocking++
		}
	}
	if blocking == 0 {
		m.RemoveFinalizer(FinalizerForegroundDeletion)
		return tx.Update(obj, UpdateOptions{WriteOptions: WriteOptions{FieldManager: gcManager}})
	}
	return nil
}

// dependentKeys lists the keys of the objects that reference uid.
func (t *tracker) dependentKeys(uid string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.dependents[uid]))
	for k := range t.dependents[uid] {
		out = append(out, k)
	}
	return out
}

// waitsOn reports whether the object uid is (transitively) waiting in a foreground
// deletion for target: then target must not wait for it, or the two would wait for
// each other forever.
func (t *tracker) waitsOn(uid, target string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	var walk func(u string) bool
	walk = func(u string) bool {
		if seen[u] {
			return false
		}
		seen[u] = true
		key := t.uidKey[u]
		info := t.objs[key]
		if info == nil || info.deletion == nil {
			return false
		}
		fg := false
		for _, f := range info.finalizers {
			if f == FinalizerForegroundDeletion {
				fg = true
			}
		}
		if !fg {
			return false
		}
		for dep := range t.dependents[u] {
			di := t.objs[dep]
			if di == nil {
				continue
			}
			for _, r := range di.owners {
				if r.UID == u && r.BlocksOwnerDeletion() {
					if di.uid == target || walk(di.uid) {
						return true
					}
				}
			}
		}
		return false
	}
	return walk(uid)
}
