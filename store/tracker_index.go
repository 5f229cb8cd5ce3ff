package store

import (
	"encoding/json"
	"maps"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
)

// The tracker's index entries: the summary of a stored object's metadata, how it is
// read from stored bytes, and setLocked, through which every change reaches the index
// (objects, uids, dependents, labels, reap deadlines, the collector's queue).

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

// setLocked puts (info != nil) or removes a key in the index and queues the work the
// change causes.
func (t *tracker) setLocked(key string, info *objInfo) {
	old := t.objs[key]
	// Most writes keep the labels: then the label index stays as it is.
	sameLabels := old != nil && info != nil && maps.Equal(old.labels, info.labels)
	if old != nil {
		for _, r := range old.owners {
			if d := t.dependents[r.UID]; d != nil {
				delete(d, key)
				if len(d) == 0 {
					delete(t.dependents, r.UID)
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
		for l, v := range old.labels {
			if sameLabels {
				break
			}
			if set := t.labels[l+"\x00"+v]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(t.labels, l+"\x00"+v)
				}
			}
		}
		delete(t.objs, key)
		delete(t.reap, key)
	}
	if info == nil {
		return
	}
	t.objs[key] = info
	for l, v := range info.labels {
		if sameLabels {
			break
		}
		set := t.labels[l+"\x00"+v]
		if set == nil {
			set = map[string]struct{}{}
			t.labels[l+"\x00"+v] = set
		}
		set[key] = struct{}{}
	}
	t.uidKey[info.uid] = key
	for _, r := range info.owners {
		d := t.dependents[r.UID]
		if d == nil {
			d = map[string]struct{}{}
			t.dependents[r.UID] = d
		}
		d[key] = struct{}{}
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
