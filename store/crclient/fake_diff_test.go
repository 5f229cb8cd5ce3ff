package crclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/management-service/mgmt/store/crclient"
)

// TestDifferencesFromFake runs each behaviour of README's list "Use it instead of the
// fake client" against controller-runtime's fake client and this client, and checks
// what each answers: the fake client's departure from kube-apiserver, and this
// client's answer, which is kube-apiserver's.
func TestDifferencesFromFake(t *testing.T) {
	ctx := context.Background()
	build := func(t *testing.T, ours bool, objs ...client.Object) client.WithWatch {
		if !ours {
			return fake.NewClientBuilder().WithScheme(newScheme()).WithStatusSubresource(&Widget{}).WithObjects(objs...).Build()
		}
		c, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStatusSubresource(&Widget{}).WithObjects(objs...).BuildClient()
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	type outcome = any
	tests := []struct {
		name       string
		run        func(t *testing.T, c client.WithWatch) outcome
		fake, ours outcome
	}{
		{"create sets uid and creationTimestamp", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			require.NoError(t, c.Create(ctx, w))
			return w.UID != "" && !w.CreationTimestamp.IsZero()
		}, false, true},
		{"an invalid name is refused with 422", func(t *testing.T, c client.WithWatch) outcome {
			return apierrors.IsInvalid(c.Create(ctx, widget("ns", "Not_Valid", 1, "")))
		}, false, true},
		{"a spec change bumps generation", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			require.NoError(t, c.Create(ctx, w))
			w.Spec.Size = 2
			require.NoError(t, c.Update(ctx, w))
			return w.Generation
		}, int64(0), int64(2)},
		{"a custom resource's update without resourceVersion is 422", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			require.NoError(t, c.Create(ctx, w))
			w.ResourceVersion = ""
			return apierrors.IsInvalid(c.Update(ctx, w))
		}, false, true},
		{"an update that changes nothing keeps the resourceVersion", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			require.NoError(t, c.Create(ctx, w))
			before := w.ResourceVersion
			require.NoError(t, c.Update(ctx, w))
			return w.ResourceVersion == before
		}, false, true},
		{"no new finalizer on a terminating object", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			w.Finalizers = []string{"a/b"}
			require.NoError(t, c.Create(ctx, w))
			require.NoError(t, c.Delete(ctx, w))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(w), w))
			w.Finalizers = append(w.Finalizers, "c/d")
			return apierrors.IsInvalid(c.Update(ctx, w))
		}, false, true},
		{"owned objects are garbage collected", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			require.NoError(t, c.Create(ctx, w))
			cm := configMap("ns", "child", nil)
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: w.UID}}
			if cm.OwnerReferences[0].UID == "" {
				cm.OwnerReferences[0].UID = types.UID("none") // the fake client gave the owner no uid
			}
			require.NoError(t, c.Create(ctx, cm))
			require.NoError(t, c.Delete(ctx, w))
			if s, ok := c.(*crclient.Client); ok {
				require.NoError(t, s.Settle())
			}
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
		}, false, true},
		{"a grace period keeps the object until it runs out", func(t *testing.T, c client.WithWatch) outcome {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a"}}}}
			require.NoError(t, c.Create(ctx, pod))
			require.NoError(t, c.Delete(ctx, pod, client.GracePeriodSeconds(30)))
			return c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}) == nil
		}, false, true},
		{"a field selector without index is 400 BadRequest", func(t *testing.T, c client.WithWatch) outcome {
			err := c.List(ctx, &WidgetList{}, client.MatchingFields{"spec.color": "red"})
			require.Error(t, err)
			return apierrors.IsBadRequest(err)
		}, false, true},
		{"limit pages the list", func(t *testing.T, c client.WithWatch) outcome {
			for _, n := range []string{"a", "b", "c"} {
				require.NoError(t, c.Create(ctx, widget("ns", n, 1, "")))
			}
			var l WidgetList
			require.NoError(t, c.List(ctx, &l, client.Limit(2)))
			return len(l.Items) == 2 && l.Continue != ""
		}, false, true},
		{"a watch without resourceVersion starts with the existing objects", func(t *testing.T, c client.WithWatch) outcome {
			require.NoError(t, c.Create(ctx, widget("ns", "a", 1, "")))
			w, err := c.Watch(ctx, &WidgetList{})
			require.NoError(t, err)
			defer w.Stop()
			select {
			case ev := <-w.ResultChan():
				return ev.Type == watch.Added
			case <-time.After(300 * time.Millisecond):
				return false
			}
		}, false, true},
		{"a watch from a resourceVersion resumes after it", func(t *testing.T, c client.WithWatch) outcome {
			a := widget("ns", "a", 1, "")
			require.NoError(t, c.Create(ctx, a))
			require.NoError(t, c.Create(ctx, widget("ns", "b", 1, "")))
			w, err := c.Watch(ctx, &WidgetList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: a.ResourceVersion}})
			require.NoError(t, err)
			defer w.Stop()
			select {
			case ev := <-w.ResultChan():
				return ev.Object.(*Widget).Name == "b"
			case <-time.After(300 * time.Millisecond):
				return false
			}
		}, false, true},
		{"resourceVersions are one sequence across objects", func(t *testing.T, c client.WithWatch) outcome {
			a, b := widget("ns", "a", 1, ""), widget("ns", "b", 1, "")
			require.NoError(t, c.Create(ctx, a))
			require.NoError(t, c.Create(ctx, b))
			return a.ResourceVersion != b.ResourceVersion
		}, false, true},
		{"status written on create of a kind with a status subresource is dropped", func(t *testing.T, c client.WithWatch) outcome {
			w := widget("ns", "w", 1, "")
			w.Status.Ready = true
			require.NoError(t, c.Create(ctx, w))
			var got Widget
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(w), &got))
			return got.Status.Ready
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.fake, tt.run(t, build(t, false)), "fake client")
			assert.Equal(t, tt.ours, tt.run(t, build(t, true)), "crclient (kube-apiserver's answer)")
		})
	}
}
