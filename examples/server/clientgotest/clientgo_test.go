package clientgotest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

var (
	projectsGVR = schema.GroupVersionResource{Group: "management.service", Version: "v1", Resource: "projects"}
	vcisGVR     = schema.GroupVersionResource{Group: "management.service", Version: "v1", Resource: "virtualclusterinstances"}
	tokensGVR   = schema.GroupVersionResource{Group: "management.service", Version: "v1", Resource: "directclusterendpointtokens"}
)

// TestDynamicClient starts the example server over TLS in-process, with the shipped seed
// file, and drives it with client-go's dynamic client configured from the kubeconfig
// the server wrote: it lists projects, watches virtual cluster instances, creates a
// DirectClusterEndpointToken and moves the instance from project a to project b.
func TestDynamicClient(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	srv, err := app.Start(context.Background(), app.Options{
		Addr:       "127.0.0.1:0",
		Seed:       filepath.Join("..", "seed.yaml"),
		Kubeconfig: kubeconfig,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cfg.UserAgent = "clientgotest/v0"

	// Discovery maps the kinds to resources.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	groups, err := restmapper.GetAPIGroupResources(dc)
	require.NoError(t, err)
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	m, err := mapper.RESTMapping(schema.GroupKind{Group: "management.service", Kind: "VirtualClusterInstance"}, "v1")
	if err != nil || m.Resource != vcisGVR || m.Scope.Name() != "namespace" {
		require.FailNow(t, fmt.Sprintf("mapping of VirtualClusterInstance: %+v %v", m, err))
	}

	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)

	projects, err := dyn.Resource(projectsGVR).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, p := range projects.Items {
		names = append(names, p.GetName())
	}
	require.Equal(t, []string{"a", "b"}, names, "projects")

	vcis, err := dyn.Resource(vcisGVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	w, err := dyn.Resource(vcisGVR).Namespace(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{
		ResourceVersion: vcis.GetResourceVersion(), AllowWatchBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()

	tok := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "management.service/v1",
		"kind":       "DirectClusterEndpointToken",
		"metadata":   map[string]any{"generateName": "cg-"},
		"spec":       map[string]any{"ttl": int64(3600), "scope": map[string]any{"projects": []any{map[string]any{"project": "a"}}}},
	}}
	created, err := dyn.Resource(tokensGVR).Create(ctx, tok, metav1.CreateOptions{FieldManager: "clientgotest"})
	require.NoError(t, err)
	if s, _, _ := unstructured.NestedString(created.Object, "status", "token"); s == "" {
		require.FailNow(t, fmt.Sprintf("no status.token: %v", created.Object))
	}
	rec, err := dyn.Resource(tokensGVR).Get(ctx, created.GetName(), metav1.GetOptions{})
	require.NoError(t, err)
	if s, _, _ := unstructured.NestedString(rec.Object, "status", "token"); s != "" {
		require.FailNow(t, "the stored record holds the token")
	}

	// The move is a create on the migratevirtualclusterinstance subresource of the
	// target project; the dynamic client takes the parent's name from the object's.
	move := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":                   "management.service/v1",
		"kind":                         "ProjectMigrateVirtualClusterInstance",
		"metadata":                     map[string]any{"name": "b"},
		"sourceVirtualClusterInstance": map[string]any{"name": "dev", "namespace": "p-a"},
	}}
	res, err := dyn.Resource(projectsGVR).Create(ctx, move, metav1.CreateOptions{}, "migratevirtualclusterinstance")
	require.NoError(t, err)
	if ns, _, _ := unstructured.NestedString(res.Object, "status", "namespace"); ns != "p-b" {
		require.FailNow(t, fmt.Sprintf("move result: %v", res.Object))
	}

	var seen []string
	for len(seen) < 2 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				require.FailNow(t, fmt.Sprintf("watch ended after %v", seen))
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				require.FailNow(t, fmt.Sprintf("event %s of %T", ev.Type, ev.Object))
			}
			seen = append(seen, string(ev.Type)+" "+u.GetNamespace()+"/"+u.GetName())
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("no watch events after the move: %v", seen))
		}
	}
	assert.Equal(t, []string{"DELETED p-a/dev", "ADDED p-b/dev"}, seen, "watch events")

	// A status error comes back as a typed error.
	_, err = dyn.Resource(vcisGVR).Namespace("p-a").Get(ctx, "dev", metav1.GetOptions{})
	if se, ok := err.(interface{ Status() metav1.Status }); !ok || se.Status().Code != 404 || se.Status().Reason != metav1.StatusReasonNotFound {
		assert.Fail(t, fmt.Sprintf("get of the moved instance in its old project: %v", err))
	}
}
