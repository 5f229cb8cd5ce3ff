package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
)

// Harness is what a store suite case gets: a fresh store over a fresh backend, with
// a fake clock.
type Harness struct {
	// S is the store under test.
	S *store.Store
	// B is the backend under it.
	B backend.Backend
	// Clock is the store's clock.
	Clock *FakeClock
	// Ctx is the case's context.
	Ctx context.Context
	t   *testing.T
}

// storeCase is one named case of the store suite.
type storeCase struct {
	name string
	opts func(o *store.Options)
	run  func(t *testing.T, h *Harness)
}

// RunStore runs the store semantics suite: every case is a subtest on a fresh store
// over a backend from newBackend, so no backend can skip one. Case names say the
// property they protect and, where one applies, the row of the reference checklist
// (reference/object-semantics.md) they cover.
func RunStore(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	var all []storeCase
	all = append(all, createCases()...)
	all = append(all, updateCases()...)
	all = append(all, deleteCases()...)
	all = append(all, listCases()...)
	all = append(all, watchCases()...)
	all = append(all, statusDryRunCases()...)
	all = append(all, txnCases()...)
	all = append(all, gcCases()...)
	all = append(all, managedCases()...)
	all = append(all, applyCases()...)
	all = append(all, patchCases()...)
	all = append(all, concurrencyCases()...)
	all = append(all, openCases()...)
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			var o store.Options
			if c.opts != nil {
				c.opts(&o)
			}
			h := NewHarness(t, newBackend(t), o)
			c.run(t, h)
		})
	}
}

// NewHarness builds a store over b with a fake clock (replacing o.Clock). On cleanup
// it lets the store settle, checks [CheckInvariants] and closes the store; closing b
// is left to whoever made it.
func NewHarness(t *testing.T, b backend.Backend, o store.Options) *Harness {
	t.Helper()
	clock := NewFakeClock(FixtureStart)
	o.Clock = clock
	s, err := store.New(b, o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		if assert.NoError(t, s.Settle(sctx), "store did not settle") {
			assert.NoError(t, CheckInvariants(sctx, s), "invariant broken")
		}
		cancel()
		_ = s.Close()
	})
	return &Harness{S: s, B: b, Clock: clock, Ctx: ctx, t: t}
}

// Settle waits for the store's background work.
func (h *Harness) Settle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, 20*time.Second)
	defer cancel()
	require.NoError(h.t, h.S.Settle(ctx))
}

// Step moves the clock and lets the store settle.
func (h *Harness) Step(d time.Duration) {
	h.t.Helper()
	h.Clock.Step(d)
	h.Settle()
}

// Project returns a new Project named name.
func Project(name string) *resource.Project {
	return &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
}

// Instance returns a new VirtualClusterInstance namespace/name.
func Instance(namespace, name string) *resource.VirtualClusterInstance {
	return &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: namespace, Name: name}}
}

// MustCreate creates obj and fails the test on error.
func (h *Harness) MustCreate(obj resource.Object) {
	h.t.Helper()
	require.NoError(h.t, h.S.Create(h.Ctx, obj, store.CreateOptions{}))
}

// Exists reports whether namespace/name of example's kind exists.
func (h *Harness) Exists(example resource.Object, namespace, name string) bool {
	h.t.Helper()
	err := h.S.Get(h.Ctx, namespace, name, example, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return false
	}
	require.NoError(h.t, err)
	return true
}

// Revision returns the backend's current revision.
func (h *Harness) Revision() int64 {
	h.t.Helper()
	rev, err := h.B.Revision(h.Ctx)
	require.NoError(h.t, err)
	return rev
}

// RequireReason checks that err is a Status error of the given reason (and so code).
func RequireReason(t *testing.T, err error, reason resource.StatusReason) *resource.Status {
	t.Helper()
	require.Error(t, err)
	st := resource.StatusOf(err)
	require.Equal(t, reason, st.Reason, "error: %v", err)
	require.Equal(t, reason.Code(), st.Code)
	return &st
}

// RequireCause checks that err is 422 Invalid with a cause at field.
func RequireCause(t *testing.T, err error, field string, typ resource.CauseType) {
	t.Helper()
	st := RequireReason(t, err, resource.ReasonInvalid)
	require.NotNil(t, st.Details)
	for _, c := range st.Details.Causes {
		if c.Field == field && (typ == "" || c.Type == typ) {
			return
		}
	}
	require.Failf(t, "no such cause", "want %s %s in %+v", typ, field, st.Details.Causes)
}

// rv reads the resourceVersion of an object or a list.
func rv(t *testing.T, obj interface{}) int64 {
	t.Helper()
	var s string
	switch o := obj.(type) {
	case resource.Object:
		s = o.GetObjectMeta().ResourceVersion
	case resource.ObjectList:
		s = o.GetListMeta().ResourceVersion
	}
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, "resourceVersion %q", s)
	return n
}

func ptr[T any](v T) *T { return &v }

func names(l resource.ObjectList) []string {
	out := []string{}
	for i := 0; i < l.Len(); i++ {
		m := l.Item(i).GetObjectMeta()
		if m.Namespace != "" {
			out = append(out, m.Namespace+"/"+m.Name)
		} else {
			out = append(out, m.Name)
		}
	}
	return out
}

func fmtName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
