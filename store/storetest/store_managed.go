package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func entryOf(t *testing.T, obj resource.Object, manager, subresource string) *resource.ManagedFieldsEntry {
	t.Helper()
	for i, e := range obj.GetObjectMeta().ManagedFields {
		if e.Manager == manager && e.Subresource == subresource {
			return &obj.GetObjectMeta().ManagedFields[i]
		}
	}
	return nil
}

// owns reports whether the entry's fieldsV1 holds the path, given as f: names.
func owns(t *testing.T, e *resource.ManagedFieldsEntry, path ...string) bool {
	t.Helper()
	if e == nil {
		return false
	}
	var node map[string]any
	require.NoError(t, json.Unmarshal(e.FieldsV1, &node))
	for _, p := range path {
		next, ok := node["f:"+p].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}

func as(manager string) store.WriteOptions { return store.WriteOptions{FieldManager: manager} }

func managedCases() []storeCase {
	return []storeCase{
		{name: "row56 create records an Update entry for the field manager", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A"
			p.Labels = map[string]string{"team": "red"}
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("kubectl")}))
			e := entryOf(t, p, "kubectl", "")
			require.NotNil(t, e, "%+v", p.ManagedFields)
			assert.Equal(t, resource.ManagedFieldsOperationUpdate, e.Operation)
			assert.Equal(t, "management.service/v1", e.APIVersion)
			assert.Equal(t, resource.FieldsTypeV1, e.FieldsType)
			require.NotNil(t, e.Time)
			assert.True(t, e.Time.Time.Equal(FixtureStart))
			assert.True(t, owns(t, e, "spec", "displayName"))
			assert.True(t, owns(t, e, "metadata", "labels", "team"))
			assert.False(t, owns(t, e, "metadata", "name"), "name is never tracked")
			q := Project("b")
			q.Spec.DisplayName = "B"
			h.MustCreate(q)
			assert.NotNil(t, entryOf(t, q, "unknown", ""), "no manager is recorded as unknown")
		}},
		{name: "row56 row57 two managers: a takeover moves the field and keeps the loser's time", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A"
			p.Spec.Description = "first"
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("alice")}))
			h.Clock.Step(time.Minute)
			p.Spec.Description = "second"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			alice, bob := entryOf(t, p, "alice", ""), entryOf(t, p, "bob", "")
			require.NotNil(t, alice)
			require.NotNil(t, bob)
			assert.True(t, owns(t, bob, "spec", "description"))
			assert.False(t, owns(t, alice, "spec", "description"), "the field moved to bob")
			assert.True(t, owns(t, alice, "spec", "displayName"))
			assert.True(t, alice.Time.Time.Equal(FixtureStart), "alice's time does not change when bob takes a field")
			assert.True(t, bob.Time.Time.Equal(FixtureStart.Add(time.Minute)))
			h.Clock.Step(time.Minute)
			before := p.ResourceVersion
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("carol")}))
			assert.Equal(t, before, p.ResourceVersion, "a write that changes nothing is no write")
			assert.Nil(t, entryOf(t, p, "carol", ""))
			p.Spec.DisplayName = ""
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			assert.False(t, owns(t, entryOf(t, p, "alice", ""), "spec", "displayName"), "a removed field leaves every entry")
			bob = entryOf(t, p, "bob", "")
			assert.True(t, bob.Time.Time.Equal(FixtureStart.Add(2*time.Minute)), "removing a field updates the remover's time")
		}},
		{name: "row56 a status write records subresource status", run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			v.Spec.DisplayName = "V" // a create that sets nothing leaves the object untracked
			h.MustCreate(v)
			v.Status.Phase = resource.InstancePhaseReady
			require.NoError(t, h.S.UpdateStatus(h.Ctx, v, store.UpdateOptions{WriteOptions: as("controller")}))
			e := entryOf(t, v, "controller", "status")
			require.NotNil(t, e)
			assert.True(t, owns(t, e, "status", "phase"))
		}},
		{name: "row57 at most ten Update entries, the oldest fold into one", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A" // a create that sets nothing leaves the object untracked
			h.MustCreate(p)
			for i := 0; i < 14; i++ {
				h.Clock.Step(time.Second)
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels[fmt.Sprintf("l%d", i)] = "x"
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as(fmt.Sprintf("m%02d", i))}))
			}
			updates := 0
			for _, e := range p.ManagedFields {
				if e.Operation == resource.ManagedFieldsOperationUpdate {
					updates++
				}
			}
			assert.LessOrEqual(t, updates, 10)
			assert.NotNil(t, entryOf(t, p, "m13", ""), "the newest manager is kept")
			assert.NotNil(t, entryOf(t, p, "ancient-changes", ""))
		}},
		{name: "row57 an object without managedFields is not tracked by updates (skipNonAppliedManager)", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			require.Empty(t, p.ManagedFields, "the create set no field")
			p.Spec.DisplayName = "A"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			assert.Empty(t, p.ManagedFields)
			v := Instance("p-a", "v")
			v.Spec.DisplayName = "V"
			h.MustCreate(v)
			require.NotEmpty(t, v.ManagedFields, "a create is tracked")
		}},
		{name: "row57 [{}] resets managedFields, [] and malformed entries are ignored", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A"
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("alice")}))
			p.ManagedFields = []resource.ManagedFieldsEntry{}
			p.Spec.Description = "d"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			require.NotNil(t, entryOf(t, p, "alice", ""), "[] is ignored: alice stays")
			require.NotNil(t, entryOf(t, p, "bob", ""))
			p.ManagedFields = []resource.ManagedFieldsEntry{{Manager: "x", Operation: "Sideways", FieldsType: "FieldsV1", FieldsV1: json.RawMessage(`{}`)}}
			p.Spec.Description = "e"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			require.NotNil(t, entryOf(t, p, "alice", ""), "an invalid entry is ignored")
			assert.Nil(t, entryOf(t, p, "x", ""))
			p.ManagedFields = []resource.ManagedFieldsEntry{{Manager: "x", Operation: "Update", FieldsType: "FieldsV1", FieldsV1: json.RawMessage(`{"f:spec":5}`)}}
			p.Spec.Description = "f"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			require.NotNil(t, entryOf(t, p, "alice", ""), "undecodable fieldsV1 is ignored")
			p.ManagedFields = []resource.ManagedFieldsEntry{{}}
			p.Spec.Description = "g"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			assert.Empty(t, p.ManagedFields, "[{}] resets, and the write itself is not tracked (kube's skipNonAppliedManager)")
			p.Spec.Description = "h"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			assert.Empty(t, p.ManagedFields, "updates do not track an object without managedFields")
		}},
	}
}
