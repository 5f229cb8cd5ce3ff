package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// TestWrite_result_is_the_stored_object checks that the caller of a write gets back
// exactly what a read returns, also where the stored form differs from what was sent
// (times below the second or in another zone, empty lists and maps, pointers to zero
// times) and where a mutating hook made such values.
func TestWrite_result_is_the_stored_object(t *testing.T) {
	ctx := context.Background()
	zone := time.FixedZone("X", 5*3600)
	hook := store.MutatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
		v, ok := req.Object.(*resource.VirtualClusterInstance)
		if !ok || v.Annotations["hook"] == "" {
			return nil
		}
		v.Labels = map[string]string{}
		v.Spec.TemplateRef = &resource.TemplateRef{Name: "t"}
		v.Finalizers = []string{}
		v.Annotations["hook"] = "ran"
		return nil
	})
	s, b := newMemStore(t, store.Options{Mutating: []store.MutatingAdmitter{hook}})
	var err error

	check := func(obj *resource.VirtualClusterInstance) {
		t.Helper()
		got := &resource.VirtualClusterInstance{}
		require.NoError(t, s.Get(ctx, obj.Namespace, obj.Name, got, store.GetOptions{}))
		assert.Equal(t, got, obj)
		// And the stored bytes decode to it.
		kv, err := b.Get(ctx, "/management.service/virtualclusterinstances/"+obj.Namespace+"/"+obj.Name, 0)
		require.NoError(t, err)
		decoded := &resource.VirtualClusterInstance{}
		require.NoError(t, json.Unmarshal(kv.Value, decoded))
		decoded.ResourceVersion = obj.ResourceVersion
		assert.Equal(t, decoded, obj)
	}

	v := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "v",
		Labels: map[string]string{}, Annotations: map[string]string{"a": "<b>"}, Finalizers: []string{}}}
	v.Status.Conditions = []resource.Condition{{Type: "Ready", Status: "True",
		LastTransitionTime: &resource.Time{Time: time.Date(2026, 5, 6, 7, 8, 9, 123456789, zone)}}}
	require.NoError(t, s.Create(ctx, v, store.CreateOptions{}))
	assert.Nil(t, v.Labels, "an empty map comes back as stored: absent")
	assert.Nil(t, v.Finalizers)
	check(v)

	v.Spec.Owner = &resource.Owner{}
	v.Spec.TemplateRef = &resource.TemplateRef{Name: "x", Version: "1"}
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))
	check(v)

	v.Status.Conditions = []resource.Condition{{Type: "Ready", Status: "True",
		LastTransitionTime: &resource.Time{Time: time.Date(2026, 5, 6, 7, 8, 9, 123456789, zone)}},
		{Type: "Zero", Status: "False", LastTransitionTime: &resource.Time{}}}
	require.NoError(t, s.UpdateStatus(ctx, v, store.UpdateOptions{}))
	require.Len(t, v.Status.Conditions, 2)
	assert.Equal(t, time.Date(2026, 5, 6, 2, 8, 9, 0, time.UTC), v.Status.Conditions[0].LastTransitionTime.Time)
	assert.Nil(t, v.Status.Conditions[1].LastTransitionTime, "a pointer to a zero time comes back nil, as stored")
	check(v)

	// A hook's changes come back as stored too.
	v.Annotations["hook"] = "please"
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))
	assert.Equal(t, "ran", v.Annotations["hook"])
	assert.Nil(t, v.Labels)
	assert.Nil(t, v.Finalizers)
	check(v)

	// A time that cannot be encoded is 400, as before.
	bad := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "bad"}}
	bad.Status.Conditions = []resource.Condition{{Type: "Ready", LastTransitionTime: &resource.Time{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	err = s.Create(ctx, bad, store.CreateOptions{})
	assert.Equal(t, resource.ReasonBadRequest, resource.StatusOf(err).Reason, "%v", err)
	assert.Empty(t, store.ResultProblems())
}

// TestUpdate_leaves_the_stored_object_alone reads every revision an update started
// from again after the update (a list at exactly that revision, served by the
// cache): the update, which reads the shared stored object when no hook needs a copy,
// must not have changed it. (The package's tests check every object the cache serves
// against the stored bytes.)
func TestUpdate_leaves_the_stored_object_alone(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	var err error

	v := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "v",
		Labels: map[string]string{"a": "1"}, Finalizers: []string{"keep"}}}
	require.NoError(t, s.Create(ctx, v, store.CreateOptions{}))
	v.Status.Conditions = []resource.Condition{{Type: "Ready", Status: "True", LastTransitionTime: resource.NewTimePtr(time.Now())}}
	require.NoError(t, s.UpdateStatus(ctx, v, store.UpdateOptions{}))
	revs := []string{v.ResourceVersion}
	step := func(name string, change func(v *resource.VirtualClusterInstance), status bool) {
		t.Helper()
		change(v)
		if status {
			require.NoError(t, s.UpdateStatus(ctx, v, store.UpdateOptions{}), name)
		} else {
			require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}), name)
		}
		revs = append(revs, v.ResourceVersion)
		// The caller owns what it got: changing it changes nothing stored.
		v.Labels["caller"] = "x"
		v.Status.Conditions[0].LastTransitionTime.Time = time.Time{}
		delete(v.Labels, "caller")
		for _, rv := range revs {
			l := &resource.VirtualClusterInstanceList{}
			require.NoError(t, s.List(ctx, l, store.ListOptions{ResourceVersion: rv, ResourceVersionMatch: store.ResourceVersionMatchExact}), name)
		}
		require.NoError(t, s.Get(ctx, "p-a", "v", v, store.GetOptions{}))
	}
	// An update that writes nothing, or fails after reading, leaves the read
	// revision the latest: the next read is served what the update read.
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))
	require.NoError(t, s.Get(ctx, "p-a", "v", v, store.GetOptions{}))
	v.DeletionTimestamp = resource.NewTimePtr(time.Now())
	require.Error(t, s.Update(ctx, v, store.UpdateOptions{}))
	require.NoError(t, s.Get(ctx, "p-a", "v", v, store.GetOptions{}))
	step("labels", func(v *resource.VirtualClusterInstance) { v.Labels["b"] = "2" }, false)
	step("spec", func(v *resource.VirtualClusterInstance) { v.Spec.Description = "d" }, false)
	step("status", func(v *resource.VirtualClusterInstance) { v.Status.Phase = "Ready" }, true)
	step("no managedFields sent", func(v *resource.VirtualClusterInstance) { v.ManagedFields = nil; v.Spec.Parameters = "p" }, false)
	_, err = s.Delete(ctx, v, store.DeleteOptions{GracePeriodSeconds: ptrTo(int64(30))})
	require.NoError(t, err)
	revs = append(revs, v.ResourceVersion)
	step("terminating", func(v *resource.VirtualClusterInstance) { v.Spec.Description = "e" }, false)
	step("terminating, grace sent", func(v *resource.VirtualClusterInstance) { v.Annotations = map[string]string{"x": "y"} }, false)
	step("terminating, status", func(v *resource.VirtualClusterInstance) { v.Status.Message = "m" }, true)
	v.Finalizers = append(v.Finalizers, "new")
	require.Error(t, s.Update(ctx, v, store.UpdateOptions{}), "no new finalizers while terminating")
	require.NoError(t, s.Get(ctx, "p-a", "v", v, store.GetOptions{}))
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))
	require.NoError(t, s.Get(ctx, "p-a", "v", v, store.GetOptions{}))
	assert.Empty(t, store.ResultProblems())
}

func ptrTo[T any](v T) *T { return &v }

// TestWrite_leaves_the_callers_object_alone_until_it_commits checks that a write
// whose copy shares the caller's maps and lists (no hooks) changes nothing of the
// caller's object when it fails, and that what the caller holds afterwards shares
// nothing with what the store keeps.
func TestWrite_leaves_the_callers_object_alone_until_it_commits(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	var err error

	v := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "v",
		Labels: map[string]string{"a": "1"}, Finalizers: []string{"f"}},
		Spec: resource.VirtualClusterInstanceSpec{Owner: &resource.Owner{User: "u"}}}
	require.NoError(t, s.Create(ctx, v, store.CreateOptions{}))
	stale := v.DeepCopyResource().(*resource.VirtualClusterInstance)
	v.Spec.Description = "newer"
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))

	// A conflict: nothing of the caller's object changes.
	stale.Labels["b"] = "2"
	before := stale.DeepCopyResource()
	err = s.Update(ctx, stale, store.UpdateOptions{})
	require.Equal(t, resource.ReasonConflict, resource.StatusOf(err).Reason)
	assert.Equal(t, before, stale)
	// An invalid write: the same.
	bad := v.DeepCopyResource().(*resource.VirtualClusterInstance)
	bad.Labels["not a valid key!"] = "x"
	before = bad.DeepCopyResource()
	require.Error(t, s.Update(ctx, bad, store.UpdateOptions{}))
	assert.Equal(t, before, bad)

	// What the caller holds after a write is its own.
	v.Labels["c"] = "3"
	require.NoError(t, s.Update(ctx, v, store.UpdateOptions{}))
	v.Labels["c"] = "changed"
	v.Finalizers[0] = "changed"
	v.Spec.Owner.User = "changed"
	got := &resource.VirtualClusterInstance{}
	require.NoError(t, s.Get(ctx, "p-a", "v", got, store.GetOptions{}))
	assert.Equal(t, "3", got.Labels["c"])
	assert.Equal(t, []string{"f"}, got.Finalizers)
	assert.Equal(t, "u", got.Spec.Owner.User)
	assert.Empty(t, store.ResultProblems())
}

// newMemStore returns a store over a new memdb backend, both closed when the test
// ends.
func newMemStore(t *testing.T, opts store.Options) (*store.Store, *memdb.Backend) {
	t.Helper()
	b := memdb.New(memdb.Options{})
	t.Cleanup(func() { _ = b.Close() })
	s, err := store.New(b, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, b
}
