package crclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/store/crclient"
)

// newApplyClient returns a client that returns managedFields, with Widget's
// status subresource and Gadget, an unstructured kind whose schema makes
// spec.ports a list-map keyed by name (Thing has no schema).
func newApplyClient(t *testing.T) *crclient.Client {
	t.Helper()
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	c, err := crclient.NewClientBuilder().WithScheme(newScheme()).
		WithStatusSubresource(&Widget{}).WithReturnManagedFields().
		WithJSONSchema(gadget, []byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
			"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
				"items":{"type":"object","properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}}}}}`)).
		BuildClient()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	gadgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	thingGVK  = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Thing"}
)

// applyWidget is the apply configuration of a Widget as client.Apply sends it.
func applyWidget(size int, color string) *Widget {
	w := widget("ns", "w", size, color)
	w.APIVersion, w.Kind = widgetGV.String(), "Widget"
	return w
}

// owners maps each manager of obj to its operation.
func owners(obj metav1.Object) map[string]metav1.ManagedFieldsOperationType {
	out := map[string]metav1.ManagedFieldsOperationType{}
	for _, e := range obj.GetManagedFields() {
		out[e.Manager] = e.Operation
	}
	return out
}

// conflictFields returns the fields of the FieldManagerConflict causes of err.
func conflictFields(t *testing.T, err error) []string {
	t.Helper()
	require.True(t, apierrors.IsConflict(err), "%v", err)
	var fields []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		assert.Equal(t, metav1.CauseTypeFieldManagerConflict, c.Type)
		fields = append(fields, c.Field)
	}
	return fields
}

func TestApplyTypedCustomResource(t *testing.T) {
	ctx := context.Background()
	c := newApplyClient(t)

	w := applyWidget(3, "")
	//nolint:staticcheck // client.Apply as a Patch is what many controllers still call
	require.NoError(t, c.Patch(ctx, w, client.Apply, client.FieldOwner("alice")))
	assert.Equal(t, 3, w.Spec.Size)
	assert.Equal(t, map[string]metav1.ManagedFieldsOperationType{"alice": metav1.ManagedFieldsOperationApply}, owners(w))
	rv := w.ResourceVersion

	t.Run("re-applying the same configuration changes nothing", func(t *testing.T) {
		again := applyWidget(3, "")
		require.NoError(t, c.Patch(ctx, again, client.Apply, client.FieldOwner("alice"))) //nolint:staticcheck
		assert.Equal(t, rv, again.ResourceVersion)
	})
	t.Run("no field manager is 422", func(t *testing.T) {
		err := c.Patch(ctx, applyWidget(3, ""), client.Apply) //nolint:staticcheck
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
	})
	t.Run("another manager's value is a conflict", func(t *testing.T) {
		err := c.Patch(ctx, applyWidget(4, ""), client.Apply, client.FieldOwner("bob")) //nolint:staticcheck
		assert.Equal(t, []string{".spec.size"}, conflictFields(t, err))
	})
	t.Run("dry run writes nothing", func(t *testing.T) {
		dry := applyWidget(3, "red")
		require.NoError(t, c.Patch(ctx, dry, client.Apply, client.FieldOwner("bob"), client.DryRunAll)) //nolint:staticcheck
		assert.Equal(t, "red", dry.Spec.Color)
		var got Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &got))
		assert.Empty(t, got.Spec.Color)
		assert.Equal(t, rv, got.ResourceVersion)
	})
	t.Run("force takes the field over", func(t *testing.T) {
		forced := applyWidget(4, "")
		require.NoError(t, c.Patch(ctx, forced, client.Apply, client.FieldOwner("bob"), client.ForceOwnership)) //nolint:staticcheck
		assert.Equal(t, 4, forced.Spec.Size)
		// alice keeps .spec itself (she applied it): only spec.size changes owner.
		for _, e := range forced.ManagedFields {
			assert.Equal(t, e.Manager == "bob", strings.Contains(string(e.FieldsV1.Raw), `"f:size"`), "%s: %s", e.Manager, e.FieldsV1.Raw)
		}
	})
	t.Run("a YAML configuration as a raw patch", func(t *testing.T) {
		raw := widget("ns", "w", 0, "")
		err := c.Patch(ctx, raw, client.RawPatch(types.ApplyPatchType,
			[]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: ns\nspec:\n  color: blue\n")),
			client.FieldOwner("carol"))
		require.NoError(t, err)
		assert.Equal(t, 4, raw.Spec.Size)
		assert.Equal(t, "blue", raw.Spec.Color)
	})
	t.Run("status apply writes only the status", func(t *testing.T) {
		st := applyWidget(9, "")
		st.Status.Ready = true
		require.NoError(t, c.Status().Patch(ctx, st, client.Apply, client.FieldOwner("ctl"))) //nolint:staticcheck
		assert.True(t, st.Status.Ready)
		assert.Equal(t, 4, st.Spec.Size, "the spec of a status apply is ignored")
		var got Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w"}, &got))
		assert.True(t, got.Status.Ready)
		for _, e := range got.ManagedFields {
			if e.Manager == "ctl" {
				assert.Equal(t, "status", e.Subresource)
			}
		}
	})
	t.Run("status apply to a missing object is 404", func(t *testing.T) {
		st := applyWidget(0, "")
		st.Name = "missing"
		err := c.Status().Patch(ctx, st, client.Apply, client.FieldOwner("ctl")) //nolint:staticcheck
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})
}

func TestApplyConfigMap(t *testing.T) {
	ctx := context.Background()
	c := newApplyClient(t)
	get := func() *corev1.ConfigMap {
		var cm corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, &cm))
		return &cm
	}

	ac := corev1ac.ConfigMap("cm", "ns").WithData(map[string]string{"a": "1"})
	require.NoError(t, c.Apply(ctx, ac, client.FieldOwner("alice")))
	require.NotNil(t, ac.ResourceVersion)
	assert.Equal(t, map[string]string{"a": "1"}, ac.Data)
	rv := *ac.ResourceVersion

	steps := []struct {
		name    string
		manager string
		data    map[string]string
		opts    []client.ApplyOption
		want    map[string]string
		check   func(t *testing.T, err error)
	}{
		{"re-apply is a no-op", "alice", map[string]string{"a": "1"}, nil, map[string]string{"a": "1"}, func(t *testing.T, err error) {
			require.NoError(t, err)
			assert.Equal(t, rv, get().ResourceVersion)
		}},
		{"data keys are owned one by one", "bob", map[string]string{"b": "2"}, nil, map[string]string{"a": "1", "b": "2"},
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"conflict on alice's key", "bob", map[string]string{"a": "x", "b": "2"}, nil, map[string]string{"a": "1", "b": "2"},
			func(t *testing.T, err error) { assert.Equal(t, []string{".data.a"}, conflictFields(t, err)) }},
		{"the same value is shared", "bob", map[string]string{"a": "1", "b": "2"}, nil, map[string]string{"a": "1", "b": "2"},
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"a shared key alice drops stays", "alice", map[string]string{}, nil, map[string]string{"a": "1", "b": "2"},
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"a key bob alone drops goes", "bob", map[string]string{"b": "2"}, nil, map[string]string{"b": "2"},
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"force", "alice", map[string]string{"b": "3"}, []client.ApplyOption{client.ForceOwnership}, map[string]string{"b": "3"},
			func(t *testing.T, err error) { require.NoError(t, err) }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ac := corev1ac.ConfigMap("cm", "ns").WithData(st.data)
			st.check(t, c.Apply(ctx, ac, append([]client.ApplyOption{client.FieldOwner(st.manager)}, st.opts...)...))
			assert.Equal(t, st.want, get().Data)
		})
	}
	t.Run("no field manager is 422", func(t *testing.T) {
		err := c.Apply(ctx, corev1ac.ConfigMap("cm", "ns").WithData(map[string]string{"b": "3"}))
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
	})
}

func TestApplyUnstructured(t *testing.T) {
	ctx := context.Background()
	c := newApplyClient(t)
	config := func(gvk schema.GroupVersionKind, port string, n int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("ns")
		u.SetName("u")
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": port, "port": n}}, "spec", "ports"))
		return u
	}
	ports := func(gvk schema.GroupVersionKind) []any {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "u"}, u))
		p, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		return p
	}

	t.Run("a list-map of the schema merges by key", func(t *testing.T) {
		ac := client.ApplyConfigurationFromUnstructured(config(gadgetGVK, "http", 80))
		require.NoError(t, c.Apply(ctx, ac, client.FieldOwner("alice")))
		require.NoError(t, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(config(gadgetGVK, "https", 443)), client.FieldOwner("bob")))
		assert.Equal(t, []any{map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "https", "port": int64(443)}},
			ports(gadgetGVK))
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(config(gadgetGVK, "http", 8080)), client.FieldOwner("bob"))
		assert.Equal(t, []string{`.spec.ports[name="http"].port`}, conflictFields(t, err))
	})
	t.Run("without a schema a list is atomic", func(t *testing.T) {
		ac := client.ApplyConfigurationFromUnstructured(config(thingGVK, "http", 80))
		require.NoError(t, c.Apply(ctx, ac, client.FieldOwner("alice")))
		u, ok := any(ac).(interface{ GetResourceVersion() string })
		require.True(t, ok)
		assert.NotEmpty(t, u.GetResourceVersion(), "the configuration is filled with the result")
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(config(thingGVK, "https", 443)), client.FieldOwner("bob"))
		assert.Equal(t, []string{".spec.ports"}, conflictFields(t, err))
	})
	t.Run("status apply of a kind without status subresource is 404", func(t *testing.T) {
		err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(config(thingGVK, "http", 80)), client.FieldOwner("ctl"))
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})
	t.Run("status apply through Status().Apply", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widgetGV.WithKind("Widget"))
		u.SetNamespace("ns")
		u.SetName("sw")
		require.NoError(t, c.Create(ctx, widget("ns", "sw", 1, "")))
		require.NoError(t, unstructured.SetNestedField(u.Object, true, "status", "ready"))
		require.NoError(t, c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("ctl")))
		var got Widget
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "sw"}, &got))
		assert.True(t, got.Status.Ready)
		assert.Equal(t, metav1.ManagedFieldsOperationApply, owners(&got)["ctl"])
	})
}

func TestApplyBuiltinKeyedList(t *testing.T) {
	ctx := context.Background()
	c := newApplyClient(t)
	deployment := func(containers ...string) *appsv1ac.DeploymentApplyConfiguration {
		spec := corev1ac.PodSpec()
		for _, n := range containers {
			spec.WithContainers(corev1ac.Container().WithName(n).WithImage(n + ":1"))
		}
		return appsv1ac.Deployment("d", "ns").WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "d"})).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "d"}).WithSpec(spec)))
	}
	names := func() []string {
		var d appsv1.Deployment
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "d"}, &d))
		var out []string
		for _, ct := range d.Spec.Template.Spec.Containers {
			out = append(out, ct.Name)
		}
		return out
	}
	// As kube-apiserver: containers merge by name (client-go's schema of the kind).
	require.NoError(t, c.Apply(ctx, deployment("a"), client.FieldOwner("alice")))
	require.NoError(t, c.Apply(ctx, deployment("b"), client.FieldOwner("bob")))
	assert.Equal(t, []string{"a", "b"}, names())
	err := c.Apply(ctx, deployment("b").WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("a").WithImage("a:2"))))), client.FieldOwner("bob"))
	assert.Equal(t, []string{`.spec.template.spec.containers[name="a"].image`}, conflictFields(t, err))
	require.NoError(t, c.Apply(ctx, deployment(), client.FieldOwner("alice")))
	assert.Equal(t, []string{"b"}, names())
}
