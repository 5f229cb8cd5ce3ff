package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/managedfields"
)

// equivTypes is a Project-like shape: a typed spec with an atomic list, labels, and
// a granular list that the generated objects never fill.
type equivTypes struct{}

func (equivTypes) FieldType(resource.GroupVersionKind) *FieldType {
	sc := &FieldType{Kind: FieldScalar}
	return &FieldType{Kind: FieldObject, Fields: map[string]*FieldType{
		"spec": {Kind: FieldObject, Fields: map[string]*FieldType{
			"displayName": sc, "description": sc,
			"owner":    {Kind: FieldObject, Fields: map[string]*FieldType{"user": sc, "team": sc}},
			"clusters": {Kind: FieldList, Elem: sc},
			"zones":    {Kind: FieldList, Elem: sc, ListType: ListSet},
		}},
		"status": {Kind: FieldObject, Fields: map[string]*FieldType{"phase": sc}},
	}}
}

// randomObject is an encoded object of the equivTypes shape with no set or map
// list filled.
func randomObject(r *rand.Rand) []byte {
	obj := map[string]any{"apiVersion": "management.service/v1", "kind": "Project"}
	meta := map[string]any{"name": "a", "uid": "u", "resourceVersion": "7"}
	if r.IntN(2) == 0 {
		labels := map[string]any{}
		for i := range r.IntN(3) {
			labels[fmt.Sprintf("l%d", i)] = fmt.Sprint(r.IntN(2))
		}
		meta["labels"] = labels
	}
	obj["metadata"] = meta
	if r.IntN(4) > 0 {
		spec := map[string]any{}
		if r.IntN(2) == 0 {
			spec["displayName"] = fmt.Sprint("d", r.IntN(2))
		}
		if r.IntN(3) == 0 {
			spec["description"] = ""
		}
		if r.IntN(3) == 0 {
			owner := map[string]any{}
			if r.IntN(2) == 0 {
				owner["user"] = fmt.Sprint("u", r.IntN(2))
			}
			spec["owner"] = owner
		}
		if r.IntN(3) == 0 {
			var l []any
			for i := range r.IntN(3) {
				l = append(l, fmt.Sprint("c", i+r.IntN(2)))
			}
			spec["clusters"] = l
		}
		if r.IntN(4) == 0 {
			spec["zones"] = []any{}
		}
		obj["spec"] = spec
	}
	if r.IntN(3) == 0 {
		obj["status"] = map[string]any{"phase": fmt.Sprint("p", r.IntN(2))}
	}
	b, _ := json.Marshal(obj)
	return b
}

// TestTypedUpdateMatchesTheFastPath checks the claim trackFields rests on: for
// objects without a filled set or map list, structured-merge-diff records exactly
// what package managedfields records, for creates, updates and status updates,
// over a chain of writes by several managers.
func TestTypedUpdateMatchesTheFastPath(t *testing.T) {
	k := &resource.KindInfo{Group: "management.service", Version: "v1", Kind: "Project", HasStatus: true}
	var c kindTypes
	kt, err := c.get(k, equivTypes{})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for chain := 0; chain < 1000; chain++ {
		var old []byte
		var entries []resource.ManagedFieldsEntry
		for step := 0; step < 6; step++ {
			next := randomObject(r)
			sub := ""
			if old != nil && r.IntN(4) == 0 {
				sub = "status"
			}
			if old != nil {
				// As the store writes them: a status write changes only status, a
				// main-resource write keeps the stored status.
				next = keepStatus(old, next, sub == "status")
			}
			manager := fmt.Sprint("m", r.IntN(3))
			now = now.Add(time.Second)
			fast, err := managedfields.Update(entries, old, next, managedfields.Write{Manager: manager,
				APIVersion: "management.service/v1", Subresource: sub, Now: now, StatusSubresource: true})
			require.NoError(t, err)
			typed, err := typedUpdate(kt, k, entries, old, next, managerKey{manager: manager,
				operation: resource.ManagedFieldsOperationUpdate, apiVersion: "management.service/v1", subresource: sub}, now)
			require.NoError(t, err)
			fj, _ := json.Marshal(fast)
			tj, _ := json.Marshal(typed)
			ej, _ := json.Marshal(entries)
			if !assert.JSONEq(t, string(fj), string(tj), "chain %d step %d: %s -> %s by %s/%s from %s", chain, step, old, next, manager, sub, ej) {
				return
			}
			entries, old = fast, next
		}
	}
}

// keepStatus returns next with, for a status write, everything but status from
// old, and otherwise old's status.
func keepStatus(old, next []byte, statusWrite bool) []byte {
	var o, n map[string]any
	_ = json.Unmarshal(old, &o)
	_ = json.Unmarshal(next, &n)
	if statusWrite {
		o["status"] = n["status"]
		if n["status"] == nil {
			delete(o, "status")
		}
		n = o
	} else {
		n["status"] = o["status"]
		if o["status"] == nil {
			delete(n, "status")
		}
	}
	b, _ := json.Marshal(n)
	return b
}
