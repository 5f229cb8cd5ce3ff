package store

import (
	"encoding/json"
	"fmt"

	"github.com/management-service/mgmt/resource"
)

// movedPrefix holds the move records: for the key of an object that a transaction
// moved away (DeleteOptions.MovedTo), where it went. No kind's keys start with it (an
// API group never starts with a dot), so lists, watches and the index skip it.
const movedPrefix = "/.moved"

// moveRecord is the stored value of a move record.
type moveRecord struct {
	// UID and ResourceVersion are those of the object that moved.
	UID             string `json:"uid"`
	ResourceVersion int64  `json:"resourceVersion"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name"`
}

// checkMove validates DeleteOptions.MovedTo for an object of kind k at namespace/name.
func checkMove(k *resource.KindInfo, namespace, name string, opts DeleteOptions) error {
	to := opts.MovedTo
	if to == nil {
		return nil
	}
	if !opts.SkipFinalizers {
		return resource.NewBadRequest("store: MovedTo needs SkipFinalizers: a move removes the object at once")
	}
	if err := checkKeyNames(k, normalizeNamespace(k, to.Namespace), to.Name); err != nil {
		return err
	}
	if normalizeNamespace(k, to.Namespace) == namespace && to.Name == name {
		return resource.NewBadRequest(fmt.Sprintf("store: %s %q cannot move to where it is", k.Resource, name))
	}
	return nil
}

// recordMove writes, in the transaction, that the object at key (uid, stored at
// revision rev) moved to to.
func (tx *Tx) recordMove(k *resource.KindInfo, key, uid string, rev int64, to *Location) error {
	data, err := json.Marshal(moveRecord{UID: uid, ResourceVersion: rev,
		Namespace: normalizeNamespace(k, to.Namespace), Name: to.Name})
	if err != nil {
		return err
	}
	tx.put(movedPrefix+key, data)
	return nil
}

// movedConflict answers an update of the missing object at key: 409 Conflict naming
// the new place when the update was based on an object that moved away from key (same
// uid, or a resourceVersion not newer than the move), nil otherwise (the caller
// answers 404).
func (tx *Tx) movedConflict(k *resource.KindInfo, key, name, uid string, rv int64) error {
	e, err := tx.get(movedPrefix + key)
	if err != nil || e.value == nil {
		return err
	}
	var m moveRecord
	if err := json.Unmarshal(e.value, &m); err != nil {
		return fmt.Errorf("store: unreadable move record at %s: %w", key, err)
	}
	if uid != m.UID && (uid != "" || rv > m.ResourceVersion) {
		return nil // based on a later object at this key
	}
	where := fmt.Sprintf("%q", m.Name)
	if m.Namespace != "" {
		where = fmt.Sprintf("%q in namespace %q", m.Name, m.Namespace)
	}
	return resource.NewConflict(k, name, fmt.Sprintf(
		"the object has been moved to %s; read it there and apply your changes to that version", where))
}
