package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
	"github.com/management-service/mgmt/store/internal/managedfields"
)

// BeforeFirstApplyManager is the manager of the Update entry that takes over every
// field of an object that has no managedFields when it is first applied to, as
// Kubernetes records it.
const BeforeFirstApplyManager = "before-first-apply"

// managerKey identifies a managedFields entry: Apply entries by manager and
// subresource, Update entries also by apiVersion (Kubernetes' manager identifier).
type managerKey struct {
	manager, operation, apiVersion, subresource string
}

func (m managerKey) String() string {
	return strings.Join([]string{m.manager, m.operation, m.apiVersion, m.subresource}, "\x00")
}

func keyOfEntry(e resource.ManagedFieldsEntry) managerKey {
	k := managerKey{manager: e.Manager, operation: e.Operation, apiVersion: e.APIVersion, subresource: e.Subresource}
	if k.operation == resource.ManagedFieldsOperationApply {
		k.apiVersion = ""
	}
	return k
}

// managers is a decoded list of managedFields entries.
type managers struct {
	sets  fieldpath.ManagedFields
	keys  map[string]managerKey
	times map[string]*resource.Time
}

// decodeManagers parses entries (a repeated key: the last one wins).
func decodeManagers(entries []resource.ManagedFieldsEntry) (*managers, error) {
	m := &managers{sets: fieldpath.ManagedFields{}, keys: map[string]managerKey{}, times: map[string]*resource.Time{}}
	for i, e := range entries {
		switch e.Operation {
		case resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate:
		default:
			return nil, &managedfields.EntryError{Index: i, Manager: e.Manager,
				Field: fmt.Sprintf("metadata.managedFields[%d].operation", i),
				Err:   fmt.Errorf("must be %q or %q", resource.ManagedFieldsOperationApply, resource.ManagedFieldsOperationUpdate)}
		}
		set := fieldpath.NewSet()
		if fv := bytes.TrimSpace(e.FieldsV1); len(fv) > 0 && !bytes.Equal(fv, []byte("null")) {
			if err := set.FromJSON(bytes.NewReader(fv)); err != nil {
				return nil, &managedfields.EntryError{Index: i, Manager: e.Manager,
					Field: fmt.Sprintf("metadata.managedFields[%d].fieldsV1", i), Err: err}
			}
		}
		k := keyOfEntry(e)
		id := k.String()
		k.apiVersion = e.APIVersion
		m.keys[id] = k
		m.sets[id] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(e.APIVersion), e.Operation == resource.ManagedFieldsOperationApply)
		if e.Time != nil && !e.Time.IsZero() {
			t := *e.Time
			m.times[id] = &t
		} else {
			delete(m.times, id)
		}
	}
	return m, nil
}

// add records the key of a manager that a write adds.
func (m *managers) add(k managerKey) string {
	id := k.String()
	if _, ok := m.keys[id]; !ok {
		m.keys[id] = k
	}
	return id
}

// encode returns the entries, with at most MaxUpdateEntries Update entries (older
// ones folded into ancient-changes per apiVersion), sorted as Kubernetes sorts them.
func (m *managers) encode() ([]resource.ManagedFieldsEntry, error) {
	out := make([]resource.ManagedFieldsEntry, 0, len(m.sets))
	for id, vs := range m.sets {
		if vs.Set().Empty() {
			continue
		}
		k := m.keys[id]
		k.apiVersion = string(vs.APIVersion())
		fv, err := vs.Set().ToJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, resource.ManagedFieldsEntry{Manager: k.manager, Operation: k.operation,
			APIVersion: k.apiVersion, Time: m.times[id], FieldsType: resource.FieldsTypeV1,
			FieldsV1: fv, Subresource: k.subresource})
	}
	sortManaged(out)
	out, err := capUpdateEntries(out)
	if len(out) == 0 {
		return nil, err
	}
	return out, err
}

func entryTime(e resource.ManagedFieldsEntry) time.Time {
	if e.Time == nil {
		return time.Time{}
	}
	return e.Time.Time
}

// sortManaged sorts entries by operation (Apply first), time, manager, apiVersion and
// subresource.
func sortManaged(es []resource.ManagedFieldsEntry) {
	slices.SortStableFunc(es, func(a, b resource.ManagedFieldsEntry) int {
		if c := strings.Compare(a.Operation, b.Operation); c != 0 {
			return c
		}
		if c := entryTime(a).Compare(entryTime(b)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Manager, b.Manager); c != 0 {
			return c
		}
		if c := strings.Compare(a.APIVersion, b.APIVersion); c != 0 {
			return c
		}
		return strings.Compare(a.Subresource, b.Subresource)
	})
}

// capUpdateEntries folds the oldest Update entries of sorted es into an
// ancient-changes entry of their apiVersion until at most MaxUpdateEntries Update
// entries remain; Apply entries are never folded. As in Kubernetes, the first entry
// of an apiVersion to be folded becomes its bucket.
func capUpdateEntries(es []resource.ManagedFieldsEntry) ([]resource.ManagedFieldsEntry, error) {
	n := 0
	for _, e := range es {
		if e.Operation == resource.ManagedFieldsOperationUpdate {
			n++
		}
	}
	if n <= managedfields.MaxUpdateEntries {
		return es, nil
	}
	buckets := map[string]int{}
	for i, e := range es {
		if e.Operation == resource.ManagedFieldsOperationUpdate && e.Manager == managedfields.AncientChangesManager && e.Subresource == "" {
			buckets[e.APIVersion] = i
		}
	}
	first := map[string]int{}
	folded := map[int]bool{}
	for i, e := range es {
		if n <= managedfields.MaxUpdateEntries {
			break
		}
		if e.Operation != resource.ManagedFieldsOperationUpdate {
			continue
		}
		if b, ok := buckets[e.APIVersion]; ok && b == i {
			continue
		}
		b, ok := buckets[e.APIVersion]
		if !ok {
			f, seen := first[e.APIVersion]
			if !seen {
				first[e.APIVersion] = i
				continue
			}
			es[f].Manager, es[f].Subresource = managedfields.AncientChangesManager, ""
			buckets[e.APIVersion], b = f, f
		}
		union, err := unionFields(es[b].FieldsV1, e.FieldsV1)
		if err != nil {
			return nil, err
		}
		es[b].FieldsV1 = union
		if entryTime(e).After(entryTime(es[b])) {
			es[b].Time = e.Time
		}
		folded[i] = true
		n--
	}
	out := es[:0]
	for i, e := range es {
		if !folded[i] {
			out = append(out, e)
		}
	}
	sortManaged(out)
	return out, nil
}

func unionFields(a, b []byte) ([]byte, error) {
	sa, sb := fieldpath.NewSet(), fieldpath.NewSet()
	if err := sa.FromJSON(bytes.NewReader(a)); err != nil {
		return nil, err
	}
	if err := sb.FromJSON(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return sa.Union(sb).ToJSON()
}

// stripPaths are never recorded in any entry.
var stripPaths = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "deletionTimestamp"),
	fieldpath.MakePathOrDie("metadata", "deletionGracePeriodSeconds"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
)

var statusPath = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))

// scopeFilter drops from a set what a write never records: the strip paths, and
// status on the main resource of a kind with a status subresource, or everything
// but status on the status subresource.
type scopeFilter struct {
	onlyStatus, ignoreStatus bool
}

func (f scopeFilter) Filter(s *fieldpath.Set) *fieldpath.Set {
	// RecursiveDifference would drop all of metadata with "metadata": drop the
	// member paths one by one instead.
	s = s.Difference(stripPaths)
	switch {
	case f.onlyStatus:
		s = onlyUnder(s, "status")
	case f.ignoreStatus:
		s = s.RecursiveDifference(statusPath)
	}
	return s
}

// onlyUnder keeps the paths of s at or below the top-level field name.
func onlyUnder(s *fieldpath.Set, name string) *fieldpath.Set {
	out := fieldpath.NewSet()
	s.Iterate(func(p fieldpath.Path) {
		if len(p) > 0 && p[0].FieldName != nil && *p[0].FieldName == name {
			out.Insert(p.Copy())
		}
	})
	return out
}

func scopeFilterOf(k *resource.KindInfo, subresource string) scopeFilter {
	if subresource == "status" {
		return scopeFilter{onlyStatus: true}
	}
	return scopeFilter{ignoreStatus: subresource == "" && k.HasStatus}
}

// sameVersion is the converter of a store with one version per kind.
type sameVersion struct{}

func (sameVersion) Convert(o *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return o, nil
}
func (sameVersion) IsMissingVersionError(error) bool { return false }

// updaterFor returns an updater that filters every apiVersion the managers use.
func updaterFor(f scopeFilter, m *managers, version string) *merge.Updater {
	filters := map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(version): f}
	for _, vs := range m.sets {
		filters[vs.APIVersion()] = f
	}
	return (&merge.UpdaterBuilder{Converter: sameVersion{}, IgnoreFilter: filters, ReturnInputOnNoop: false}).BuildUpdater()
}

// decodeValue decodes JSON for structured-merge-diff: numbers that are integers
// stay exact int64s.
func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
	}
	return v
}

// typedOf parses an encoded object with kt; nil data is the empty object.
func typedOf(kt *kindType, data []byte, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	if data == nil {
		return kt.pt.FromUnstructured(map[string]any{}, opts...)
	}
	v, err := decodeValue(data)
	if err != nil {
		return nil, err
	}
	return kt.pt.FromUnstructured(v, opts...)
}

// hasGranularLists reports whether the encoded object b (compact JSON, as the store
// encodes it) has a non-empty set or map list where kt says one may be. It first
// looks for a member of one of their names that is a non-empty array anywhere in b,
// which takes one pass over the (few) arrays; only when it finds one does it walk
// the object.
func hasGranularLists(kt *kindType, b []byte) bool {
	if kt.granular == nil || len(b) == 0 || !mayHaveList(kt.listNames, b) {
		return false
	}
	return walkGranular(kt.granular, b)
}

// mayHaveList reports whether b has a member named one of names whose value is a
// non-empty array, at any depth (or text inside a string that looks like one).
func mayHaveList(names []string, b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '[')
		if j < 0 {
			return false
		}
		i += j + 1
		if i >= len(b) || b[i] == ']' || i < 4 || b[i-2] != ':' || b[i-3] != '"' {
			continue
		}
		start := bytes.LastIndexByte(b[:i-3], '"')
		if start < 0 {
			continue
		}
		key := b[start+1 : i-3]
		for _, n := range names {
			if string(key) == n {
				return true
			}
		}
	}
}

// walkGranular reports whether the encoded object b has a non-empty set or map
// list where n says one may be.
func walkGranular(n *granularNode, b []byte) bool {
	if n == nil || len(b) == 0 {
		return false
	}
	found := false
	jsonscan.EachMember(b, func(key, v []byte) bool {
		for _, l := range n.lists {
			if string(key) == l && len(v) > 0 && v[0] == '[' && jsonscan.SkipSpace(v, 1) < len(v) && v[jsonscan.SkipSpace(v, 1)] != ']' {
				found = true
				return false
			}
		}
		if c := n.children[string(key)]; c != nil && len(v) > 0 && v[0] == '{' && walkGranular(c, v) {
			found = true
			return false
		}
		return true
	})
	return found
}

// typedUpdate records an update of oldData (nil: a create) to newData by writer in
// entries with structured-merge-diff, for objects whose lists need its merge rules.
func typedUpdate(kt *kindType, k *resource.KindInfo, entries []resource.ManagedFieldsEntry, oldData, newData []byte,
	writer managerKey, now time.Time) ([]resource.ManagedFieldsEntry, error) {
	oldTV, err := typedOf(kt, oldData, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	newTV, err := typedOf(kt, newData, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	m, err := decodeManagers(entries)
	if err != nil {
		return nil, err
	}
	f := scopeFilterOf(k, writer.subresource)
	if err := m.update(f, oldTV, newTV, writer, now); err != nil {
		return nil, err
	}
	return m.encode()
}

// update records in m the write of oldTV to newTV by writer; its time becomes now
// when the write changed anything it records.
func (m *managers) update(f scopeFilter, oldTV, newTV *typed.TypedValue, writer managerKey, now time.Time) error {
	cmp, err := oldTV.Compare(newTV)
	if err != nil {
		return err
	}
	id := m.add(writer)
	_, sets, err := updaterFor(f, m, writer.apiVersion).Update(oldTV, newTV, fieldpath.APIVersion(writer.apiVersion), m.sets, id)
	if err != nil {
		return err
	}
	m.sets = sets
	if c := cmp.FilterFields(f); !c.IsSame() {
		t := resource.NewTime(now)
		m.times[id] = &t
	}
	return nil
}
