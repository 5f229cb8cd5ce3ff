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
// without metadata.resourceVersion in: a missing object is 404, an existing one 422
// naming the field.
func TestUpdate_without_resourceVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	err := s.Update(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "missing"}}, store.UpdateOptions{})
	assert.Equal(t, resource.ReasonNotFound, resource.ReasonOf(err), "%v", err)

	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.CreateOptions{}))
	err = s.Update(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.UpdateOptions{})
	require.Equal(t, resource.ReasonInvalid, resource.ReasonOf(err), "%v", err)
	assert.Contains(t, err.Error(), "resourceVersion")
}
