package managedfields

import (
	"bytes"
	"fmt"
	"slices"
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
	d := getDiffer()
	defer d.release()
	if _, err := d.decodeEntries(sent); err != nil {
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
	d := getDiffer()
	defer d.release()
	if err := d.compare(oldObj, newObj, scopeOf(w)); err != nil {
		return nil, err
	}
	list, err := d.decodeEntries(entries)
	if err != nil {
		return nil, err
	}
	// Set encodings below live in d's buffers; encodeEntries copies what it returns.
	changed := d.changed.set()
	removed := d.removed.set()
	lost := d.ar.union(changed, removed)

	writer := entryKey{manager: w.Manager, operation: resource.ManagedFieldsOperationUpdate,
		apiVersion: w.APIVersion, subresource: w.Subresource}
	var self *entry
	for _, e := range list {
		if e.key == writer {
			self = e
			continue
		}
		e.set.enc = d.ar.difference(e.set.enc, lost, true)
	}
	if self == nil {
		d.entries = append(d.entries, entry{key: writer})
		self = &d.entries[len(d.entries)-1]
		list = append(list, self)
	}
	self.set.enc = d.ar.union(d.ar.difference(self.set.enc, removed, true), changed)
	if len(lost) > 0 {
		self.time, self.hasTime = resource.NewTime(w.Now), true
	}

	kept := list[:0]
	for _, e := range list {
		if !e.set.Empty() {
			kept = append(kept, e)
		}
	}
	list = d.capUpdates(kept, MaxUpdateEntries)
	sortEntries(list)
	return encodeEntries(list), nil
}

// entryKey identifies an entry, like Kubernetes' manager identifier.
type entryKey struct {
	manager, operation, apiVersion, subresource string
}

type entry struct {
	key     entryKey
	lookup  entryKey // keyOf the entry it was decoded from: repeats replace it
	time    resource.Time
	hasTime bool // false: no time (a missing or zero time is dropped)
	set     Set
}

func keyOf(e resource.ManagedFieldsEntry) entryKey {
	k := entryKey{manager: e.Manager, operation: e.Operation, apiVersion: e.APIVersion, subresource: e.Subresource}
	if k.operation == resource.ManagedFieldsOperationApply {
		k.apiVersion = ""
	}
	return k
}

// decodeEntries parses entries; a repeated key replaces the earlier entry in place.
// The entries live in d and are valid until its release; their sets may share the
// fieldsV1 bytes of entries.
func (d *differ) decodeEntries(entries []resource.ManagedFieldsEntry) ([]*entry, error) {
	if cap(d.entries) < len(entries)+1 {
		d.entries = make([]entry, 0, len(entries)+1) // +1 for the writer: pointers stay valid
	}
	d.entries = d.entries[:0]
	list := d.list[:0]
	var index map[entryKey]int
	if len(entries) > 16 {
		index = make(map[entryKey]int, len(entries))
	}
	for i, e := range entries {
		switch e.Operation {
		case resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate:
		default:
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].operation", i),
				Err:   fmt.Errorf("must be %q or %q, not %q", resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate, e.Operation)}
		}
		s, err := parseFieldsV1(e.FieldsV1)
		if err != nil {
			return nil, &EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].fieldsV1", i), Err: err}
		}
		k := keyOf(e)
		ne := entry{key: k, lookup: k, set: s}
		ne.key.apiVersion = e.APIVersion // keep the recorded apiVersion, also for Apply
		if e.Time != nil && !e.Time.IsZero() {
			ne.time, ne.hasTime = *e.Time, true
		}
		j := -1
		if index != nil {
			if x, ok := index[k]; ok {
				j = x
			}
		} else {
			for x, p := range list {
				if p.lookup == k {
					j = x
					break
				}
			}
		}
		if j >= 0 {
			*list[j] = ne
			continue
		}
		if index != nil {
			index[k] = len(list)
		}
		d.entries = append(d.entries, ne)
		list = append(list, &d.entries[len(d.entries)-1])
	}
	d.list = list
	return list, nil
}

func timeOrZero(e *entry) time.Time {
	if !e.hasTime {
		return time.Time{}
	}
	return e.time.Time
}

// entryLess is the output order: operation, time, manager, apiVersion, subresource.
func entryLess(a, b *entry) bool {
	if a.key.operation != b.key.operation {
		return a.key.operation < b.key.operation
	}
	if ta, tb := timeOrZero(a), timeOrZero(b); !ta.Equal(tb) {
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

func entryCmp(a, b *entry) int {
	switch {
	case entryLess(a, b):
		return -1
	case entryLess(b, a):
		return 1
	}
	return 0
}

func sortEntries(list []*entry) {
	slices.SortStableFunc(list, entryCmp)
}

func isBucket(e *entry) bool {
	return e.key.manager == AncientChangesManager &&
		e.key.operation == resource.ManagedFieldsOperationUpdate && e.key.subresource == ""
}

// capUpdates folds the oldest Update entries into per-apiVersion AncientChangesManager
// entries until at most max Update entries remain (or nothing more can be folded).
func (d *differ) capUpdates(list []*entry, max int) []*entry {
	n := 0
	for _, e := range list {
		if e.key.operation == resource.ManagedFieldsOperationUpdate {
			n++
		}
	}
	if n <= max {
		return list
	}
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
		b.set.enc = d.ar.union(b.set.enc, e.set.enc)
		if timeOrZero(e).After(timeOrZero(b)) {
			b.time, b.hasTime = e.time, e.hasTime
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

// encodeEntries returns the entries as the API writes them, in fresh memory.
func encodeEntries(list []*entry) []resource.ManagedFieldsEntry {
	if len(list) == 0 {
		return nil
	}
	nt, size := 0, 0
	for _, e := range list {
		if e.hasTime {
			nt++
		}
		size += max(len(e.set.enc), 2)
	}
	out := make([]resource.ManagedFieldsEntry, len(list))
	var times []resource.Time
	if nt > 0 {
		times = make([]resource.Time, 0, nt)
	}
	buf := make([]byte, 0, size)
	for i, e := range list {
		var t *resource.Time
		if e.hasTime {
			times = append(times, e.time)
			t = &times[len(times)-1]
		}
		start := len(buf)
		if e.set.Empty() {
			buf = append(buf, "{}"...)
		} else {
			buf = append(buf, e.set.enc...)
		}
		out[i] = resource.ManagedFieldsEntry{
			Manager:     e.key.manager,
			Operation:   e.key.operation,
			APIVersion:  e.key.apiVersion,
			Time:        t,
			FieldsType:  resource.FieldsTypeV1,
			FieldsV1:    buf[start:len(buf):len(buf)],
			Subresource: e.key.subresource,
		}
	}
	return out
}
