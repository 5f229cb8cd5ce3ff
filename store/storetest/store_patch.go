package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func patchCases() []storeCase {
	return []storeCase{
		{name: "row19 a merge patch without resourceVersion applies to the latest version", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			p.Spec.Description = "someone else"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			out := Project("a")
			require.NoError(t, h.S.Patch(h.Ctx, out, store.PatchTypeMerge, []byte(`{"spec":{"displayName":"D"}}`), store.PatchOptions{}))
			assert.Equal(t, "D", out.Spec.DisplayName)
			assert.Equal(t, "someone else", out.Spec.Description)
			assert.EqualValues(t, 3, out.Generation)
			assert.Equal(t, formatRevision(h.Revision()), out.ResourceVersion)
		}},
		{name: "row19 a patch carrying a stale resourceVersion is 409", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			h.MustCreate(p)
			stale := p.ResourceVersion
			p.Spec.Description = "x"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"displayName":"D"}}`, stale)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeMerge, []byte(patch), store.PatchOptions{}), resource.ReasonConflict)
			patch = fmt.Sprintf(`[{"op":"replace","path":"/metadata/resourceVersion","value":%q},{"op":"add","path":"/spec/displayName","value":"D"}]`, p.ResourceVersion)
			out := Project("a")
			require.NoError(t, h.S.Patch(h.Ctx, out, store.PatchTypeJSON, []byte(patch), store.PatchOptions{}))
			assert.Equal(t, "D", out.Spec.DisplayName)
		}},
		{name: "row19 concurrent patches without resourceVersion all land", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					patch := fmt.Sprintf(`{"metadata":{"labels":{"l%d":"v"}}}`, i)
					if err := h.S.Patch(h.Ctx, Project("a"), store.PatchTypeMerge, []byte(patch), store.PatchOptions{}); err != nil {
						assert.NoError(t, err) // not require: this is not the test's goroutine
					}
				}(i)
			}
			wg.Wait()
			got := Project("")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", got, store.GetOptions{}))
			assert.Len(t, got.Labels, 8)
		}},
		{name: "row19 bad patches: 415 type, 400 malformed or renaming, 422 failed test, 404 missing", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), "application/strategic-merge-patch+json", []byte(`{}`), store.PatchOptions{}), resource.ReasonUnsupportedMediaType)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeJSON, []byte(`{"op":`), store.PatchOptions{}), resource.ReasonBadRequest)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeMerge, []byte(`{"metadata":{"name":"b"}}`), store.PatchOptions{}), resource.ReasonBadRequest)
			// An unknown field in the result is 422 under Strict (the default), as kube-apiserver answers.
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeMerge, []byte(`{"spec":{"unknownField":1}}`), store.PatchOptions{}), resource.ReasonInvalid)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeJSON, []byte(`[{"op":"test","path":"/spec/displayName","value":"nope"}]`), store.PatchOptions{}), resource.ReasonInvalid)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeJSON, []byte(`[{"op":"frobnicate","path":"/spec"}]`), store.PatchOptions{}), resource.ReasonBadRequest)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeJSON, []byte(`[{"op":"remove","path":"/spec/nothing/here"}]`), store.PatchOptions{}), resource.ReasonInvalid)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeMerge, []byte(`[1]`), store.PatchOptions{}), resource.ReasonBadRequest)
			many := []byte("[" + strings.Repeat(`{"op":"test","path":"/kind","value":"Project"},`, 10000) + `{"op":"test","path":"/kind","value":"Project"}]`)
			RequireReason(t, h.S.Patch(h.Ctx, Project("a"), store.PatchTypeJSON, many, store.PatchOptions{}), resource.ReasonRequestEntityTooLarge)
			RequireReason(t, h.S.Patch(h.Ctx, Project("ghost"), store.PatchTypeMerge, []byte(`{}`), store.PatchOptions{}), resource.ReasonNotFound)
		}},
		{name: "row19 a dry-run patch stores nothing", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("a"))
			before := h.Revision()
			out := Project("a")
			require.NoError(t, h.S.Patch(h.Ctx, out, store.PatchTypeMerge, []byte(`{"spec":{"displayName":"D"}}`),
				store.PatchOptions{WriteOptions: store.WriteOptions{DryRun: true}}))
			assert.Equal(t, "D", out.Spec.DisplayName)
			assert.Equal(t, before, h.Revision())
		}},
	}
}
