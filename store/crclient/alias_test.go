package crclient_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The client hands the store the caller's labels, annotations and finalizers
// without copying them: neither the stored object nor the caller's result may share
// them afterwards.
func TestCreate_shares_no_maps_with_the_caller(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	w := widget("ns", "w", 1, "red")
	labels, annotations, finalizers := map[string]string{"a": "b"}, map[string]string{"c": "d"}, []string{"example.com/f"}
	w.Labels, w.Annotations, w.Finalizers = labels, annotations, finalizers
	require.NoError(t, c.Create(ctx, w))

	labels["a"], annotations["c"], finalizers[0] = "changed", "changed", "example.com/changed"
	var got Widget
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &got))
	assert.Equal(t, map[string]string{"a": "b"}, got.Labels)
	assert.Equal(t, map[string]string{"c": "d"}, got.Annotations)
	assert.Equal(t, []string{"example.com/f"}, got.Finalizers)
	assert.Equal(t, map[string]string{"a": "b"}, w.Labels, "the caller's result")
	assert.Equal(t, []string{"example.com/f"}, w.Finalizers, "the caller's result")
}
