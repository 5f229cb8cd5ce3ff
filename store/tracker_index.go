package store

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
)

// The tracker's sparse index: the summary of a stored object's metadata, how it is
// read from stored bytes, and setLocked, through which every change of an object the
// background work needs reaches the index (objects, uids, dependents, reap
// deadlines, the collector's queue). The labels are in tracker_labels.go.

type objInfo struct {
	kind       *resource.KindInfo
	key        string
	namespace  string
	name       string
	uid        string
	owners     []resource.OwnerReference
	finalizers []string
	deletion   *time.Time
	labels     map[string]string
	rev        int64 // ModRevision of the stored value; 0 until the tracker sets it
}

// metaOnly decodes just the metadata of a stored object.
type metaOnly struct {
	Metadata resource.ObjectMeta `json:"metadata"`
}

// infoOf summarises a stored object; nil for keys of kinds the store does not know.
func (s *Store) infoOf(key string, value []byte) *objInfo {
	k := s.kindOfKey(key)
	if k == nil {
		return nil
	}
	var m metaOnly
	if err := json.Unmarshal(value, &m); err != nil {
		s.log.Error("store: unreadable object in storage", "key", key, "err", err)
		return nil
	}
	return summarize(k, key, &m.Metadata)
}

// summarize builds the summary of an object of kind k at key with metadata m. The
// summary shares m's lists and maps: m must not change afterwards.
func summarize(k *resource.KindInfo, key string, m *resource.ObjectMeta) *objInfo {
	info := &objInfo{kind: k, key: key, namespace: m.Namespace, name: m.Name,
		uid: m.UID, owners: m.OwnerReferences, finalizers: m.Finalizers, labels: m.Labels}
	if m.DeletionTimestamp != nil {
		d := m.DeletionTimestamp.Time
		info.deletion = &d
	}
	return info
}

// kindOfKey finds the kind whose key prefix key has.
func (s *Store) kindOfKey(key string) *resource.KindInfo {
	for _, k := range s.scheme.Kinds() {
		if strings.HasPrefix(key, keyPrefix(k)) {
			return k
		}
	}
	return nil
}

// relevant reports whether the background work needs the object: it has owners (the
// collector looks at it when they go) or is being deleted (the reaper, the orphan and
// foreground finalizers). Only these are in the sparse index, and have a record.
func (info *objInfo) relevant() bool {
	return info != nil && (len(info.owners) > 0 || info.deletion != nil)
}

// ownerKey returns the key of the object a reference of the object at depKey points
// at, "" when its kind is not registered.
func (s *Store) ownerKey(depKey string, ref resource.OwnerReference) string {
	ok, found := s.scheme.KindFor(ref.APIVersion, ref.Kind)
	if !found {
		return ""
	}
	ns := ""
	if ok.Namespaced {
		dk := s.kindOfKey(depKey)
		if dk == nil || !dk.Namespaced {
			return "" // a cluster-scoped dependent cannot have a namespaced owner
		}
		rest := depKey[len(keyPrefix(dk)):]
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return ""
		}
		ns = rest[:i]
	}
	return objectKey(ok, ns, ref.Name)
}

// setLocked puts (info != nil) or removes a key in the sparse index and queues the
// work the change causes. An info that is not relevant removes the key.
func (t *tracker) setLocked(key string, info *objInfo) {
	if !info.relevant() {
		info = nil
	}
	old := t.objs[key]
	if old != nil {
		for _, r := range old.owners {
			if d := t.dependents[r.UID]; d != nil {
				delete(d, key)
				if len(d) == 0 {
					delete(t.dependents, r.UID)
				}
			}
			if ok := t.s.ownerKey(key, r); ok != "" {
				if d := t.byOwnerKey[ok]; d != nil {
					delete(d, key)
					if len(d) == 0 {
						delete(t.byOwnerKey, ok)
					}
				}
			}
			// An owner waiting for its dependents may be free now.
			if ok := t.uidKey[r.UID]; ok != "" {
				t.queue[ok] = struct{}{}
			}
		}
		if info == nil || info.uid != old.uid {
			delete(t.uidKey, old.uid)
			for d := range t.dependents[old.uid] {
				t.queue[d] = struct{}{}
			}
		}
		delete(t.objs, key)
		delete(t.reap, key)
	}
	if info == nil {
		return
	}
	t.objs[key] = info
	t.uidKey[info.uid] = key
	for _, r := range info.owners {
		d := t.dependents[r.UID]
		if d == nil {
			d = map[string]struct{}{}
			t.dependents[r.UID] = d
		}
		d[key] = struct{}{}
		if ok := t.s.ownerKey(key, r); ok != "" {
			d := t.byOwnerKey[ok]
			if d == nil {
				d = map[string]struct{}{}
				t.byOwnerKey[ok] = d
			}
			d[key] = struct{}{}
		}
	}
	if len(info.owners) > 0 {
		t.queue[key] = struct{}{}
	}
	if info.deletion != nil {
		if len(info.finalizers) == 0 {
			t.reap[key] = *info.deletion
		}
		for _, f := range info.finalizers {
			if f == FinalizerOrphan || f == FinalizerForegroundDeletion {
				t.queue[key] = struct{}{}
			}
		}
		for d := range t.dependents[info.uid] {
			t.queue[d] = struct{}{}
		}
	}
}

// removedLocked handles the removal of the object at key, found in the backend: its
// dependents, which may have lost their owner, are queued for the collector (an
// owner without a record is not in the sparse index: it is found by key).
func (t *tracker) removedLocked(key string) {
	for d := range t.byOwnerKey[key] {
		t.queue[d] = struct{}{}
	}
}
