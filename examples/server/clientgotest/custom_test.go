package clientgotest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// Widget is the user-defined kind of the custom server: example.com/v1, namespaced.
type Widget struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                WidgetSpec `json:"spec"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	Size  int    `json:"size"`
	Color string `json:"color,omitempty"`
}

// widgetSchema is the JSON Schema every write of a Widget is validated against.
const widgetSchema = `{"type": "object", "properties": {"spec": {"type": "object",
  "properties": {"size": {"type": "integer", "minimum": 1}, "color": {"type": "string"}},
  "required": ["size"], "additionalProperties": false}}}`

var widgetsGVR = k8sschema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// startCustomServer serves Widgets with store/httpapi on memdb over httptest: a
// custom server built on the library package alone, without the management API.
func startCustomServer(t *testing.T) *rest.Config {
	t.Helper()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	scheme, schemas := resource.NewScheme(), schema.NewRegistry()
	if err := scheme.Register(resource.KindInfo{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: "widgets", Namespaced: true,
		New:     func() resource.Object { return &Widget{} },
		NewList: func() resource.ObjectList { return &resource.List[Widget, *Widget]{} },
	}); err != nil {
		require.NoError(t, err)
	}
	require.NoError(t, schemas.Register(gvk, []byte(widgetSchema)))
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: scheme,
		Validating: []store.ValidatingAdmitter{schema.NewAdmitter(schemas)}})
	require.NoError(t, err)
	h, err := httpapi.New(httpapi.Config{Store: st, Schemas: schemas,
		Resources: []httpapi.Resource{{Group: "example.com", Version: "v1", Resource: "widgets", ShortNames: []string{"wd"}}}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	// Cleanups run last-in first-out: the watches end, then the server, then the store.
	t.Cleanup(func() { _ = st.Close() })
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return &rest.Config{Host: srv.URL, UserAgent: "clientgotest/v0", Timeout: 30 * time.Second}
}

func newWidget(name string, size int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"app": "demo"}},
		"spec":       map[string]any{"size": int64(size)},
	}}
}

func size(t *testing.T, u *unstructured.Unstructured) int64 {
	t.Helper()
	n, ok, err := unstructured.NestedInt64(u.Object, "spec", "size")
	if err != nil || !ok {
		require.FailNow(t, fmt.Sprintf("spec.size of %s: %v %v (%v)", u.GetName(), ok, err, u.Object))
	}
	return n
}

// TestCustomServerDynamicClient drives a custom server on store/httpapi with
// client-go: discovery maps the kind, the dynamic client creates, gets, lists,
// updates, merge-patches and deletes widgets, a schema violation comes back as a
// typed 422, and a dynamic shared informer sees the add, the updates and the delete.
func TestCustomServerDynamicClient(t *testing.T) {
	cfg := startCustomServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Discovery maps the kind to its resource, and the short name too.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	groups, err := restmapper.GetAPIGroupResources(dc)
	require.NoError(t, err)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), dc, nil)
	m, err := mapper.RESTMapping(k8sschema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1")
	if err != nil || m.Resource != widgetsGVR || m.Scope.Name() != "namespace" {
		require.FailNow(t, fmt.Sprintf("mapping of Widget: %+v %v", m, err))
	}
	if gvr, err := mapper.ResourceFor(k8sschema.GroupVersionResource{Resource: "wd"}); err != nil || gvr != widgetsGVR {
		require.FailNow(t, fmt.Sprintf("short name wd: %v %v", gvr, err))
	}

	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	widgets := dyn.Resource(widgetsGVR).Namespace("default")

	// The informer starts on an empty namespace and records what it is told.
	type event struct{ typ, name, rv string }
	events := make(chan event, 100)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "default", nil)
	informer := factory.ForResource(widgetsGVR).Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			u := obj.(*unstructured.Unstructured)
			events <- event{"add", u.GetName(), u.GetResourceVersion()}
		},
		UpdateFunc: func(_, obj any) {
			u := obj.(*unstructured.Unstructured)
			events <- event{"update", u.GetName(), u.GetResourceVersion()}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			u := obj.(*unstructured.Unstructured)
			events <- event{"delete", u.GetName(), u.GetResourceVersion()}
		},
	}); err != nil {
		require.NoError(t, err)
	}
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopInformers := func() {
		stopOnce.Do(func() {
			close(stop)
			factory.Shutdown()
		})
	}
	defer stopInformers()
	factory.Start(stop)
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			require.FailNow(t, fmt.Sprintf("the informer of %v did not sync", gvr))
		}
	}
	expect := func(typ, name, rv string) {
		t.Helper()
		select {
		case ev := <-events:
			if ev.typ != typ || ev.name != name || (rv != "" && ev.rv != rv) {
				require.FailNow(t, fmt.Sprintf("informer event %+v, want %s %s at %q", ev, typ, name, rv))
			}
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("the informer saw no %s of %s", typ, name))
		}
	}

	// Create.
	created, err := widgets.Create(ctx, newWidget("w1", 3), metav1.CreateOptions{FieldManager: "clientgotest"})
	require.NoError(t, err)
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetNamespace() != "default" ||
		created.GetKind() != "Widget" || created.GetAPIVersion() != "example.com/v1" {
		require.FailNow(t, fmt.Sprintf("created: %v", created.Object))
	}
	expect("add", "w1", created.GetResourceVersion())
	if _, err := widgets.Create(ctx, newWidget("w2", 1), metav1.CreateOptions{}); err != nil {
		require.NoError(t, err)
	}
	expect("add", "w2", "")

	// The JSON Schema is enforced, and the error is a typed Status.
	_, err = widgets.Create(ctx, newWidget("w3", 0), metav1.CreateOptions{})
	if se, ok := err.(interface{ Status() metav1.Status }); !ok || se.Status().Code != 422 || se.Status().Reason != metav1.StatusReasonInvalid {
		require.FailNow(t, fmt.Sprintf("create of a widget of size 0: %v", err))
	}
	// Dry run writes nothing.
	if _, err := widgets.Create(ctx, newWidget("w4", 2), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		require.NoError(t, err)
	}

	// Get.
	got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
	require.NoError(t, err)
	if got.GetUID() != created.GetUID() || size(t, got) != 3 {
		require.FailNow(t, fmt.Sprintf("got: %v", got.Object))
	}

	// List: both widgets, in every namespace and with a label selector.
	list, err := dyn.Resource(widgetsGVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: "app=demo"})
	require.NoError(t, err)
	var names []string
	for _, it := range list.Items {
		names = append(names, it.GetName())
	}
	if fmt.Sprint(names) != "[w1 w2]" || list.GetResourceVersion() == "" {
		require.FailNow(t, fmt.Sprintf("list: %v at %q", names, list.GetResourceVersion()))
	}

	// Update.
	require.NoError(t, unstructured.SetNestedField(got.Object, int64(5), "spec", "size"))
	updated, err := widgets.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	if size(t, updated) != 5 || updated.GetResourceVersion() == got.GetResourceVersion() {
		require.FailNow(t, fmt.Sprintf("updated: %v", updated.Object))
	}
	expect("update", "w1", updated.GetResourceVersion())
	// An update from a stale resourceVersion is a conflict.
	_, err = widgets.Update(ctx, got, metav1.UpdateOptions{})
	if se, ok := err.(interface{ Status() metav1.Status }); !ok || se.Status().Code != 409 {
		require.FailNow(t, fmt.Sprintf("stale update: %v", err))
	}

	// Merge patch.
	patched, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	if color, _, _ := unstructured.NestedString(patched.Object, "spec", "color"); color != "blue" || size(t, patched) != 5 {
		require.FailNow(t, fmt.Sprintf("patched: %v", patched.Object))
	}
	expect("update", "w1", patched.GetResourceVersion())

	// Delete.
	require.NoError(t, widgets.Delete(ctx, "w1", metav1.DeleteOptions{}))
	expect("delete", "w1", "")
	_, err = widgets.Get(ctx, "w1", metav1.GetOptions{})
	if se, ok := err.(interface{ Status() metav1.Status }); !ok || se.Status().Code != 404 || se.Status().Reason != metav1.StatusReasonNotFound {
		require.FailNow(t, fmt.Sprintf("get after delete: %v", err))
	}

	// The informer's cache ends where the server is: w2 only.
	require.Equal(t, "[default/w2]", fmt.Sprint(informer.GetStore().ListKeys()), "informer cache")
	stopInformers()
	select {
	case ev := <-events:
		require.FailNow(t, fmt.Sprintf("an event nobody caused: %+v", ev))
	default:
	}
}
