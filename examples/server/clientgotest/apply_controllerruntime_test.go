package clientgotest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestControllerRuntimeApply runs controller-runtime's client.Apply (and the status
// subresource's Apply) through the example server: create, re-apply unchanged,
// a conflict with its FieldManagerConflict cause, ForceOwnership, and list-map
// items of two owners merged by key.
func TestControllerRuntimeApply(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", startApp(t))
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	project := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "management.service/v1", "kind": "Project",
			"metadata": map[string]any{"name": "crt"}, "spec": spec,
		}}
	}

	u := project(map[string]any{"displayName": "A", "allowedClusters": []any{map[string]any{"name": "c1"}}})
	require.NoError(t, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("ctl-a")))
	rv := u.GetResourceVersion()
	require.NotEmpty(t, rv)
	mf := u.GetManagedFields()
	require.Len(t, mf, 1)
	assert.Equal(t, metav1.ManagedFieldsOperationApply, mf[0].Operation)

	u = project(map[string]any{"displayName": "A", "allowedClusters": []any{map[string]any{"name": "c1"}}})
	require.NoError(t, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("ctl-a")))
	assert.Equal(t, rv, u.GetResourceVersion(), "re-applying changes nothing")

	u = project(map[string]any{"displayName": "B", "allowedClusters": []any{map[string]any{"name": "c2"}}})
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("ctl-b"))
	require.True(t, apierrors.IsConflict(err), "%v", err)
	var se *apierrors.StatusError
	require.ErrorAs(t, err, &se)
	require.Len(t, se.ErrStatus.Details.Causes, 1)
	assert.Equal(t, ".spec.displayName", se.ErrStatus.Details.Causes[0].Field)
	assert.Equal(t, `conflict with "ctl-a"`, se.ErrStatus.Details.Causes[0].Message)

	u = project(map[string]any{"displayName": "B", "allowedClusters": []any{map[string]any{"name": "c2"}}})
	require.NoError(t, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("ctl-b"), client.ForceOwnership))
	display, _, _ := unstructured.NestedString(u.Object, "spec", "displayName")
	assert.Equal(t, "B", display)
	clusters, _, _ := unstructured.NestedSlice(u.Object, "spec", "allowedClusters")
	assert.Equal(t, []any{map[string]any{"name": "c1"}, map[string]any{"name": "c2"}}, clusters, "merged by key")

	vci := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "management.service/v1", "kind": "VirtualClusterInstance",
		"metadata": map[string]any{"name": "dev", "namespace": "p-a"},
		"status":   map[string]any{"phase": "Ready"},
	}}
	require.NoError(t, c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(vci), client.FieldOwner("ctl")))
	phase, _, _ := unstructured.NestedString(vci.Object, "status", "phase")
	assert.Equal(t, "Ready", phase)
}
