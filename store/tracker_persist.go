package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// Records: what the background work needs of an object, kept in the backend beside
// it, so that a store opening a backend of a million objects reads the few records
// instead of decoding every object.
//
// The object at key K has a record at recordPrefix+K while it has owner references
// or a deletion timestamp (objInfo.relevant): its uid, owner references, finalizers
// and deletion timestamp, as JSON. The record is written or deleted by the same
// backend transaction as the object, so the two always agree, at every revision.
// Records live outside "/", so no list, watch or range guard of objects sees them.
//
// A backend written before records existed has objects without them: the label
// build (tracker_labels.go), which reads every object in the background, writes the
// missing ones.

// recordPrefix is the prefix of every record key: the object key follows.
const recordPrefix = "\x00bg"

// recordKey is the key of the record of the object at key.
func recordKey(key string) string { return recordPrefix + key }

// record is the stored form of a record.
type record struct {
	UID        string                    `json:"uid"`
	Owners     []resource.OwnerReference `json:"ownerReferences,omitempty"`
	Finalizers []string                  `json:"finalizers,omitempty"`
	Deletion   *time.Time                `json:"deletionTimestamp,omitempty"`
}

// encodeRecord returns the record of info.
func encodeRecord(info *objInfo) []byte {
	b, err := json.Marshal(record{UID: info.uid, Owners: info.owners, Finalizers: info.finalizers, Deletion: info.deletion})
	if err != nil {
		// Strings, slices of structs of strings and a time: json.Marshal cannot fail.
		panic("store: encoding a record: " + err.Error())
	}
	return b
}

// decodeRecord reads the record stored at recordKey(key); nil when it is unreadable
// or its object of an unknown kind.
func (s *Store) decodeRecord(key string, value []byte) *objInfo {
	k := s.kindOfKey(key)
	if k == nil {
		return nil
	}
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		s.log.Error("store: unreadable background record", "key", key, "err", err)
		return nil
	}
	return &objInfo{kind: k, key: key, uid: r.UID, owners: r.Owners, finalizers: r.Finalizers, deletion: r.Deletion}
}

// appendRecordOps appends to ops the writes of the records of the objects the
// transaction writes: a put for an object the background work needs, else a delete
// when the object may have had a record before.
func (tx *Tx) appendRecordOps(ops []backend.Op) []backend.Op {
	for _, key := range tx.order {
		if !strings.HasPrefix(key, "/") {
			continue
		}
		e, _ := tx.entry(key)
		var info *objInfo
		switch {
		case e.value == nil:
			if e.read && e.readRev == 0 {
				continue // absent before, absent after: nothing written
			}
		case e.obj != nil:
			info = summarize(e.kind, key, e.obj.GetObjectMeta())
		default:
			info = tx.s.infoOf(key, e.value)
		}
		if info.relevant() {
			ops = append(ops, backend.Op{Key: recordKey(key), Value: encodeRecord(info)})
		} else if !e.read || tx.s.track.mayHaveRecord(key, e.readRev) {
			ops = append(ops, backend.Op{Key: recordKey(key), Delete: true})
		}
	}
	return ops
}

// mayHaveRecord reports whether the object at key, as it was at revision rev, may
// have a record: false only when the sparse index, at rev or later, says it had none
// (a record and its object change together, so the index's view of the record at
// its revision is the record's at rev unless the object changed since, which the
// transaction's compare on the object refuses). rev 0 (absent) has none.
func (t *tracker) mayHaveRecord(key string, rev int64) bool {
	if rev == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rebuilding || t.rev < rev {
		return true
	}
	return t.objs[key] != nil
}

// repairRecord writes the missing record of an object the background work needs,
// found at revision rev by the label build: a backend written before records
// existed has none. It checks first, at rev, that the record is missing; the write is
// guarded by the object's revision, so a concurrent write of the object (which
// writes its own record) wins.
func (t *tracker) repairRecord(ctx context.Context, key string, modRev, rev int64, info *objInfo) error {
	_, err := t.s.b.Get(ctx, recordKey(key), rev)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrCompacted):
		// Too old to tell: read the current state instead.
		if _, err := t.s.b.Get(ctx, recordKey(key), 0); err == nil || !errors.Is(err, backend.ErrKeyNotFound) {
			return err
		}
	case !errors.Is(err, backend.ErrKeyNotFound):
		return err
	}
	t.s.log.Info("store: writing the missing background record of an object", "key", key)
	_, err = t.s.b.Txn(ctx, backend.Txn{
		Compares: []backend.Compare{{Key: key, ModRevision: modRev}},
		Ops:      []backend.Op{{Key: recordKey(key), Value: encodeRecord(info)}},
	})
	return err
}
