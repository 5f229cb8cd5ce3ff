package managedfields

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/management-service/mgmt/resource"
)

// MaxUpdateEntries is how many Update entries an object keeps (Kubernetes'
// DefaultMaxUpdateManagers). Apply entries are not counted and never folded.
const MaxUpdateEntries = 10

// AncientChangesManager is the manager of the entry that older Update entries are
// folded into once there are more than MaxUpdateEntries, one per apiVersion.
const AncientChangesManager = "ancient-changes"

// UnknownManager is the manager recorded for a write that names none.
const UnknownManager = "unknown"

// Write describes one create, update or status update, the way Update records it.
type Write struct {
	// Manager is the field manager of the caller; empty means UnknownManager.
	Manager string
	// APIVersion is the group/version the caller wrote, e.g. "management.service/v1".
	APIVersion string
	// Subresource is "status" for a status write, empty for the main resource.
	Subresource string
	// Now is the time recorded when the entry changes; the zero value means
	// time.Now(). It is kept in UTC at whole seconds, as resource.Time writes it.
	Now time.Time
	// StatusSubresource says the kind has a status subresource. Writes to the main
	// resource of such a kind do not record status (the store keeps the old status).
	StatusSubresource bool
}

// EntryError reports a managedFields entry that cannot be used: FieldsV1 that does
// not parse, or an operation other than Apply and Update. The store answers it with
// 422 Invalid at Field.
type EntryError struct {
	// Index is the position of the entry in the list.
	Index int
	// Manager is the entry's manager, for the message.
	Manager string
	// Field is the offending field path, e.g. "metadata.managedFields[2].fieldsV1".
	Field string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *EntryError) Error() string {
	return fmt.Sprintf("%s (manager %q): %v", e.Field, e.Manager, e.Err)
}

// Unwrap returns the underlying error.
func (e *EntryError) Unwrap() error { return e.Err }

// IsReset reports whether managedFields sent by a client ask for a reset: a non-nil
// empty list, or a list of exactly one empty entry (no manager, operation,
// apiVersion, fieldsType, subresource, time or fieldsV1). This is Kubernetes'
// isResetManagedFields; an absent (nil) list is not a reset.
func IsReset(sent []resource.ManagedFieldsEntry) bool {
	switch len(sent) {
	case 0:
		return sent != nil
	case 1:
		e := sent[0]
		fv := bytes.TrimSpace(e.FieldsV1)
		return e.Manager == "" && e.Operation == "" && e.APIVersion == "" &&
			e.FieldsType == "" && e.Subresource == "" &&
			(e.Time == nil || e.Time.IsZero()) &&
			(len(fv) == 0 || bytes.Equal(fv, []byte("null")))
	}
	return false
}

// Resolve returns the entries a write starts from, given the stored entries (live;
// nil on create) and those in the object the client sent. It follows Kubernetes'
// decodeManagedFields:
//   - a subresource write (subresource != "") ignores what was sent: live;
//   - a reset (see IsReset) starts from no entries at all, so after Update only the
//     fields this write changed are recorded (an unchanged object ends up with no
//     managedFields);
//   - nothing sent (nil) keeps live, so clients unaware of managedFields never erase
//     them;
//   - otherwise the client's entries replace live ones, and Update records this
//     write on top of them.
//
// Sent entries whose fieldsV1 does not parse or whose operation is not Apply or
// Update give an *EntryError (Kubernetes silently keeps live instead; here malformed
// entries are refused with 422). Other validation is resource.ValidateManagedFields'
// job. The returned slice may be live or sent itself; it must not be modified.
func Resolve(live, sent []resource.ManagedFieldsEntry, subresource string) ([]resource.ManagedFieldsEntry, error) {
	switch {
	case subresource != "":
		return live, nil
	case IsReset(sent):
		return nil, nil
	case len(sent) == 0:
		return live, nil
	}
	if _, err := decodeEntries(sent); err != nil {
		return nil, err
	}
	return sent, nil
}

// Update returns the managedFields after w wrote newObj over oldObj (both encoded JSON
// objects; oldObj is nil on create), starting from entries (usually what Resolve
// returned). It never modifies its arguments. The rules:
//
//   - Entries are keyed by manager, operation, apiVersion and subresource (Apply
//     entries by manager, operation and subresource, as in Kubernetes); when keys
//     repeat, the last entry wins.
//   - The writer's entry (w.Manager, Update, w.APIVersion, w.Subresource) gains every
//     path the write added or whose value it changed; on create that is
//     FromObject(newObj, w).
//   - Those paths, with everything below them, leave every other entry: a changed
//     field owned by another manager moves to the writer.
//   - Paths the write removed, with everything below them, leave every entry.
//   - The writer's time becomes w.Now when the write added, changed or removed any
//     path, and is kept otherwise (a write that changes nothing changes no time).
//     Other entries keep their time even when they lose fields to the writer.
//   - Entries left with no paths are dropped.
//   - When more than MaxUpdateEntries Update entries remain, the oldest (by time,
//     then by the output order below) are folded into an AncientChangesManager
//     Update entry for their apiVersion, with no subresource: the union of their
//     fields and the latest of their times. As in Kubernetes, the oldest entry of an
//     apiVersion is folded only once a second one of that apiVersion must be, so
//     more than MaxUpdateEntries can remain when their apiVersions all differ.
//   - The result is sorted as Kubernetes sorts it: by operation (Apply before
//     Update), time (missing first), manager, apiVersion, subresource. fieldsType is
//     FieldsV1 and fieldsV1 is Set.FieldsV1's canonical encoding. No entries is nil.
//
// An entry whose fieldsV1 does not parse gives an *EntryError; an object that is not
// a JSON object gives an error.
func Update(entries []resource.ManagedFieldsEntry, oldObj, newObj []byte, w Write) ([]resource.ManagedFieldsEntry, error) {
	if w.Manager == "" {
		w.Manager = UnknownManager
	}
	if w.Now.IsZero() {
		w.Now = time.Now()
	}
	c, err := compare(oldObj, newObj, scopeOf(w))
	if err != nil {
		return nil, err
	}
	list, err := decodeEntries(entries)
	if err != nil {
		return nil, err
	}
	changed := c.added.set().Union(c.modified.set())
	removed := c.removed.set()
	lost := changed.Union(removed)

	writer := entryKey{manager: w.Manager, operation: resource.ManagedFieldsOperationUpdate,
		apiVersion: w.APIVersion, subresource: w.Subresource}
	var self *entry
	for _, e := range list {
		if e.key == writer {
			self = e
			continue
		}
		e.set = e.set.RecursiveDifference(lost)
	}
	if self == nil {
		self = &entry{key: writer}
		list = append(list, self)
	}
	self.set = self.set.RecursiveDifference(removed).Union(changed)
	if !lost.Empty() {
		self.time = resource.NewTimePtr(w.Now)
	}

	kept := list[:0]
	for _, e := range list {
		if !e.set.Empty() {
			kept = append(kept, e)
		}
	}
	list = capUpdates(kept, MaxUpdateEntries)
	sortEntries(list)
	return encodeEntries(list), nil
}

// entryKey identifies an entry, like Kubernetes' manager identifier.
type entryKey struct {
	manager, operation, apiVersion, subresource string
}

type entry struct {
	key  entryKey
	time *resource.Time
	set  Set
}

func keyOf(e resource.ManagedFieldsEntry) entryKey {
	k := entryKey{manager: e.Manager, operation: e.Operation, apiVersion: e.APIVersion, subresource: e.Subresource}
	if k.operation == resource.ManagedFieldsOperationApply {
		k.apiVersion = ""
	}
	return k
}

// decodeEntries parses entries; a repeated key replaces the earlier entry in place.
func decodeEntries(entries []resource.ManagedFieldsEntry) ([]*entry, error) {
	list := make([]*entry, 0, len(entries)+1)
	index := make(map[entryKey]int, len(entries))
	for i, e := range entries {
		switch e.Operation {
		case resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate:
		default:
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].operation", i),
				Err:   fmt.Errorf("must be %q or %q, not %q", resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate, e.Operation)}
		}
		s, err := ParseFieldsV1(e.FieldsV1)
		if err != nil {
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].fieldsV1", i), Err: err}
		}
		var t *resource.Time
		if e.Time != nil && !e.Time.IsZero() {
			v := *e.Time
			t = &v
		}
		k := keyOf(e)
		ne := &entry{key: k, time: t, set: s}
		ne.key.apiVersion = e.APIVersion // keep the recorded apiVersion, also for Apply
		if j, ok := index[k]; ok {
			list[j] = ne
			continue
		}
		index[k] = len(list)
		list = append(list, ne)
	}
	return list, nil
}

func unixOrZero(t *resource.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// entryLess is the output order: operation, time, manager, apiVersion, subresource.
func entryLess(a, b *entry) bool {
	if a.key.operation != b.key.operation {
		return a.key.operation < b.key.operation
	}
	if ta, tb := unixOrZero(a.time), unixOrZero(b.time); !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.key.manager != b.key.manager {
		return a.key.manager < b.key.manager
	}
	if a.key.apiVersion != b.key.apiVersion {
		return a.key.apiVersion < b.key.apiVersion
	}
	return a.key.subresource < b.key.subresource
}

func sortEntries(list []*entry) {
	sort.SliceStable(list, func(i, j int) bool { return entryLess(list[i], list[j]) })
}

func isBucket(e *entry) bool {
	return e.key.manager == AncientChangesManager &&
		e.key.operation == resource.ManagedFieldsOperationUpdate && e.key.subresource == ""
}

// capUpdates folds the oldest Update entries into per-apiVersion AncientChangesManager
// entries until at most max Update entries remain (or nothing more can be folded).
func capUpdates(list []*entry, max int) []*entry {
	var updates []*entry
	buckets := map[string]*entry{}
	for _, e := range list {
		if e.key.operation != resource.ManagedFieldsOperationUpdate {
			continue
		}
		updates = append(updates, e)
		if isBucket(e) {
			buckets[e.key.apiVersion] = e
		}
	}
	n := len(updates)
	if n <= max {
		return list
	}
	sortEntries(updates)
	folded := map[*entry]bool{}
	first := map[string]*entry{}
	for _, e := range updates {
		if n <= max {
			break
		}
		if isBucket(e) {
			continue
		}
		v := e.key.apiVersion
		b := buckets[v]
		if b == nil {
			f := first[v]
			if f == nil {
				first[v] = e
				continue
			}
			// The first entry of this apiVersion becomes the bucket.
			f.key = entryKey{manager: AncientChangesManager, operation: resource.ManagedFieldsOperationUpdate, apiVersion: v}
			buckets[v] = f
			b = f
		}
		b.set = b.set.Union(e.set)
		if unixOrZero(e.time).After(unixOrZero(b.time)) {
			b.time = e.time
		}
		folded[e] = true
		n--
	}
	out := list[:0]
	for _, e := range list {
		if !folded[e] {
			out = append(out, e)
		}
	}
	return out
}

func encodeEntries(list []*entry) []resource.ManagedFieldsEntry {
	if len(list) == 0 {
		return nil
	}
	out := make([]resource.ManagedFieldsEntry, 0, len(list))
	for _, e := range list {
		var t *resource.Time
		if e.time != nil {
			v := *e.time
			t = &v
		}
		out = append(out, resource.ManagedFieldsEntry{
			Manager:     e.key.manager,
			Operation:   e.key.operation,
			APIVersion:  e.key.apiVersion,
			Time:        t,
			FieldsType:  resource.FieldsTypeV1,
			FieldsV1:    e.set.FieldsV1(),
			Subresource: e.key.subresource,
		})
	}
	return out
}
