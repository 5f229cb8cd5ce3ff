package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
)

func seedInstances(h *Harness) {
	h.t.Helper()
	for _, ns := range []string{"p-a", "p-b"} {
		for i, tier := range []string{"web", "db", "web"} {
			v := Instance(ns, fmtName("v", i))
			v.Labels = map[string]string{"tier": tier, "ns": ns}
			if i == 2 {
				v.Labels["canary"] = "true"
			}
			h.MustCreate(v)
		}
	}
}

func listCases() []storeCase {
	return []storeCase{
		{name: "row43 label selectors support = == != in notin exists and not-exists", run: func(t *testing.T, h *Harness) {
			seedInstances(h)
			for sel, want := range map[string][]string{
				"tier=web":         {"p-a/v-000", "p-a/v-002", "p-b/v-000", "p-b/v-002"},
				"tier==db":         {"p-a/v-001", "p-b/v-001"},
				"tier!=web":        {"p-a/v-001", "p-b/v-001"},
				"ns in (p-b, p-x)": {"p-b/v-000", "p-b/v-001", "p-b/v-002"},
				"ns notin (p-b)":   {"p-a/v-000", "p-a/v-001", "p-a/v-002"},
				"canary":           {"p-a/v-002", "p-b/v-002"},
				"!canary,tier=web": {"p-a/v-000", "p-b/v-000"},
				"tier=web,ns=p-a":  {"p-a/v-000", "p-a/v-002"},
				"tier=none":        {},
			} {
				list := &resource.VirtualClusterInstanceList{}
				require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{LabelSelector: sel}), sel)
				assert.Equal(t, want, names(list), sel)
			}
		}},
		{name: "row43 a label list reflects every write made before it began", run: func(t *testing.T, h *Harness) {
			for i := 0; i < 50; i++ {
				p := Project(fmtName("p", i))
				p.Labels = map[string]string{"team": "red"}
				h.MustCreate(p)
				list := &resource.ProjectList{}
				require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{LabelSelector: "team=red"}))
				require.Len(t, list.Items, i+1, "the new object is listed at once")
				assert.GreaterOrEqual(t, rv(t, list), rv(t, p))
				p.Labels["team"] = "blue"
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
				require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{LabelSelector: "team=red"}))
				require.Len(t, list.Items, i, "a label change is seen at once")
				p.Labels["team"] = "red"
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			}
		}},
		{name: "row43 a malformed label selector is 400", run: func(t *testing.T, h *Harness) {
			for _, sel := range []string{"a in (", "=x", "a=b=c", "a b", "a in b", "!"} {
				err := h.S.List(h.Ctx, &resource.ProjectList{}, store.ListOptions{LabelSelector: sel})
				RequireReason(t, err, resource.ReasonBadRequest)
			}
		}},
		{name: "row44 field selectors on metadata.name and metadata.namespace, other fields 400", run: func(t *testing.T, h *Harness) {
			seedInstances(h)
			list := &resource.VirtualClusterInstanceList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{FieldSelector: "metadata.name=v-001"}))
			assert.Equal(t, []string{"p-a/v-001", "p-b/v-001"}, names(list))
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{FieldSelector: "metadata.namespace==p-b,metadata.name!=v-001"}))
			assert.Equal(t, []string{"p-b/v-000", "p-b/v-002"}, names(list))
			err := h.S.List(h.Ctx, list, store.ListOptions{FieldSelector: "spec.displayName=x"})
			RequireReason(t, err, resource.ReasonBadRequest)
		}},
		{name: "list of one namespace", run: func(t *testing.T, h *Harness) {
			seedInstances(h)
			list := &resource.VirtualClusterInstanceList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{Namespace: "p-a"}))
			assert.Equal(t, []string{"p-a/v-000", "p-a/v-001", "p-a/v-002"}, names(list))
			assert.Equal(t, "VirtualClusterInstanceList", list.Kind)
		}},
		{name: "row45 limit and continue page through one snapshot", run: func(t *testing.T, h *Harness) {
			for i := 0; i < 7; i++ {
				h.MustCreate(Project(fmtName("p", i)))
			}
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{Limit: 3}))
			assert.Equal(t, []string{"p-000", "p-001", "p-002"}, names(list))
			require.NotEmpty(t, list.Continue)
			snapshot := list.ResourceVersion
			// Writes after the first page do not show in the next ones.
			h.MustCreate(Project("p-0035"))
			_, err := h.S.Delete(h.Ctx, Project("p-005"), store.DeleteOptions{})
			require.NoError(t, err)
			var all []string
			all = append(all, names(list)...)
			for list.Continue != "" {
				next := &resource.ProjectList{}
				require.NoError(t, h.S.List(h.Ctx, next, store.ListOptions{Limit: 3, Continue: list.Continue}))
				assert.Equal(t, snapshot, next.ResourceVersion)
				all = append(all, names(next)...)
				list = next
			}
			assert.Equal(t, []string{"p-000", "p-001", "p-002", "p-003", "p-004", "p-005", "p-006"}, all)
		}},
		{name: "row45 limit with a selector fills pages with matches", run: func(t *testing.T, h *Harness) {
			seedInstances(h)
			list := &resource.VirtualClusterInstanceList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{Limit: 2, LabelSelector: "tier=web"}))
			assert.Equal(t, []string{"p-a/v-000", "p-a/v-002"}, names(list))
			require.NotEmpty(t, list.Continue)
			next := &resource.VirtualClusterInstanceList{}
			require.NoError(t, h.S.List(h.Ctx, next, store.ListOptions{Limit: 2, LabelSelector: "tier=web", Continue: list.Continue}))
			assert.Equal(t, []string{"p-b/v-000", "p-b/v-002"}, names(next))
		}},
		{name: "row45 continue with resourceVersion is 400 and a forged token is 400", run: func(t *testing.T, h *Harness) {
			for i := 0; i < 3; i++ {
				h.MustCreate(Project(fmtName("p", i)))
			}
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{Limit: 1}))
			err := h.S.List(h.Ctx, &resource.ProjectList{}, store.ListOptions{Continue: list.Continue, ResourceVersion: "1"})
			RequireReason(t, err, resource.ReasonBadRequest)
			err = h.S.List(h.Ctx, &resource.ProjectList{}, store.ListOptions{Continue: "not-a-token"})
			RequireReason(t, err, resource.ReasonBadRequest)
			err = h.S.List(h.Ctx, &resource.AccessKeyList{}, store.ListOptions{Continue: list.Continue})
			RequireReason(t, err, resource.ReasonBadRequest)
		}},
		{name: "row45 a continue token older than what is kept is 410 Expired", run: func(t *testing.T, h *Harness) {
			c, ok := h.B.(backend.Compactor)
			if !ok {
				t.Skip("backend has no Compactor: compaction cases are covered by backends that have one")
			}
			for i := 0; i < 3; i++ {
				h.MustCreate(Project(fmtName("p", i)))
			}
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{Limit: 1}))
			h.MustCreate(Project("later"))
			require.NoError(t, c.Compact(h.Ctx, h.Revision()))
			err := h.S.List(h.Ctx, &resource.ProjectList{}, store.ListOptions{Limit: 1, Continue: list.Continue})
			RequireReason(t, err, resource.ReasonExpired)
		}},
		{name: "row46 list resourceVersion semantics: Exact, NotOlderThan, too large, match without version", run: func(t *testing.T, h *Harness) {
			a := Project("a")
			h.MustCreate(a)
			h.MustCreate(Project("b"))
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: store.ResourceVersionMatchExact}))
			assert.Equal(t, []string{"a"}, names(list))
			assert.Equal(t, a.ResourceVersion, list.ResourceVersion)
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{ResourceVersion: a.ResourceVersion}))
			assert.Equal(t, []string{"a", "b"}, names(list))
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{ResourceVersion: "0"}))
			assert.Equal(t, []string{"a", "b"}, names(list))
			err := h.S.List(h.Ctx, list, store.ListOptions{ResourceVersion: "100000"})
			RequireReason(t, err, resource.ReasonTimeout)
			err = h.S.List(h.Ctx, list, store.ListOptions{ResourceVersionMatch: store.ResourceVersionMatchExact})
			RequireReason(t, err, resource.ReasonInvalid)
			err = h.S.List(h.Ctx, list, store.ListOptions{ResourceVersion: "abc"})
			RequireReason(t, err, resource.ReasonBadRequest)
		}},
		{name: "row47 a list carries the revision of its snapshot", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			h.MustCreate(Instance("p-a", "v"))
			list := &resource.ProjectList{}
			require.NoError(t, h.S.List(h.Ctx, list, store.ListOptions{}))
			assert.Equal(t, formatRevision(h.Revision()), list.ResourceVersion)
		}},
	}
}
