package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func deleteCases() []storeCase {
	return []storeCase{
		{name: "row23 delete without finalizers removes at once", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			created := rv(t, p)
			removed, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{})
			require.NoError(t, err)
			assert.True(t, removed)
			assert.False(t, h.Exists(Project(""), "", "a"))
			assert.Equal(t, created+1, h.Revision())
		}},
		{name: "row24 delete with finalizers only marks: deletionTimestamp now, grace 0, generation +1", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			h.MustCreate(p)
			h.Clock.Step(3 * time.Second)
			out := Project("a")
			removed, err := h.S.Delete(h.Ctx, out, store.DeleteOptions{})
			require.NoError(t, err)
			assert.False(t, removed)
			require.NotNil(t, out.DeletionTimestamp)
			assert.True(t, out.DeletionTimestamp.Time.Equal(h.Clock.Now()))
			require.NotNil(t, out.DeletionGracePeriodSeconds)
			assert.EqualValues(t, 0, *out.DeletionGracePeriodSeconds)
			assert.EqualValues(t, 2, out.Generation)
			assert.True(t, h.Exists(Project(""), "", "a"))
			out.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, out, store.UpdateOptions{}))
		}},
		{name: "row25 deleting again never moves deletionTimestamp later", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{})
			require.NoError(t, err)
			first := *p.DeletionTimestamp
			firstRV := p.ResourceVersion
			h.Clock.Step(10 * time.Second)
			_, err = h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
			require.NoError(t, err)
			assert.True(t, p.DeletionTimestamp.Equal(&first))
			assert.Equal(t, firstRV, p.ResourceVersion, "nothing was written")
			p.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
		}},
		{name: "row25 a shorter grace period moves the deadline earlier", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(60))})
			require.NoError(t, err)
			assert.True(t, p.DeletionTimestamp.Equal(resource.NewTimePtr(FixtureStart.Add(60*time.Second))))
			h.Clock.Step(10 * time.Second)
			_, err = h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(20))})
			require.NoError(t, err)
			assert.True(t, p.DeletionTimestamp.Equal(resource.NewTimePtr(FixtureStart.Add(30*time.Second))))
			assert.EqualValues(t, 20, *p.DeletionGracePeriodSeconds)
			_, err = h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(50))})
			require.NoError(t, err)
			assert.True(t, p.DeletionTimestamp.Equal(resource.NewTimePtr(FixtureStart.Add(30*time.Second))), "a longer one changes nothing")
			h.Step(20 * time.Second)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row26 a graceful delete waits for the grace period, then the reaper removes the object", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			removed, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(30))})
			require.NoError(t, err)
			assert.False(t, removed)
			assert.EqualValues(t, 30, *p.DeletionGracePeriodSeconds)
			h.Step(29 * time.Second)
			assert.True(t, h.Exists(Project(""), "", "a"))
			h.Step(time.Second)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row26 a negative grace period counts as one second and zero deletes at once", run: func(t *testing.T, h *Harness) {
			a, b := Project("a"), Project("b")
			h.MustCreate(a)
			h.MustCreate(b)
			_, err := h.S.Delete(h.Ctx, a, store.DeleteOptions{GracePeriodSeconds: ptr(int64(-5))})
			require.NoError(t, err)
			assert.EqualValues(t, 1, *a.DeletionGracePeriodSeconds)
			removed, err := h.S.Delete(h.Ctx, b, store.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
			require.NoError(t, err)
			assert.True(t, removed)
			h.Step(time.Second)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row26 grace period with finalizers: removed when both are done", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{GracePeriodSeconds: ptr(int64(10))})
			require.NoError(t, err)
			p.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			assert.True(t, h.Exists(Project(""), "", "a"), "grace period not over yet")
			h.Step(10 * time.Second)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row27 removing the last finalizer deletes the object in the same write", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, p, store.DeleteOptions{})
			require.NoError(t, err)
			marked := p.ResourceVersion
			w, err := h.S.Watch(h.Ctx, Project(""), store.WatchOptions{ResourceVersion: marked})
			require.NoError(t, err)
			defer w.Stop()
			p.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			assert.Empty(t, p.Finalizers, "the response is the updated object")
			// With the resourceVersion of the version it replaced, as kube-apiserver
			// answers (it returns the object of the request): a watch from it sees
			// the deletion.
			assert.Equal(t, marked, p.ResourceVersion)
			assert.False(t, h.Exists(Project(""), "", "a"))
			ev := nextEvent(t, w)
			assert.Equal(t, store.Deleted, ev.Type)
			assert.NotEqual(t, marked, ev.Object.GetObjectMeta().ResourceVersion, "the deletion is a write of its own revision")
		}},
		{name: "row29 finalizer names are qualified names and orphan with foregroundDeletion is 422", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"has space"}
			RequireReason(t, h.S.Create(h.Ctx, p, store.CreateOptions{}), resource.ReasonInvalid)
			p = Project("b")
			p.Finalizers = []string{store.FinalizerOrphan, store.FinalizerForegroundDeletion}
			RequireReason(t, h.S.Create(h.Ctx, p, store.CreateOptions{}), resource.ReasonInvalid)
		}},
		{name: "row31 delete preconditions on uid and resourceVersion are 409", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			_, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{Preconditions: store.Preconditions{UID: ptr("other")}})
			st := RequireReason(t, err, resource.ReasonConflict)
			assert.Contains(t, st.Message, "might have been deleted and then recreated")
			_, err = h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{Preconditions: store.Preconditions{ResourceVersion: ptr("999")}})
			RequireReason(t, err, resource.ReasonConflict)
			removed, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{Preconditions: store.Preconditions{
				UID: ptr(p.UID), ResourceVersion: ptr(p.ResourceVersion)}})
			require.NoError(t, err)
			assert.True(t, removed)
		}},
		{name: "row32 an unknown propagation policy is 422", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			_, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{PropagationPolicy: "Sideways"})
			RequireCause(t, err, "propagationPolicy", resource.CauseFieldValueNotSupported)
			assert.True(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "SkipFinalizers removes a held object at once without running its finalizers", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			h.MustCreate(p)
			removed, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{SkipFinalizers: true})
			require.NoError(t, err)
			assert.True(t, removed)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "row33 delete of a missing object is 404", run: func(t *testing.T, h *Harness) {
			_, err := h.S.Delete(h.Ctx, Project("ghost"), store.DeleteOptions{})
			RequireReason(t, err, resource.ReasonNotFound)
		}},
		{name: "row34 DeleteCollection deletes what the selector matches, each through a normal delete", run: func(t *testing.T, h *Harness) {
			for i, team := range []string{"red", "red", "blue"} {
				p := Project(fmtName("p", i))
				p.Labels = map[string]string{"team": team}
				if i == 1 {
					p.Finalizers = []string{"example.com/f"}
				}
				h.MustCreate(p)
			}
			n, err := h.S.DeleteCollection(h.Ctx, &resource.ProjectList{}, store.ListOptions{LabelSelector: "team=red"}, store.DeleteOptions{})
			require.NoError(t, err)
			assert.Equal(t, 2, n)
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{}))
			assert.Equal(t, []string{"p-001", "p-002"}, names(list))
			held := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "p-001", held, store.GetOptions{}))
			require.NotNil(t, held.DeletionTimestamp, "the finalizer holds it")
			held.Finalizers = nil
			require.NoError(t, h.S.Update(h.Ctx, held, store.UpdateOptions{}))
		}},
	}
}
