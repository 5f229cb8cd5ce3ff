package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func statusDryRunCases() []storeCase {
	return []storeCase{
		{name: "row53 create drops status and update keeps the stored status", run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			v.Status.Phase = resource.InstancePhaseReady
			h.MustCreate(v)
			assert.Empty(t, v.Status.Phase)
			v.Status.Phase = resource.InstancePhaseSleeping
			require.NoError(t, h.S.UpdateStatus(h.Ctx, v, store.UpdateOptions{}))
			assert.Equal(t, resource.InstancePhaseSleeping, v.Status.Phase)
			v.Status.Phase = resource.InstancePhaseFailed
			v.Spec.DisplayName = "x"
			require.NoError(t, h.S.Update(h.Ctx, v, store.UpdateOptions{}))
			assert.Equal(t, resource.InstancePhaseSleeping, v.Status.Phase)
			assert.Equal(t, "x", v.Spec.DisplayName)
		}},
		{name: "row54 the status path changes only status and does not bump generation", run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			h.MustCreate(v)
			v.Spec.DisplayName = "ignored"
			v.Labels = map[string]string{"ignored": "true"}
			v.Status.Phase = resource.InstancePhaseReady
			require.NoError(t, h.S.UpdateStatus(h.Ctx, v, store.UpdateOptions{}))
			assert.Empty(t, v.Spec.DisplayName)
			assert.Empty(t, v.Labels)
			assert.Equal(t, resource.InstancePhaseReady, v.Status.Phase)
			assert.EqualValues(t, 1, v.Generation)
		}},
		{name: "row54 a status write to a kind without status is 404", run: func(t *testing.T, h *Harness) {
			k := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "k"}}
			h.MustCreate(k)
			RequireReason(t, h.S.UpdateStatus(h.Ctx, k, store.UpdateOptions{}), resource.ReasonNotFound)
		}},
		{name: "row55 dry-run create runs everything and stores nothing", run: func(t *testing.T, h *Harness) {
			w, err := h.S.Watch(h.Ctx, Project(""), store.WatchOptions{ResourceVersion: formatRevision(h.Revision())})
			require.NoError(t, err)
			defer w.Stop()
			before := h.Revision()
			p := &resource.Project{ObjectMeta: resource.ObjectMeta{GenerateName: "dry-"}}
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: store.WriteOptions{DryRun: true}}))
			assert.True(t, strings.HasPrefix(p.Name, "dry-") && len(p.Name) == 9)
			assert.NotEmpty(t, p.UID)
			assert.False(t, p.CreationTimestamp.IsZero())
			assert.Empty(t, p.ResourceVersion)
			assert.Equal(t, before, h.Revision())
			assert.False(t, h.Exists(Project(""), "", p.Name))
			noEvent(t, h, w)
		}},
		{name: "row55 dry-run still detects conflicts and validation errors", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			dry := store.WriteOptions{DryRun: true}
			RequireReason(t, h.S.Create(h.Ctx, Project("a"), store.CreateOptions{WriteOptions: dry}), resource.ReasonAlreadyExists)
			RequireReason(t, h.S.Create(h.Ctx, Project("Bad!"), store.CreateOptions{WriteOptions: dry}), resource.ReasonInvalid)
			stale := Project("a")
			stale.ResourceVersion = "1"
			stale.Spec.Description = "x"
			got := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", got, store.GetOptions{}))
			if got.ResourceVersion != "1" {
				RequireReason(t, h.S.Update(h.Ctx, stale, store.UpdateOptions{WriteOptions: dry}), resource.ReasonConflict)
			}
		}},
		{name: "row55 dry-run update and delete change nothing", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			before := h.Revision()
			dry := store.WriteOptions{DryRun: true}
			upd := *p
			upd.Spec.Description = "x"
			require.NoError(t, h.S.Update(h.Ctx, &upd, store.UpdateOptions{WriteOptions: dry}))
			assert.Equal(t, "x", upd.Spec.Description)
			assert.EqualValues(t, 2, upd.Generation)
			removed, err := h.S.Delete(h.Ctx, Project("a"), store.DeleteOptions{WriteOptions: dry})
			require.NoError(t, err)
			assert.True(t, removed)
			assert.Equal(t, before, h.Revision())
			got := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", got, store.GetOptions{}))
			assert.Empty(t, got.Spec.Description)
		}},
		{name: "admission hooks run mutating then validating, with old and new objects and the caller",
			opts: func(o *store.Options) {
				o.Mutating = []store.MutatingAdmitter{store.MutatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
					m := req.Object.GetObjectMeta()
					if m.Labels == nil {
						m.Labels = map[string]string{}
					}
					m.Labels["mutated-by"] = "hook"
					if req.User != nil {
						m.Labels["user"] = req.User.Name
					}
					return nil
				})}
				o.Validating = []store.ValidatingAdmitter{store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
					if req.Object != nil && req.Object.GetObjectMeta().Labels["mutated-by"] != "hook" {
						return resource.NewInternalError(assert.AnError)
					}
					if req.Operation == store.OperationUpdate && req.OldObject == nil {
						return resource.NewInternalError(assert.AnError)
					}
					if req.Object != nil && req.Object.GetObjectMeta().Name == "forbidden" {
						return resource.NewForbidden(req.Kind, "forbidden", "no")
					}
					return nil
				})}
			},
			run: func(t *testing.T, h *Harness) {
				p := Project("a")
				require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: store.WriteOptions{User: &store.UserInfo{Name: "alice"}}}))
				assert.Equal(t, "hook", p.Labels["mutated-by"])
				assert.Equal(t, "alice", p.Labels["user"])
				p.Spec.Description = "x"
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
				RequireReason(t, h.S.Create(h.Ctx, Project("forbidden"), store.CreateOptions{}), resource.ReasonForbidden)
				assert.False(t, h.Exists(Project(""), "", "forbidden"))
			}},
	}
}
