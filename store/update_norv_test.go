package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// TestUpdate_without_resourceVersion checks the order kube-apiserver answers an update
// without metadata.resourceVersion in: a missing object is 404, a uid that is not the
// stored object's 409 (a precondition of the write), else 422 naming the field, with
// details naming the resource in the kind's place as kube-apiserver's do.
func TestUpdate_without_resourceVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	err := s.Update(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "missing"}}, store.UpdateOptions{})
	assert.Equal(t, resource.ReasonNotFound, resource.ReasonOf(err), "%v", err)

	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.CreateOptions{}))
	err = s.Update(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", UID: "other"}}, store.UpdateOptions{})
	require.Equal(t, resource.ReasonConflict, resource.ReasonOf(err), "%v", err)
	assert.Contains(t, err.Error(), "UID in precondition: other")

	err = s.Update(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.UpdateOptions{})
	require.Equal(t, resource.ReasonInvalid, resource.ReasonOf(err), "%v", err)
	st := resource.StatusOf(err)
	require.NotNil(t, st.Details)
	assert.Equal(t, "management.service", st.Details.Group)
	assert.Equal(t, "projects", st.Details.Kind)
	assert.Equal(t, "a", st.Details.Name)
	require.Len(t, st.Details.Causes, 1)
	assert.Equal(t, "metadata.resourceVersion", st.Details.Causes[0].Field)
	assert.Equal(t, `projects.management.service "a" is invalid: metadata.resourceVersion: Invalid value: "": must be specified for an update`, st.Message)
}

// TestDelete_precondition_details checks the 409 of a delete's failed precondition
// as kube-apiserver answers it: the details name the kind, not the resource.
func TestDelete_precondition_details(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.CreateOptions{}))
	other, stale := "other", "999"
	for _, pre := range []store.Preconditions{{UID: &other}, {ResourceVersion: &stale}} {
		_, err := s.Delete(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.DeleteOptions{Preconditions: pre})
		require.Equal(t, resource.ReasonConflict, resource.ReasonOf(err), "%v", err)
		st := resource.StatusOf(err)
		require.NotNil(t, st.Details)
		assert.Equal(t, resource.StatusDetails{Group: "management.service", Kind: "Project", Name: "a"}, *st.Details)
		assert.Contains(t, st.Message, `Operation cannot be fulfilled on Project.management.service "a": the `)
	}
}

// TestDeleteCollection_answers_the_list_as_listed checks that DeleteCollection leaves
// its list holding the objects as they were listed, as kube-apiserver answers: an
// object a finalizer holds is not shown marked, and every item keeps the
// resourceVersion it was listed with.
func TestDeleteCollection_answers_the_list_as_listed(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	held := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "held", Finalizers: []string{"example.com/f"}}}
	free := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "free"}}
	require.NoError(t, s.Create(ctx, held, store.CreateOptions{}))
	require.NoError(t, s.Create(ctx, free, store.CreateOptions{}))
	list := &resource.ProjectList{}
	n, err := s.DeleteCollection(ctx, list, store.ListOptions{}, store.DeleteOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.Len(t, list.Items, 2)
	want := map[string]string{"held": held.ResourceVersion, "free": free.ResourceVersion}
	for _, it := range list.Items {
		assert.Equal(t, want[it.Name], it.ResourceVersion, it.Name)
		assert.Nil(t, it.DeletionTimestamp, it.Name)
	}
	got := &resource.Project{}
	require.NoError(t, s.Get(ctx, "", "held", got, store.GetOptions{}))
	assert.NotNil(t, got.DeletionTimestamp, "the held object is marked all the same")
	err = s.Get(ctx, "", "free", got, store.GetOptions{})
	assert.Equal(t, resource.ReasonNotFound, resource.ReasonOf(err))
}
