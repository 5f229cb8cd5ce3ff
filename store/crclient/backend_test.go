package crclient_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/crclient"
)

// The client on another backend: badger, on disk.
func TestWithBackend_badger(t *testing.T) {
	ctx := context.Background()
	b, err := badger.Open(t.TempDir(), badger.Options{NoSync: true})
	require.NoError(t, err)
	c, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStatusSubresource(&Widget{}).
		WithBackend(b).WithObjects(widget("ns", "w", 1, "red")).BuildClient()
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()

	var w Widget
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &w))
	stale := w.DeepCopy()
	w.Spec.Size = 2
	require.NoError(t, c.Update(ctx, &w))
	assert.Equal(t, int64(2), w.Generation)
	assert.True(t, apierrors.IsConflict(c.Update(ctx, stale)))
	var l WidgetList
	require.NoError(t, c.List(ctx, &l, client.MatchingFields{"metadata.name": "w"}))
	assert.Len(t, l.Items, 1)
	require.NoError(t, c.Delete(ctx, &w))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(&w), &Widget{})))
}
