package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func updateCases() []storeCase {
	return []storeCase{
		{name: "row12 update keeps uid and creationTimestamp and a wrong uid is 409", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			uid, created := p.UID, p.CreationTimestamp
			p.CreationTimestamp = resource.NewTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
			p.UID = ""
			p.Spec.Description = "x"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			assert.Equal(t, uid, p.UID)
			assert.True(t, p.CreationTimestamp.Time.Equal(created.Time))
			p.UID = "someone-else"
			RequireReason(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), resource.ReasonConflict)
		}},
		{name: "row12 renaming through update addresses another object: 404", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			p.Name = "b"
			RequireReason(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), resource.ReasonNotFound)
		}},
		{name: "row13 resourceVersion is one global revision across objects", run: func(t *testing.T, h *Harness) {
			a, b := Project("a"), Project("b")
			h.MustCreate(a)
			h.MustCreate(b)
			assert.Equal(t, rv(t, a)+1, rv(t, b))
			a.Spec.Description = "x"
			require.NoError(t, h.S.Update(h.Ctx, a, store.UpdateOptions{}))
			assert.Equal(t, rv(t, b)+1, rv(t, a))
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{}))
			assert.Equal(t, a.ResourceVersion, list.ResourceVersion)
		}},
		{name: "row15 update with a stale resourceVersion is 409 Conflict", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			stale := *p
			p.Spec.Description = "first"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			stale.Spec.Description = "second"
			st := RequireReason(t, h.S.Update(h.Ctx, &stale, store.UpdateOptions{}), resource.ReasonConflict)
			assert.Equal(t, `Operation cannot be fulfilled on projects.management.service "a": `+resource.OptimisticLockMessage, st.Message)
		}},
		{name: "row16 update without a resourceVersion is 422", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			p.ResourceVersion = ""
			RequireCause(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), "metadata.resourceVersion", resource.CauseFieldValueInvalid)
		}},
		{name: "row17 an update that changes nothing writes nothing", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Labels = map[string]string{"x": "y"}
			h.MustCreate(p)
			before := h.Revision()
			w, err := h.S.Watch(h.Ctx, Project(""), store.WatchOptions{ResourceVersion: p.ResourceVersion})
			require.NoError(t, err)
			defer w.Stop()
			same := *p
			require.NoError(t, h.S.Update(h.Ctx, &same, store.UpdateOptions{}))
			assert.Equal(t, p.ResourceVersion, same.ResourceVersion)
			assert.Equal(t, before, h.Revision())
			// A later real change is the first event the watcher sees.
			same.Spec.Description = "changed"
			require.NoError(t, h.S.Update(h.Ctx, &same, store.UpdateOptions{}))
			ev := nextEvent(t, w)
			assert.Equal(t, store.Modified, ev.Type)
			assert.Equal(t, same.ResourceVersion, ev.Object.GetObjectMeta().ResourceVersion)
		}},
		{name: "row18 update of a missing object is 404", run: func(t *testing.T, h *Harness) {
			p := Project("ghost")
			p.ResourceVersion = "1"
			RequireReason(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), resource.ReasonNotFound)
		}},
		{name: "row18 an update based on an object moved away (MovedTo) is 409 naming the new place", run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			v.Finalizers = []string{"example.com/f"}
			h.MustCreate(v)
			stale := v.DeepCopyResource().(*resource.VirtualClusterInstance)
			stale.Spec.Description = "edited"
			require.NoError(t, h.S.Txn(h.Ctx, store.TxnOptions{}, func(tx *store.Tx) error {
				if _, err := tx.Delete(Instance("p-a", "v"), store.DeleteOptions{SkipFinalizers: true,
					MovedTo: &store.Location{Namespace: "p-b", Name: "v"}}); err != nil {
					return err
				}
				return tx.Create(Instance("p-b", "v"), store.CreateOptions{})
			}))
			assert.False(t, h.Exists(Instance("", ""), "p-a", "v"), "moved without running finalizers")
			err := h.S.Update(h.Ctx, stale, store.UpdateOptions{})
			RequireReason(t, err, resource.ReasonConflict)
			assert.Contains(t, err.Error(), `moved to "v" in namespace "p-b"`)
			noUID := stale.DeepCopyResource().(*resource.VirtualClusterInstance)
			noUID.UID = ""
			RequireReason(t, h.S.UpdateStatus(h.Ctx, noUID, store.UpdateOptions{}), resource.ReasonConflict)

			// A later object at the same key, deleted the ordinary way: updates based
			// on it are 404 again.
			again := Instance("p-a", "v")
			h.MustCreate(again)
			_, err = h.S.Delete(h.Ctx, Instance("p-a", "v"), store.DeleteOptions{})
			require.NoError(t, err)
			RequireReason(t, h.S.Update(h.Ctx, again, store.UpdateOptions{}), resource.ReasonNotFound)
			again.UID = ""
			RequireReason(t, h.S.Update(h.Ctx, again, store.UpdateOptions{}), resource.ReasonNotFound)
			var list resource.VirtualClusterInstanceList
			require.NoError(t, h.S.List(h.Ctx, &list, store.ListOptions{}))
			require.Len(t, list.Items, 1, "the move record is no object")
			assert.Equal(t, "p-b", list.Items[0].Namespace)
		}},
		{name: "row18 MovedTo is refused without SkipFinalizers, or to the same place", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Instance("p-a", "v"))
			_, err := h.S.Delete(h.Ctx, Instance("p-a", "v"), store.DeleteOptions{MovedTo: &store.Location{Namespace: "p-b", Name: "v"}})
			RequireReason(t, err, resource.ReasonBadRequest)
			_, err = h.S.Delete(h.Ctx, Instance("p-a", "v"), store.DeleteOptions{SkipFinalizers: true, MovedTo: &store.Location{Namespace: "p-a", Name: "v"}})
			RequireReason(t, err, resource.ReasonBadRequest)
			_, err = h.S.Delete(h.Ctx, Instance("p-a", "v"), store.DeleteOptions{SkipFinalizers: true, MovedTo: &store.Location{Namespace: "p-b", Name: "Not_A_Name"}})
			require.Error(t, err)
			assert.True(t, h.Exists(Instance("", ""), "p-a", "v"), "nothing changed")
		}},
		{name: "row20 a client generation is ignored on update", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			p.Generation = 99
			p.Labels = map[string]string{"a": "b"}
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			assert.EqualValues(t, 1, p.Generation)
		}},
		{name: "row21 generation goes up on spec changes only", run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			h.MustCreate(v)
			v.Labels = map[string]string{"l": "1"}
			v.Annotations = map[string]string{"a": "1"}
			v.Finalizers = []string{"example.com/f"}
			require.NoError(t, h.S.Update(h.Ctx, v, store.UpdateOptions{}))
			assert.EqualValues(t, 1, v.Generation, "metadata changes do not bump")
			v.Status.Phase = resource.InstancePhaseReady
			require.NoError(t, h.S.UpdateStatus(h.Ctx, v, store.UpdateOptions{}))
			assert.EqualValues(t, 1, v.Generation, "status changes do not bump")
			v.Spec.DisplayName = "new"
			require.NoError(t, h.S.Update(h.Ctx, v, store.UpdateOptions{}))
			assert.EqualValues(t, 2, v.Generation)
			v.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, v, store.UpdateOptions{}))
		}},
		{name: "row28 adding a finalizer while terminating is 422, removing one is allowed", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/a", "example.com/b"}
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{})
			require.NoError(t, err)
			p.Finalizers = append(p.Finalizers, "example.com/c")
			RequireCause(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), "metadata.finalizers", resource.CauseFieldValueForbidden)
			p.Finalizers = []string{"example.com/b", "example.com/a"}
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}), "reordering is allowed")
			p.Finalizers = []string{"example.com/b"}
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			p.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
		}},
		{name: "row30 a client cannot set, move or clear deletionTimestamp", run: func(t *testing.T, h *Harness) {
			live := Project("live")
			h.MustCreate(live)
			live.DeletionTimestamp = resource.NewTimePtr(FixtureStart)
			RequireCause(t, h.S.Update(h.Ctx, live, store.UpdateOptions{}), "metadata.deletionTimestamp", "")
			held := Project("held")
			held.Finalizers = []string{"example.com/f"}
			h.MustCreate(held)
			_, err := h.S.Delete(h.Ctx, held, store.DeleteOptions{})
			require.NoError(t, err)
			ts := *held.DeletionTimestamp
			held.DeletionTimestamp = nil
			held.Labels = map[string]string{"x": "y"}
			require.NoError(t, h.S.Update(h.Ctx, held, store.UpdateOptions{}))
			require.NotNil(t, held.DeletionTimestamp, "the stored value is put back")
			assert.True(t, held.DeletionTimestamp.Equal(&ts))
			held.DeletionGracePeriodSeconds = ptr(int64(100))
			RequireCause(t, h.S.Update(h.Ctx, held, store.UpdateOptions{}), "metadata.deletionGracePeriodSeconds", "")
			held.DeletionGracePeriodSeconds = nil
			held.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, held, store.UpdateOptions{}))
		}},
		{name: "GuaranteedUpdate applies a function to the latest state", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			got := Project("")
			calls := 0
			err := h.S.GuaranteedUpdate(h.Ctx, "", "a", got, func(obj resource.Object) error {
				calls++
				obj.(*resource.Project).Spec.Description = "done"
				return nil
			}, store.UpdateOptions{})
			require.NoError(t, err)
			assert.Equal(t, 1, calls)
			assert.Equal(t, "done", got.Spec.Description)
			assert.EqualValues(t, 2, got.Generation)
		}},
		{name: "Get with a resourceVersion newer than the store is 504 Timeout", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			err := h.S.Get(h.Ctx, "", "a", Project(""), store.GetOptions{ResourceVersion: "9999"})
			st := RequireReason(t, err, resource.ReasonTimeout)
			require.NotNil(t, st.Details)
			assert.Equal(t, resource.CauseResourceVersionTooLarge, st.Details.Causes[0].Type)
		}},
	}
}
