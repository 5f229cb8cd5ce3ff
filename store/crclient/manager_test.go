package crclient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/management-service/mgmt/store/crclient"
)

const widgetFinalizer = "example.com/cleanup"

// widgetReconciler adds a finalizer, keeps a child ConfigMap (owned, controller
// reference) holding the widget's size, writes status, and deletes the child and
// drops the finalizer when the widget is deleted.
type widgetReconciler struct {
	c client.Client
}

func childName(w *Widget) string { return w.Name + "-child" }

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w Widget
	if err := r.c.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: childName(&w)}}
		if err := r.c.Delete(ctx, child); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if controllerutil.RemoveFinalizer(&w, widgetFinalizer) {
			return ctrl.Result{}, r.c.Update(ctx, &w)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&w, widgetFinalizer) {
		if err := r.c.Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: childName(&w)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.c, child, func() error {
		child.Data = map[string]string{"size": fmt.Sprint(w.Spec.Size)}
		return controllerutil.SetControllerReference(&w, child, r.c.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if w.Status.ObservedGeneration != w.Generation || !w.Status.Ready {
		w.Status.Ready, w.Status.ObservedGeneration = true, w.Generation
		if err := r.c.Status().Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// TestManager runs the reconciler in a controller-runtime manager whose client,
// RESTMapper and informers all go through the store-backed client.
func TestManager(t *testing.T) {
	c, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStatusSubresource(&Widget{}).BuildClient()
	require.NoError(t, err)
	defer c.Close()
	mgr, err := manager.New(crclient.RESTConfig(), c.ManagerOptions(manager.Options{}))
	require.NoError(t, err)
	skip := true
	require.NoError(t, ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{SkipNameValidation: &skip}).
		Complete(&widgetReconciler{c: mgr.GetClient()}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	w := widget("ns", "w", 3, "red")
	require.NoError(t, c.Create(ctx, w))
	key := client.ObjectKeyFromObject(w)
	childKey := client.ObjectKey{Namespace: "ns", Name: "w-child"}

	var got Widget
	var child corev1.ConfigMap
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		require.NoError(ct, c.Get(ctx, key, &got))
		assert.Contains(ct, got.Finalizers, widgetFinalizer)
		assert.True(ct, got.Status.Ready)
		assert.Equal(ct, int64(1), got.Status.ObservedGeneration)
		require.NoError(ct, c.Get(ctx, childKey, &child))
		assert.Equal(ct, "3", child.Data["size"])
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, child.OwnerReferences, 1)
	assert.Equal(t, got.UID, child.OwnerReferences[0].UID)

	// A spec change reaches the child and the status.
	got.Spec.Size = 5
	require.NoError(t, c.Update(ctx, &got))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		require.NoError(ct, c.Get(ctx, key, &got))
		assert.Equal(ct, int64(2), got.Status.ObservedGeneration)
		require.NoError(ct, c.Get(ctx, childKey, &child))
		assert.Equal(ct, "5", child.Data["size"])
	}, 10*time.Second, 20*time.Millisecond)

	// Deleting the child: the controller owns it and puts it back.
	require.NoError(t, c.Delete(ctx, &child))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		var again corev1.ConfigMap
		require.NoError(ct, c.Get(ctx, childKey, &again))
		assert.NotEqual(ct, child.UID, again.UID)
	}, 10*time.Second, 20*time.Millisecond)

	// Deleting the widget: the finalizer holds it until the controller cleaned up.
	require.NoError(t, c.Delete(ctx, &got))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.True(ct, apierrors.IsNotFound(c.Get(ctx, key, &Widget{})), "widget gone")
		assert.True(ct, apierrors.IsNotFound(c.Get(ctx, childKey, &corev1.ConfigMap{})), "child gone")
	}, 10*time.Second, 20*time.Millisecond)
}
