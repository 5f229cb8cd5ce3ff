package crclient_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/store/crclient"
)

// scaleUp is code under test, written against controller-runtime's client.Client.
func scaleUp(ctx context.Context, c client.Client, key client.ObjectKey) error {
	var cm corev1.ConfigMap
	if err := c.Get(ctx, key, &cm); err != nil {
		return err
	}
	cm.Data["replicas"] = "2"
	return c.Update(ctx, &cm)
}

// A test written for the fake client runs against the store after changing only its
// constructor: the line commented out is the fake client's.
func Example() {
	ctx := context.Background()
	seed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data: map[string]string{"replicas": "1"}}

	// c := fake.NewClientBuilder().WithObjects(seed).Build()
	c := crclient.NewClientBuilder().WithObjects(seed).Build()

	var before corev1.ConfigMap
	_ = c.Get(ctx, client.ObjectKeyFromObject(seed), &before)
	if err := scaleUp(ctx, c, client.ObjectKeyFromObject(seed)); err != nil {
		fmt.Println(err)
		return
	}
	var after corev1.ConfigMap
	_ = c.Get(ctx, client.ObjectKeyFromObject(seed), &after)
	fmt.Println("replicas:", after.Data["replicas"])

	// The copy read before the update is stale: writing it is a conflict.
	before.Data["replicas"] = "3"
	err := c.Update(ctx, &before)
	fmt.Println("conflict:", apierrors.IsConflict(err))
	fmt.Println("not found:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nope"}, &corev1.ConfigMap{})))
	// Output:
	// replicas: 2
	// conflict: true
	// not found: true
}

// The client's clock moves only when the test steps it: a grace period runs out, and
// the store's reaper and garbage collector finish, inside Step.
func ExampleClient_Step() {
	ctx := context.Background()
	c, err := crclient.NewClientBuilder().BuildClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
	_ = c.Create(ctx, pod)
	_ = c.Delete(ctx, pod, client.GracePeriodSeconds(30))

	var got corev1.Pod
	err = c.Get(ctx, client.ObjectKeyFromObject(pod), &got)
	fmt.Println("terminating:", err == nil && got.DeletionTimestamp != nil)
	_ = c.Step(31 * time.Second)
	err = c.Get(ctx, client.ObjectKeyFromObject(pod), &got)
	fmt.Println("gone after the grace period:", apierrors.IsNotFound(err))
	// Output:
	// terminating: true
	// gone after the grace period: true
}

// Server-side apply: each manager owns the fields it applies; another manager's
// different value is a 409 Conflict naming the field, unless it forces.
func ExampleClient_Apply() {
	ctx := context.Background()
	c, err := crclient.NewClientBuilder().BuildClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	apply := func(manager, key, value string, opts ...client.ApplyOption) error {
		cm := corev1ac.ConfigMap("settings", "default").WithData(map[string]string{key: value})
		return c.Apply(ctx, cm, append(opts, client.FieldOwner(manager))...)
	}
	_ = apply("deployer", "replicas", "1")
	_ = apply("tuner", "cache", "64Mi") // another key: no conflict
	err = apply("tuner", "replicas", "3")
	fmt.Println("conflict:", apierrors.IsConflict(err), err.(apierrors.APIStatus).Status().Details.Causes[0].Field)
	// tuner's configuration is now replicas alone: cache, which only tuner
	// applied, is removed.
	_ = apply("tuner", "replicas", "3", client.ForceOwnership)

	var cm corev1.ConfigMap
	_ = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm)
	fmt.Println(cm.Data)
	// Output:
	// conflict: true .data.replicas
	// map[replicas:3]
}
