package crclient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/crclient"
	"github.com/management-service/mgmt/store/storetest"
)

// newClient is the client most tests use: Widget has a status subresource and an
// index on spec.color.
func newClient(t *testing.T, objs ...client.Object) *crclient.Client {
	t.Helper()
	c, err := crclient.NewClientBuilder().WithScheme(newScheme()).
		WithStatusSubresource(&Widget{}).
		WithIndex(&Widget{}, "spec.color", func(o client.Object) []string { return []string{o.(*Widget).Spec.Color} }).
		WithObjects(objs...).BuildClient()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func widget(ns, name string, size int, color string) *Widget {
	return &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: WidgetSpec{Size: size, Color: color}}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func TestCreateAndGet(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		obj   client.Object
		check func(t *testing.T, err error)
	}{
		{"typed custom resource", widget("ns", "w", 1, "red"), func(t *testing.T, err error) { require.NoError(t, err) }},
		{"built-in ConfigMap", configMap("ns", "c", map[string]string{"a": "b"}), func(t *testing.T, err error) { require.NoError(t, err) }},
		{"unstructured", func() client.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
			u.SetNamespace("ns")
			u.SetName("u")
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "size")
			return u
		}(), func(t *testing.T, err error) { require.NoError(t, err) }},
		{"generateName", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}},
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"already exists", widget("ns", "seeded", 1, ""), func(t *testing.T, err error) {
			assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
		}},
		{"invalid name", widget("ns", "Not_Valid", 1, ""), func(t *testing.T, err error) {
			assert.True(t, apierrors.IsInvalid(err), "%v", err)
		}},
		{"resourceVersion set", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rv", ResourceVersion: "5"}},
			func(t *testing.T, err error) { assert.True(t, apierrors.IsBadRequest(err), "%v", err) }},
	}
	c := newClient(t, widget("ns", "seeded", 1, ""))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Create(ctx, tt.obj)
			tt.check(t, err)
			if err != nil {
				return
			}
			assert.NotEmpty(t, tt.obj.GetUID())
			assert.NotEmpty(t, tt.obj.GetResourceVersion())
			assert.Equal(t, int64(1), tt.obj.GetGeneration())
			got := tt.obj.DeepCopyObject().(client.Object)
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(tt.obj), got))
			assert.Equal(t, tt.obj, got)
		})
	}

	t.Run("typed objects come back without TypeMeta, unstructured with it", func(t *testing.T) {
		var w Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &w))
		assert.Empty(t, w.Kind)
		assert.Empty(t, w.ManagedFields, "managedFields are left out unless WithReturnManagedFields")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widgetGV.WithKind("Widget"))
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, u))
		assert.Equal(t, "Widget", u.GetKind())
		size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
		assert.Equal(t, int64(1), size)
	})
	t.Run("not found", func(t *testing.T) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "nope"}, &Widget{})
		require.True(t, apierrors.IsNotFound(err), "%v", err)
		var se *apierrors.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "widgets", se.ErrStatus.Details.Kind)
		assert.Equal(t, "example.com", se.ErrStatus.Details.Group)
	})
	t.Run("our own kinds through unstructured", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "management.service", Version: "v1", Kind: "Project"})
		u.SetName("p")
		require.NoError(t, c.Create(ctx, u))
		assert.NotEmpty(t, u.GetUID())
		ns, err := c.IsObjectNamespaced(u)
		require.NoError(t, err)
		assert.False(t, ns)
	})
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, widget("ns", "w", 1, "red"), configMap("ns", "c", nil))
	var w Widget
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &w))
	stale := w.DeepCopy()

	w.Spec.Size = 2
	w.Status.Ready = true
	require.NoError(t, c.Update(ctx, &w))
	assert.Equal(t, int64(2), w.Generation, "a spec change bumps generation")
	assert.False(t, w.Status.Ready, "Update keeps the stored status of a kind with a status subresource")

	tests := []struct {
		name string
		obj  client.Object
		is   func(error) bool
	}{
		{"stale resourceVersion", stale, apierrors.IsConflict},
		{"custom resource without resourceVersion", func() client.Object {
			o := w.DeepCopy()
			o.ResourceVersion = ""
			return o
		}(), apierrors.IsInvalid},
		{"missing object", widget("ns", "missing", 1, ""), apierrors.IsNotFound},
		{"changed uid", func() client.Object {
			o := w.DeepCopy()
			o.UID = "other"
			return o
		}(), apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Update(ctx, tt.obj)
			assert.True(t, tt.is(err), "%v", err)
		})
	}

	t.Run("built-in kind without resourceVersion updates the stored version", func(t *testing.T) {
		cm := configMap("ns", "c", map[string]string{"k": "v"})
		require.NoError(t, c.Update(ctx, cm))
		assert.Equal(t, "v", cm.Data["k"])
		assert.NotEmpty(t, cm.ResourceVersion)
	})
	t.Run("an update that changes nothing keeps the resourceVersion", func(t *testing.T) {
		before := w.ResourceVersion
		require.NoError(t, c.Update(ctx, &w))
		assert.Equal(t, before, w.ResourceVersion)
	})
	t.Run("dry run stores nothing", func(t *testing.T) {
		o := w.DeepCopy()
		o.Spec.Size = 50
		require.NoError(t, c.Update(ctx, o, client.DryRunAll))
		var got Widget
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(o), &got))
		assert.Equal(t, 2, got.Spec.Size)
	})
}

func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, widget("ns", "w", 1, "red"), configMap("ns", "c", nil))
	var w Widget
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &w))

	w.Status.Ready = true
	w.Spec.Size = 9
	require.NoError(t, c.Status().Update(ctx, &w))
	assert.True(t, w.Status.Ready)
	assert.Equal(t, 1, w.Spec.Size, "a status write changes only status")
	assert.Equal(t, int64(1), w.Generation)

	patch := client.MergeFrom(w.DeepCopy())
	w.Status.ObservedGeneration = 1
	require.NoError(t, c.Status().Patch(ctx, &w, patch))
	assert.Equal(t, int64(1), w.Status.ObservedGeneration)
	assert.True(t, w.Status.Ready)

	var sub Widget
	require.NoError(t, c.SubResource("status").Get(ctx, &w, &sub))
	assert.True(t, sub.Status.Ready)

	tests := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"kind without status subresource", c.Status().Update(ctx, configMap("ns", "c", nil)), apierrors.IsNotFound},
		{"other subresource", c.SubResource("scale").Update(ctx, &w), apierrors.IsNotFound},
		{"create on status", c.Status().Create(ctx, &w, &Widget{}), apierrors.IsMethodNotSupported},
		{"stale status update", func() error {
			o := w.DeepCopy()
			o.ResourceVersion = "1"
			return c.Status().Update(ctx, o)
		}(), apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.True(t, tt.is(tt.err), "%v", tt.err) })
	}
}

func TestPatch(t *testing.T) {
	ctx := context.Background()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a:1"}, {Name: "b", Image: "b:1"}}}}}}
	c := newClient(t, widget("ns", "w", 1, "red"), configMap("ns", "c", map[string]string{"a": "1"}), dep)

	t.Run("merge patch", func(t *testing.T) {
		cm := configMap("ns", "c", nil)
		require.NoError(t, c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"b":"2"}}`))))
		assert.Equal(t, map[string]string{"a": "1", "b": "2"}, cm.Data)
	})
	t.Run("JSON patch", func(t *testing.T) {
		w := widget("ns", "w", 0, "")
		require.NoError(t, c.Patch(ctx, w, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":7}]`))))
		assert.Equal(t, 7, w.Spec.Size)
		assert.Equal(t, int64(2), w.Generation)
	})
	t.Run("strategic merge patch merges containers by name", func(t *testing.T) {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}
		require.NoError(t, c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}`))))
		require.Len(t, d.Spec.Template.Spec.Containers, 2)
		assert.Equal(t, "a:1", d.Spec.Template.Spec.Containers[0].Image)
		assert.Equal(t, "b:2", d.Spec.Template.Spec.Containers[1].Image)
	})
	t.Run("MergeFrom of a typed object", func(t *testing.T) {
		var w Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &w))
		base := w.DeepCopy()
		w.Spec.Color = "blue"
		require.NoError(t, c.Patch(ctx, &w, client.MergeFrom(base)))
		assert.Equal(t, "blue", w.Spec.Color)
	})

	stale := widget("ns", "w", 0, "")
	stale.ResourceVersion = "1"
	tests := []struct {
		name  string
		obj   client.Object
		patch client.Patch
		is    func(error) bool
	}{
		{"optimistic lock on a stale version", stale,
			client.MergeFromWithOptions(stale.DeepCopy(), client.MergeFromWithOptimisticLock{}), apierrors.IsConflict},
		{"missing object", widget("ns", "gone", 0, ""), client.RawPatch(types.MergePatchType, []byte(`{}`)), apierrors.IsNotFound},
		{"server-side apply without field manager", widget("ns", "w", 0, ""), client.RawPatch(types.ApplyPatchType, []byte(`{}`)), apierrors.IsInvalid},
		{"strategic merge on a custom resource", widget("ns", "w", 0, ""), client.RawPatch(types.StrategicMergePatchType, []byte(`{}`)), apierrors.IsUnsupportedMediaType},
		{"malformed merge patch", widget("ns", "w", 0, ""), client.RawPatch(types.MergePatchType, []byte(`{`)), apierrors.IsBadRequest},
		{"JSON patch test that fails", widget("ns", "w", 0, ""), client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"test","path":"/spec/size","value":99}]`)), apierrors.IsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Patch(ctx, tt.obj, tt.patch)
			assert.True(t, tt.is(err), "%v", err)
		})
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	fin := widget("ns", "fin", 1, "")
	fin.Finalizers = []string{"example.com/keep"}
	c := newClient(t, fin, widget("ns", "plain", 1, ""))

	require.NoError(t, c.Delete(ctx, widget("ns", "plain", 0, "")))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "plain"}, &Widget{})))

	t.Run("finalizers keep a terminating object until they are removed", func(t *testing.T) {
		require.NoError(t, c.Delete(ctx, widget("ns", "fin", 0, "")))
		var w Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "fin"}, &w))
		require.NotNil(t, w.DeletionTimestamp)
		assert.Equal(t, int64(2), w.Generation, "deletion bumps generation")
		w.Finalizers = append(w.Finalizers, "example.com/new")
		assert.True(t, apierrors.IsInvalid(c.Update(ctx, w.DeepCopy())), "no new finalizers on a terminating object")
		w.Finalizers = nil
		require.NoError(t, c.Update(ctx, &w))
		assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "fin"}, &Widget{})))
	})

	tests := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"missing", c.Delete(ctx, widget("ns", "none", 0, "")), apierrors.IsNotFound},
		{"uid precondition", func() error {
			require.NoError(t, c.Create(ctx, widget("ns", "pre", 0, "")))
			return c.Delete(ctx, widget("ns", "pre", 0, ""), client.Preconditions{UID: ptr(types.UID("other"))})
		}(), apierrors.IsConflict},
		{"resourceVersion precondition", c.Delete(ctx, widget("ns", "pre", 0, ""), client.Preconditions{ResourceVersion: ptr("1")}), apierrors.IsConflict},
		{"bad propagation policy", c.Delete(ctx, widget("ns", "pre", 0, ""), client.PropagationPolicy("Sideways")), apierrors.IsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.True(t, tt.is(tt.err), "%v", tt.err) })
	}
}

func ptr[T any](v T) *T { return &v }

func TestDeleteAllOf(t *testing.T) {
	ctx := context.Background()
	var objs []client.Object
	for i := range 6 {
		w := widget("ns", fmt.Sprintf("w%d", i), i, []string{"red", "blue"}[i%2])
		w.Labels = map[string]string{"half": fmt.Sprint(i < 3)}
		objs = append(objs, w)
	}
	objs = append(objs, widget("other", "x", 0, "red"))
	c := newClient(t, objs...)
	names := func() []string {
		var l WidgetList
		require.NoError(t, c.List(ctx, &l))
		var out []string
		for _, w := range l.Items {
			out = append(out, w.Namespace+"/"+w.Name)
		}
		return out
	}
	require.NoError(t, c.DeleteAllOf(ctx, &Widget{}, client.InNamespace("ns"), client.MatchingLabels{"half": "true"}))
	assert.Equal(t, []string{"ns/w3", "ns/w4", "ns/w5", "other/x"}, names())
	require.NoError(t, c.DeleteAllOf(ctx, &Widget{}, client.InNamespace("ns"), client.MatchingFields{"spec.color": "blue"}))
	assert.Equal(t, []string{"ns/w4", "other/x"}, names())
	err := c.DeleteAllOf(ctx, &Widget{}, client.MatchingFields{"spec.size": "1"})
	assert.True(t, apierrors.IsBadRequest(err), "no index: %v", err)
}

func TestList(t *testing.T) {
	ctx := context.Background()
	var objs []client.Object
	for i := range 10 {
		w := widget([]string{"a", "b"}[i%2], fmt.Sprintf("w%d", i), i, []string{"red", "blue", "green"}[i%3])
		w.Labels = map[string]string{"mod": fmt.Sprint(i % 5)}
		objs = append(objs, w)
	}
	c := newClient(t, objs...)
	tests := []struct {
		name string
		opts []client.ListOption
		want []string
		is   func(error) bool
	}{
		{"all", nil, []string{"a/w0", "a/w2", "a/w4", "a/w6", "a/w8", "b/w1", "b/w3", "b/w5", "b/w7", "b/w9"}, nil},
		{"namespace", []client.ListOption{client.InNamespace("b")}, []string{"b/w1", "b/w3", "b/w5", "b/w7", "b/w9"}, nil},
		{"label", []client.ListOption{client.MatchingLabels{"mod": "2"}}, []string{"a/w2", "b/w7"}, nil},
		{"label set-based", []client.ListOption{client.MatchingLabelsSelector{Selector: mustSelector(t, "mod in (0,1)")}},
			[]string{"a/w0", "a/w6", "b/w1", "b/w5"}, nil},
		{"metadata.name", []client.ListOption{client.MatchingFields{"metadata.name": "w3"}}, []string{"b/w3"}, nil},
		{"metadata.namespace", []client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("metadata.namespace", "a")}},
			[]string{"b/w1", "b/w3", "b/w5", "b/w7", "b/w9"}, nil},
		{"index", []client.ListOption{client.MatchingFields{"spec.color": "green"}}, []string{"a/w2", "a/w8", "b/w5"}, nil},
		{"index and label", []client.ListOption{client.MatchingFields{"spec.color": "red"}, client.MatchingLabels{"mod": "1"}}, []string{"a/w6"}, nil},
		{"field without index", []client.ListOption{client.MatchingFields{"spec.size": "3"}}, nil, apierrors.IsBadRequest},
		{"bad label selector", []client.ListOption{&client.ListOptions{Raw: &metav1.ListOptions{LabelSelector: "a in (("}}}, nil, apierrors.IsBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l WidgetList
			err := c.List(ctx, &l, tt.opts...)
			if tt.is != nil {
				assert.True(t, tt.is(err), "%v", err)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, w := range l.Items {
				got = append(got, w.Namespace+"/"+w.Name)
				assert.Empty(t, w.Kind)
			}
			assert.Equal(t, tt.want, got)
			assert.NotEmpty(t, l.ResourceVersion)
		})
	}

	t.Run("limit and continue", func(t *testing.T) {
		var got []string
		opts := []client.ListOption{client.Limit(4)}
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5)
			var l WidgetList
			require.NoError(t, c.List(ctx, &l, opts...))
			for _, w := range l.Items {
				got = append(got, w.Name)
			}
			if l.Continue == "" {
				break
			}
			opts = []client.ListOption{client.Limit(4), client.Continue(l.Continue)}
		}
		assert.Len(t, got, 10)
	})
	t.Run("bad continue token", func(t *testing.T) {
		err := c.List(ctx, &WidgetList{}, client.Continue("garbage"))
		assert.True(t, apierrors.IsBadRequest(err), "%v", err)
	})
	t.Run("unstructured list", func(t *testing.T) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(widgetGV.WithKind("WidgetList"))
		require.NoError(t, c.List(ctx, l, client.InNamespace("a"), client.MatchingFields{"spec.color": "red"}))
		require.Len(t, l.Items, 2)
		assert.Equal(t, "Widget", l.Items[0].GetKind())
		assert.Equal(t, "WidgetList", l.GetKind())
	})
	t.Run("metadata-only list", func(t *testing.T) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(widgetGV.WithKind("WidgetList"))
		require.NoError(t, c.List(ctx, l, client.InNamespace("b")))
		require.Len(t, l.Items, 5)
		assert.Equal(t, "w1", l.Items[0].Name)
	})
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, widget("ns", "a", 1, "red"))
	w, err := c.Watch(ctx, &WidgetList{}, client.InNamespace("ns"))
	require.NoError(t, err)
	defer w.Stop()
	next := func() watch.Event {
		t.Helper()
		select {
		case ev := <-w.ResultChan():
			return ev
		case <-time.After(5 * time.Second):
			require.FailNow(t, "no event")
			return watch.Event{}
		}
	}
	ev := next()
	assert.Equal(t, watch.Added, ev.Type, "a watch without resourceVersion starts with the existing objects")
	first := ev.Object.(*Widget)
	assert.Equal(t, "a", first.Name)

	b := widget("ns", "b", 2, "blue")
	require.NoError(t, c.Create(ctx, b))
	ev = next()
	assert.Equal(t, watch.Added, ev.Type)
	assert.Equal(t, "b", ev.Object.(*Widget).Name)
	b.Spec.Size = 3
	require.NoError(t, c.Update(ctx, b))
	ev = next()
	assert.Equal(t, watch.Modified, ev.Type)
	assert.Equal(t, 3, ev.Object.(*Widget).Spec.Size)
	require.NoError(t, c.Delete(ctx, b))
	ev = next()
	assert.Equal(t, watch.Deleted, ev.Type)

	t.Run("resume from a resourceVersion", func(t *testing.T) {
		w2, err := c.Watch(ctx, &WidgetList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: first.ResourceVersion}})
		require.NoError(t, err)
		defer w2.Stop()
		var types []watch.EventType
		for range 3 {
			select {
			case ev := <-w2.ResultChan():
				types = append(types, ev.Type)
			case <-time.After(5 * time.Second):
				require.FailNow(t, "no event")
			}
		}
		assert.Equal(t, []watch.EventType{watch.Added, watch.Modified, watch.Deleted}, types)
	})
	t.Run("indexed field selector", func(t *testing.T) {
		w3, err := c.Watch(ctx, &WidgetList{}, client.MatchingFields{"spec.color": "green"})
		require.NoError(t, err)
		defer w3.Stop()
		require.NoError(t, c.Create(ctx, widget("ns", "r", 0, "red")))
		require.NoError(t, c.Create(ctx, widget("ns", "g", 0, "green")))
		select {
		case ev := <-w3.ResultChan():
			assert.Equal(t, "g", ev.Object.(*Widget).Name)
		case <-time.After(5 * time.Second):
			require.FailNow(t, "no event")
		}
	})
	t.Run("metadata only", func(t *testing.T) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(widgetGV.WithKind("WidgetList"))
		w4, err := c.Watch(ctx, l, client.InNamespace("ns"))
		require.NoError(t, err)
		defer w4.Stop()
		select {
		case ev := <-w4.ResultChan():
			p, ok := ev.Object.(*metav1.PartialObjectMetadata)
			require.True(t, ok, "%T", ev.Object)
			assert.Equal(t, "Widget", p.Kind)
			assert.NotEmpty(t, p.Name)
		case <-time.After(5 * time.Second):
			require.FailNow(t, "no event")
		}
	})
	t.Run("a resourceVersion from the future", func(t *testing.T) {
		_, err := c.Watch(ctx, &WidgetList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "999999"}})
		assert.True(t, apierrors.IsTimeout(err), "%v", err)
	})
}

func TestGarbageCollectionAndClock(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, widget("ns", "owner", 1, ""))
	var owner Widget
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "owner"}, &owner))
	cm := configMap("ns", "child", nil)
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "owner", UID: owner.UID}}
	require.NoError(t, c.Create(ctx, cm))

	require.NoError(t, c.Delete(ctx, &owner))
	require.NoError(t, c.Settle())
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})), "the collector deleted the dependent")

	t.Run("a grace period runs out when the clock steps", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a"}}}}
		require.NoError(t, c.Create(ctx, pod))
		require.NoError(t, c.Delete(ctx, pod, client.GracePeriodSeconds(30)))
		var got corev1.Pod
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(pod), &got))
		require.NotNil(t, got.DeletionTimestamp)
		assert.Equal(t, c.Clock().Now().Add(30*time.Second).UTC(), got.DeletionTimestamp.UTC())
		require.NoError(t, c.Step(31*time.Second))
		assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pod), &got)))
	})
}

func TestBuilder(t *testing.T) {
	ctx := context.Background()
	t.Run("seeded status, lists, runtime objects and a terminating object", func(t *testing.T) {
		w := widget("ns", "w", 1, "")
		w.Status.Ready = true
		term := configMap("ns", "term", nil)
		term.Finalizers = []string{"x/y"}
		term.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		c, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStatusSubresource(&Widget{}).
			WithObjects(w, term).
			WithLists(&corev1.ConfigMapList{Items: []corev1.ConfigMap{*configMap("ns", "l1", nil)}}).
			WithRuntimeObjects(configMap("ns", "r1", nil)).BuildClient()
		require.NoError(t, err)
		defer c.Close()
		var got Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &got))
		assert.True(t, got.Status.Ready)
		assert.Empty(t, w.ResourceVersion, "the seed objects are not changed")
		var cms corev1.ConfigMapList
		require.NoError(t, c.List(ctx, &cms))
		assert.Len(t, cms.Items, 3)
		var tc corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(term), &tc))
		assert.NotNil(t, tc.DeletionTimestamp)
	})
	t.Run("a terminating seed without finalizers is refused", func(t *testing.T) {
		bad := configMap("ns", "bad", nil)
		bad.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		_, err := crclient.NewClientBuilder().WithObjects(bad).BuildClient()
		assert.ErrorContains(t, err, "deletionTimestamp")
	})
	t.Run("interceptors", func(t *testing.T) {
		calls := 0
		c := crclient.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				calls++
				return c.Create(ctx, obj, opts...)
			}}).Build()
		require.NoError(t, c.Create(ctx, configMap("ns", "x", nil)))
		assert.Equal(t, 1, calls)
	})
	t.Run("managed fields on request", func(t *testing.T) {
		c, err := crclient.NewClientBuilder().WithReturnManagedFields().BuildClient()
		require.NoError(t, err)
		defer c.Close()
		cm := configMap("ns", "m", map[string]string{"a": "b"})
		require.NoError(t, c.Create(ctx, cm, client.FieldOwner("me")))
		require.NotEmpty(t, cm.ManagedFields)
		assert.Equal(t, "me", cm.ManagedFields[0].Manager)
	})
	t.Run("JSON Schema validation", func(t *testing.T) {
		c, err := crclient.NewClientBuilder().WithScheme(newScheme()).
			WithJSONSchema(&Widget{}, []byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","maximum":10}}}}}`)).
			BuildClient()
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Create(ctx, widget("ns", "ok", 10, "")))
		err = c.Create(ctx, widget("ns", "big", 11, ""))
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
	})
	t.Run("RESTMapper, GroupVersionKindFor, IsObjectNamespaced", func(t *testing.T) {
		c := newClient(t)
		m, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1")
		require.NoError(t, err)
		assert.Equal(t, "widgets", m.Resource.Resource)
		m, err = c.RESTMapper().RESTMapping(schema.GroupKind{Kind: "Namespace"}, "v1")
		require.NoError(t, err)
		assert.Equal(t, "namespaces", m.Resource.Resource)
		gvk, err := c.GroupVersionKindFor(&appsv1.Deployment{})
		require.NoError(t, err)
		assert.Equal(t, "Deployment", gvk.Kind)
		ns, err := c.IsObjectNamespaced(&corev1.Namespace{})
		require.NoError(t, err)
		assert.False(t, ns)
		ns, err = c.IsObjectNamespaced(&Widget{})
		require.NoError(t, err)
		assert.True(t, ns)
		assert.NotNil(t, c.Scheme())
	})
}

func TestWithStore(t *testing.T) {
	ctx := context.Background()
	f := storetest.NewFixture(t, nil)
	c, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStore(f.Store).
		WithObjects(configMap("ns", "seed", nil)).BuildClient()
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, widget("ns", "w", 1, "")))

	// The store's own API sees the client's objects, as generic objects.
	k, ok := f.Store.Scheme().KindFor("example.com/v1", "Widget")
	require.True(t, ok)
	got := k.New()
	require.NoError(t, f.Store.Get(ctx, "ns", "w", got, store.GetOptions{}))
	assert.JSONEq(t, `{"size":1}`, string(got.(*resource.RawObject).Fields["spec"]))

	// A second client on the same store shares its kinds and objects.
	c2, err := crclient.NewClientBuilder().WithScheme(newScheme()).WithStore(f.Store).BuildClient()
	require.NoError(t, err)
	var cm corev1.ConfigMap
	require.NoError(t, c2.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "seed"}, &cm))

	// The fixture's clock steps through the client.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a"}}}}
	require.NoError(t, c.Create(ctx, pod))
	require.NoError(t, c.Delete(ctx, pod, client.GracePeriodSeconds(10)))
	require.NoError(t, c.Step(11*time.Second))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})))
	require.NoError(t, c.Close(), "Close leaves the fixture's store open")
	require.NoError(t, c2.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "seed"}, &cm))

	_, err = crclient.NewClientBuilder().WithStore(f.Store).WithBackend(nil).WithKinds(resource.KindInfo{}).BuildClient()
	assert.ErrorContains(t, err, "does not combine")
}
