package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// ref returns an owner reference to obj.
func ref(obj resource.Object, block bool) resource.OwnerReference {
	m := obj.GetObjectMeta()
	tm := obj.GetTypeMeta()
	r := resource.OwnerReference{APIVersion: tm.APIVersion, Kind: tm.Kind, Name: m.Name, UID: m.UID}
	if block {
		r.BlockOwnerDeletion = ptr(true)
	}
	return r
}

type denyOwners struct{}

func (denyOwners) CanDeleteOwner(_ context.Context, user *store.UserInfo, owner resource.OwnerReference, _ string) (bool, error) {
	return user != nil && user.Name == "admin", nil
}

func gcCases() []storeCase {
	return []storeCase{
		{name: "row35 two controller references are 422", run: func(t *testing.T, h *Harness) {
			a, b := Project("a"), Project("b")
			h.MustCreate(a)
			h.MustCreate(b)
			c := Project("c")
			ra, rb := ref(a, false), ref(b, false)
			ra.Controller, rb.Controller = ptr(true), ptr(true)
			c.OwnerReferences = []resource.OwnerReference{ra, rb}
			RequireReason(t, h.S.Create(h.Ctx, c, store.CreateOptions{}), resource.ReasonInvalid)
		}},
		{name: "row36 blockOwnerDeletion by a caller who may not delete the owner is 422",
			opts: func(o *store.Options) { o.OwnerAuthorizer = denyOwners{} },
			run: func(t *testing.T, h *Harness) {
				owner := Project("owner")
				h.MustCreate(owner)
				dep := Instance("p-owner", "dep")
				dep.OwnerReferences = []resource.OwnerReference{ref(owner, true)}
				err := h.S.Create(h.Ctx, dep, store.CreateOptions{WriteOptions: store.WriteOptions{User: &store.UserInfo{Name: "bob"}}})
				RequireCause(t, err, "metadata.ownerReferences[0].blockOwnerDeletion", resource.CauseFieldValueInvalid)
				dep.OwnerReferences = []resource.OwnerReference{ref(owner, false)}
				require.NoError(t, h.S.Create(h.Ctx, dep, store.CreateOptions{WriteOptions: store.WriteOptions{User: &store.UserInfo{Name: "bob"}}}))
				dep.OwnerReferences[0].BlockOwnerDeletion = ptr(true)
				err = h.S.Update(h.Ctx, dep, store.UpdateOptions{WriteOptions: store.WriteOptions{User: &store.UserInfo{Name: "bob"}}})
				RequireCause(t, err, "metadata.ownerReferences[0].blockOwnerDeletion", resource.CauseFieldValueInvalid)
				require.NoError(t, h.S.Update(h.Ctx, dep, store.UpdateOptions{WriteOptions: store.WriteOptions{User: &store.UserInfo{Name: "admin"}}}))
			}},
		{name: "row37 row38 background deletion collects dependents three levels deep", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			b := Instance("p-a", "b")
			b.OwnerReferences = []resource.OwnerReference{ref(a, false)}
			h.MustCreate(b)
			c := Instance("p-a", "c")
			c.OwnerReferences = []resource.OwnerReference{ref(b, false)}
			h.MustCreate(c)
			removed, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{})
			require.NoError(t, err)
			assert.True(t, removed)
			h.Settle()
			assert.False(t, h.Exists(Instance("", ""), "p-a", "b"))
			assert.False(t, h.Exists(Instance("", ""), "p-a", "c"))
		}},
		{name: "row38 a dependent with one owner gone and one alive loses the dangling reference and lives", run: func(t *testing.T, h *Harness) {
			a, b := Project("a"), Project("b")
			h.MustCreate(a)
			h.MustCreate(b)
			d := Project("d")
			d.OwnerReferences = []resource.OwnerReference{ref(a, false), ref(b, false)}
			h.MustCreate(d)
			_, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{})
			require.NoError(t, err)
			h.Settle()
			got := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "d", got, store.GetOptions{}))
			require.Len(t, got.OwnerReferences, 1)
			assert.Equal(t, "b", got.OwnerReferences[0].Name)
		}},
		{name: "row38 an owner recreated with a new uid counts as gone", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			d := Project("d")
			d.OwnerReferences = []resource.OwnerReference{ref(a, false)}
			staleRef := d.OwnerReferences[0]
			_, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{})
			require.NoError(t, err)
			h.MustCreate(Project("a"))
			d.OwnerReferences = []resource.OwnerReference{staleRef}
			h.MustCreate(d)
			h.Settle()
			assert.False(t, h.Exists(Project(""), "", "d"))
			assert.True(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row37 orphan propagation strips the reference from dependents then removes the owner", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			d := Instance("p-a", "d")
			d.OwnerReferences = []resource.OwnerReference{ref(a, false)}
			h.MustCreate(d)
			removed, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{PropagationPolicy: store.DeletePropagationOrphan})
			require.NoError(t, err)
			assert.False(t, removed)
			assert.Contains(t, a.Finalizers, store.FinalizerOrphan)
			h.Settle()
			assert.False(t, h.Exists(Project(""), "", "a"))
			got := Instance("", "")
			require.NoError(t, h.S.Get(h.Ctx, "p-a", "d", got, store.GetOptions{}))
			assert.Empty(t, got.OwnerReferences)
		}},
		{name: "row37 foreground deletion keeps the owner until blocking dependents are gone", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			d := Instance("p-a", "d")
			d.OwnerReferences = []resource.OwnerReference{ref(a, true)}
			d.Finalizers = []string{"example.com/cleanup"}
			h.MustCreate(d)
			removed, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{PropagationPolicy: store.DeletePropagationForeground})
			require.NoError(t, err)
			assert.False(t, removed)
			assert.Contains(t, a.Finalizers, store.FinalizerForegroundDeletion)
			h.Settle()
			owner := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", owner, store.GetOptions{}))
			assert.NotNil(t, owner.DeletionTimestamp, "the owner stays, terminating")
			dep := Instance("", "")
			require.NoError(t, h.S.Get(h.Ctx, "p-a", "d", dep, store.GetOptions{}))
			require.NotNil(t, dep.DeletionTimestamp, "the dependent is being deleted")
			dep.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, dep, store.UpdateOptions{}))
			h.Settle()
			assert.False(t, h.Exists(Instance("", ""), "p-a", "d"))
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row37 foreground deletion of a three-level chain removes leaves first", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			b := Instance("p-a", "b")
			b.OwnerReferences = []resource.OwnerReference{ref(a, true)}
			h.MustCreate(b)
			c := Instance("p-a", "c")
			c.OwnerReferences = []resource.OwnerReference{ref(b, true)}
			c.Finalizers = []string{"example.com/hold"}
			h.MustCreate(c)
			_, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{PropagationPolicy: store.DeletePropagationForeground})
			require.NoError(t, err)
			h.Settle()
			assert.True(t, h.Exists(Project(""), "", "a"), "a waits for b")
			assert.True(t, h.Exists(Instance("", ""), "p-a", "b"), "b waits for c")
			held := Instance("", "")
			require.NoError(t, h.S.Get(h.Ctx, "p-a", "c", held, store.GetOptions{}))
			held.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, held, store.UpdateOptions{}))
			h.Settle()
			assert.False(t, h.Exists(Instance("", ""), "p-a", "c"))
			assert.False(t, h.Exists(Instance("", ""), "p-a", "b"))
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row38 owner cycles are collected without looping forever", run: func(t *testing.T, h *Harness) {
			a, b := Project("a"), Project("b")
			h.MustCreate(a)
			h.MustCreate(b)
			a.OwnerReferences = []resource.OwnerReference{ref(b, true)}
			require.NoError(t, h.S.Update(h.Ctx, a, store.UpdateOptions{}))
			b.OwnerReferences = []resource.OwnerReference{ref(a, true)}
			require.NoError(t, h.S.Update(h.Ctx, b, store.UpdateOptions{}))
			_, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{PropagationPolicy: store.DeletePropagationForeground})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(h.Ctx, 20*time.Second)
			defer cancel()
			require.NoError(t, h.S.Settle(ctx))
			assert.False(t, h.Exists(Project(""), "", "a"))
			assert.False(t, h.Exists(Project(""), "", "b"))
		}},
		{name: "row38 a dependent created with an owner that does not exist is collected", run: func(t *testing.T, h *Harness) {
			d := Project("d")
			d.OwnerReferences = []resource.OwnerReference{{APIVersion: "management.service/v1", Kind: "Project", Name: "ghost", UID: "no-such-uid"}}
			h.MustCreate(d)
			h.Settle()
			assert.False(t, h.Exists(Project(""), "", "d"))
		}},
		{name: "row38 an owner of an unregistered kind leaves the dependent alone", run: func(t *testing.T, h *Harness) {
			d := Project("d")
			d.OwnerReferences = []resource.OwnerReference{{APIVersion: "other.example/v1", Kind: "Thing", Name: "t", UID: "u"}}
			h.MustCreate(d)
			h.Settle()
			assert.True(t, h.Exists(Project(""), "", "d"))
		}},
	}
}
