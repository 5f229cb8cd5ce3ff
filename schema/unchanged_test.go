package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// storedInstance is a VirtualClusterInstance as the store holds it: n labels and
// the managedFields entry that lists them.
func storedInstance(n int) string {
	var labels, fields strings.Builder
	for i := range n {
		if i > 0 {
			labels.WriteByte(',')
			fields.WriteByte(',')
		}
		fmt.Fprintf(&labels, `"l%05d":"%d"`, i, i%10)
		fmt.Fprintf(&fields, `"f:l%05d":{}`, i)
	}
	return `{"kind":"VirtualClusterInstance","apiVersion":"management.service/v1","metadata":{"name":"big",` +
		`"namespace":"p-a","uid":"u-1","generation":1,"creationTimestamp":"2025-01-02T03:04:05Z","labels":{` +
		labels.String() + `},"managedFields":[{"manager":"m","operation":"Update","apiVersion":"management.service/v1",` +
		`"time":"2025-01-02T03:04:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},` +
		fields.String() + `}},"f:spec":{".":{},"f:displayName":{}}}}]},"spec":{"displayName":"big","clusterRef":{"cluster":"c1"}}}`
}

// TestValidUnchanged checks the validation of an update against the stored object:
// it shows valid what a full validation finds valid, never what it finds invalid,
// and never takes what the store writes after admission as unchanged.
func TestValidUnchanged(t *testing.T) {
	v := validatorOf(t, resource.KindVirtualClusterInstance)
	old := storedInstance(50)
	require.NoError(t, v.ValidateJSON([]byte(old)))
	withRV := strings.Replace(old, `"uid":"u-1",`, `"uid":"u-1","resourceVersion":"7",`, 1)
	badFields := strings.Replace(old, `"operation":"Update"`, `"operation":"Bad"`, 1)
	for _, tc := range []struct {
		name     string
		old, new string
		shown    bool
	}{
		{"the same object", old, withRV, true},
		{"one label changed", old, strings.Replace(withRV, `"l00007":"7"`, `"l00007":"x"`, 1), true},
		{"a label added", old, strings.Replace(withRV, `"l00007":"7"`, `"l00007":"7","new":"v"`, 1), true},
		{"a label removed", old, strings.Replace(withRV, `"l00007":"7",`, ``, 1), true},
		{"an invalid label value", old, strings.Replace(withRV, `"l00007":"7"`, `"l00007":"not valid!"`, 1), false},
		{"an invalid label key", old, strings.Replace(withRV, `"l00007":"7"`, `"-bad-":"7"`, 1), false},
		{"an invalid spec", old, strings.Replace(withRV, `"displayName":"big"`, `"displayName":5`, 1), false},
		{"name removed", old, strings.Replace(withRV, `"name":"big",`, ``, 1), false},
		{"an unknown metadata field", old, strings.Replace(withRV, `"name":"big",`, `"name":"big","x":1,`, 1), false},
		{"managedFields are not taken as validated", badFields, badFields, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := v.validUnchanged([]byte(tc.new), []byte(tc.old))
			assert.Equal(t, tc.shown, got)
			assert.Equal(t, tc.shown, v.ValidateJSON([]byte(tc.new)) == nil, "the full validation disagrees with the case")
		})
	}
}

// hasDuplicateKeys reports whether a valid JSON document has an object with a key
// twice (the store never writes one).
func hasDuplicateKeys(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, err := d.Token()
				if err != nil || seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		case json.Delim('['):
			for d.More() {
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		}
		return false
	}
	return walk()
}

// FuzzValidUnchanged holds the validation against the stored object to the full
// validation: for any stored object that passes (without duplicate keys, as the
// store writes it) and any new object, validUnchanged shows the new one valid only
// when the full validation finds it valid.
func FuzzValidUnchanged(f *testing.F) {
	old := storedInstance(3)
	f.Add([]byte(old), []byte(old), uint8(0))
	f.Add([]byte(old), []byte(strings.Replace(old, `"l00001":"1"`, `"l00001":"x"`, 1)), uint8(0))
	f.Add([]byte(old), []byte(strings.Replace(old, `"l00001":"1"`, `"l00001":"-"`, 1)), uint8(0))
	f.Add([]byte(tokenFullScope), []byte(tokenFullScope), uint8(1))
	f.Add([]byte(projectMinimal), []byte(projectMinimal), uint8(2))
	reg := NewRegistry()
	kinds := reg.Kinds()
	validators := make([]*Validator, len(kinds))
	for i, k := range kinds {
		validators[i], _ = reg.Validator(k)
	}
	f.Fuzz(func(t *testing.T, oldDoc, newDoc []byte, k uint8) {
		v := validators[int(k)%len(validators)]
		if !json.Valid(oldDoc) || !json.Valid(newDoc) || hasDuplicateKeys(oldDoc) || v.ValidateJSON(oldDoc) != nil {
			return
		}
		if v.validUnchanged(newDoc, oldDoc) {
			require.NoError(t, v.ValidateJSON(newDoc), "shown valid against %s", oldDoc)
		}
	})
}

// newAdmittedStore opens a store on be with the schema admission hook a (none when
// nil).
func newAdmittedStore(t *testing.T, be *memdb.Backend, a *Admitter) *store.Store {
	opts := store.Options{}
	if a != nil {
		opts.Validating = []store.ValidatingAdmitter{a}
	}
	s, err := store.New(be, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestAdmitter_validates_what_an_update_changed checks the admitter end to end: an
// object it let through is then validated against its stored version (and the
// answers are those of a full validation), and an object it did not let through is
// validated whole, invalid fields it did not change included: no ratcheting.
func TestAdmitter_validates_what_an_update_changed(t *testing.T) {
	ctx := context.Background()
	newInstance := func(label string) *resource.VirtualClusterInstance {
		o := &resource.VirtualClusterInstance{}
		o.Namespace, o.Name = "p-a", "vc"
		o.Labels = map[string]string{"a": label, "b": "2"}
		o.Spec.ClusterRef.Cluster = "c1"
		return o
	}
	t.Run("an object it let through", func(t *testing.T) {
		be := memdb.New(memdb.Options{})
		t.Cleanup(func() { _ = be.Close() })
		a := NewAdmitter(nil)
		s := newAdmittedStore(t, be, a)
		o := newInstance("1")
		require.NoError(t, s.Create(ctx, o, store.CreateOptions{}))
		v, _ := a.registry.Validator(gvkOf(resource.KindVirtualClusterInstance))
		require.True(t, a.known.passed(knownKey(v.gvk, o), o.ResourceVersion, v), "the create was not remembered")

		o.Labels["a"] = "x"
		require.NoError(t, s.Update(ctx, o, store.UpdateOptions{}))
		require.True(t, a.known.passed(knownKey(v.gvk, o), o.ResourceVersion, v), "the update was not remembered")
		rv := o.ResourceVersion
		require.NoError(t, s.Update(ctx, o, store.UpdateOptions{})) // changes nothing
		require.Equal(t, rv, o.ResourceVersion)
		require.True(t, a.known.passed(knownKey(v.gvk, o), rv, v), "an update that changed nothing lost the record")

		whole := NewAdmitter(nil)
		whole.wholeAlways = true
		for _, change := range []func(o *resource.VirtualClusterInstance){
			func(o *resource.VirtualClusterInstance) { o.Spec.ClusterRef.Namespace = "A_B" },
			func(o *resource.VirtualClusterInstance) { o.Spec.TemplateRef = &resource.TemplateRef{Version: "1"} },
		} {
			bad := o.DeepCopyResource().(*resource.VirtualClusterInstance)
			change(bad)
			err := s.Update(ctx, bad, store.UpdateOptions{})
			require.ErrorIs(t, err, resource.ErrInvalid)
			// The same answer as a full validation.
			want := whole.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationUpdate, Object: bad, OldObject: o})
			assert.Equal(t, resource.StatusOf(want), resource.StatusOf(err))
		}
	})
	t.Run("an object it did not let through", func(t *testing.T) {
		be := memdb.New(memdb.Options{})
		t.Cleanup(func() { _ = be.Close() })
		o := newInstance("1")
		o.Spec.ClusterRef.Namespace = "A_B" // invalid under the schema only
		plain := newAdmittedStore(t, be, nil)
		require.NoError(t, plain.Create(ctx, o, store.CreateOptions{}))
		require.NoError(t, plain.Close())

		s := newAdmittedStore(t, be, NewAdmitter(nil))
		o.Spec.DisplayName = "renamed" // the invalid field is not touched
		err := s.Update(ctx, o, store.UpdateOptions{})
		require.ErrorIs(t, err, resource.ErrInvalid)
		assert.Equal(t, "spec.clusterRef.namespace", resource.StatusOf(err).Details.Causes[0].Field)
	})
}

// TestValidUnchanged_random_edits makes random small edits to a stored object
// (labels set, added and removed, valid or not; spec and status fields; the
// managedFields) and checks each against the full validation: the walk never shows
// valid what the full validation refuses, and, for a document without duplicate
// keys, shows valid what it accepts.
func TestValidUnchanged_random_edits(t *testing.T) {
	v := validatorOf(t, resource.KindVirtualClusterInstance)
	old := storedInstance(40)
	require.NoError(t, v.ValidateJSON([]byte(old)))
	values := []string{`"x"`, `""`, `"not valid!"`, `5`, `null`, `{}`, `"-a"`, `"a.b_c"`, `"` + strings.Repeat("v", 64) + `"`}
	edits := []func(r int, doc string) string{
		func(r int, doc string) string { // set a label
			return strings.Replace(doc, fmt.Sprintf(`"l%05d":"%d"`, r%40, r%40%10), fmt.Sprintf(`"l%05d":%s`, r%40, values[r%len(values)]), 1)
		},
		func(r int, doc string) string { // add a label
			keys := []string{`"new"`, `"a/b"`, `"-bad"`, `"` + strings.Repeat("k", 64) + `"`, `"example.com/x"`}
			return strings.Replace(doc, `"labels":{`, `"labels":{`+keys[r%len(keys)]+`:`+values[r%len(values)]+`,`, 1)
		},
		func(r int, doc string) string { // remove a label
			return strings.Replace(doc, fmt.Sprintf(`"l%05d":"%d",`, r%39, r%39%10), ``, 1)
		},
		func(r int, doc string) string { // a spec field
			fields := []string{`"displayName"`, `"description"`, `"bogus"`, `"clusterRef"`, `"templateRef"`}
			return strings.Replace(doc, `"spec":{`, `"spec":{`+fields[r%len(fields)]+`:`+values[r%len(values)]+`,`, 1)
		},
		func(r int, doc string) string { // a status
			phases := []string{`"Ready"`, `"Running"`, `5`, `null`}
			return strings.Replace(doc, `"spec":{`, `"status":{"phase":`+phases[r%len(phases)]+`},"spec":{`, 1)
		},
		func(r int, doc string) string { // the managedFields
			ops := []string{`"Apply"`, `"Bad"`, `"Update"`}
			return strings.Replace(doc, `"operation":"Update"`, `"operation":`+ops[r%len(ops)], 1)
		},
		func(r int, doc string) string { // a FieldsV1 key
			keys := []string{`"f:x"`, `"x"`, `"."`, `"k:{}"`}
			return strings.Replace(doc, `"f:l00003":{}`, keys[r%len(keys)]+`:{}`, 1)
		},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	agree := 0
	for i := range 1500 {
		doc := strings.Replace(old, `"uid":"u-1",`, `"uid":"u-1","resourceVersion":"7",`, 1)
		for range 1 + rnd.IntN(3) {
			doc = edits[rnd.IntN(len(edits))](rnd.IntN(1000), doc)
		}
		full := v.ValidateJSON([]byte(doc)) == nil
		shown := v.validUnchanged([]byte(doc), []byte(old))
		require.False(t, shown && !full, "edit %d shown valid, refused by the full validation: %s", i, doc)
		if !hasDuplicateKeys([]byte(doc)) { // (the store's encoding has none; the walk does not resolve them)
			require.Equal(t, full, shown, "edit %d: the full validation accepts it, the walk does not show it: %s", i, doc)
		}
		if full {
			agree++
		}
	}
	assert.Greater(t, agree, 150, "too few valid edits to test anything")
}
