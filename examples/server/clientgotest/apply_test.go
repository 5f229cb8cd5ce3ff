package clientgotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// startApp starts the example server over TLS in-process with the shipped seed and
// returns the kubeconfig it wrote.
func startApp(t *testing.T) string {
	t.Helper()
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
	return kubeconfig
}

// kubectlRunner runs the kubectl on PATH (1.27 or later) against kubeconfig, with a
// home and cache of its own; the test is skipped without one.
type kubectlRunner struct {
	t          *testing.T
	bin, dir   string
	kubeconfig string
	env        []string
}

func newKubectl(t *testing.T, kubeconfig string) *kubectlRunner {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: skipping the kubectl apply test")
	}
	out, err := exec.Command(bin, "version", "--client", "-o", "json").Output()
	require.NoError(t, err)
	var v struct {
		ClientVersion struct{ Minor string } `json:"clientVersion"`
	}
	require.NoError(t, json.Unmarshal(out, &v))
	if minor, _ := strconv.Atoi(strings.TrimSuffix(v.ClientVersion.Minor, "+")); minor < 27 {
		t.Skipf("kubectl %s is older than 1.27", v.ClientVersion.Minor)
	}
	dir := t.TempDir()
	return &kubectlRunner{t: t, bin: bin, dir: dir, kubeconfig: kubeconfig,
		env: append(os.Environ(), "HOME="+dir, "KUBECONFIG=", "KUBECACHEDIR="+filepath.Join(dir, "cache"))}
}

// run runs kubectl; wantErr says whether it must fail. It returns the combined output.
func (k *kubectlRunner) run(wantErr bool, args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = k.env
	out, err := cmd.CombinedOutput()
	if (err != nil) != wantErr {
		require.FailNow(k.t, fmt.Sprintf("kubectl %s: err=%v\n%s", strings.Join(args, " "), err, out))
	}
	return string(out)
}

// file writes content to a file of the runner's directory and returns its path.
func (k *kubectlRunner) file(name, content string) string {
	p := filepath.Join(k.dir, name)
	require.NoError(k.t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// managers returns, per manager and operation ("kubectl/Apply"), the fieldsV1 of
// project name's managedFields.
func (k *kubectlRunner) managers(name string) map[string]string {
	out := k.run(false, "get", "project", name, "-o", "json", "--show-managed-fields")
	var obj struct {
		Metadata struct {
			ManagedFields []struct {
				Manager, Operation string
				FieldsV1           json.RawMessage
			}
		}
	}
	require.NoError(k.t, json.Unmarshal([]byte(out), &obj), out)
	m := map[string]string{}
	for _, e := range obj.Metadata.ManagedFields {
		m[e.Manager+"/"+e.Operation] = string(e.FieldsV1)
	}
	return m
}

func projectYAML(spec string) string {
	return "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: ssa\nspec:\n" + spec
}

// TestKubectlServerSideApply drives "kubectl apply --server-side" through the flows
// of issue 22: create, re-apply unchanged, a conflict with another manager,
// --force-conflicts, a field removed from the configuration, two managers sharing
// a field, list-map items merged by key, and apply after "kubectl edit" and
// "kubectl patch".
func TestKubectlServerSideApply(t *testing.T) {
	k := newKubectl(t, startApp(t))
	rv := func() string {
		return k.run(false, "get", "project", "ssa", "-o", "jsonpath={.metadata.resourceVersion}")
	}
	field := func(path string) string {
		return k.run(false, "get", "project", "ssa", "-o", "jsonpath={"+path+"}")
	}
	p := k.file("p.yaml", projectYAML("  displayName: One\n  description: first\n  allowedClusters:\n  - name: c1\n"))

	// Create.
	assert.Contains(t, k.run(false, "apply", "--server-side", "-f", p), "project.management.service/ssa serverside-applied")
	assert.Equal(t, "One", field(".spec.displayName"))
	mgrs := k.managers("ssa")
	require.Contains(t, mgrs, "kubectl/Apply", "%v", mgrs)
	assert.JSONEq(t, `{"f:spec":{"f:allowedClusters":{"k:{\"name\":\"c1\"}":{".":{},"f:name":{}}},"f:description":{},"f:displayName":{}}}`, mgrs["kubectl/Apply"])

	// Re-apply unchanged: no write.
	before := rv()
	k.run(false, "apply", "--server-side", "-f", p)
	assert.Equal(t, before, rv(), "re-applying the same configuration changes nothing")

	// Another manager changing an owned field conflicts.
	other := k.file("other.yaml", projectYAML("  displayName: Two\n"))
	out := k.run(true, "apply", "--server-side", "--field-manager=other", "-f", other)
	assert.Contains(t, out, `conflict with "kubectl"`)
	assert.Contains(t, out, ".spec.displayName")
	assert.Equal(t, "One", field(".spec.displayName"))

	// --force-conflicts takes the field over.
	k.run(false, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other)
	assert.Equal(t, "Two", field(".spec.displayName"))
	mgrs = k.managers("ssa")
	assert.JSONEq(t, `{"f:spec":{"f:displayName":{}}}`, mgrs["other/Apply"])
	assert.NotContains(t, mgrs["kubectl/Apply"], "displayName")

	// A field dropped from kubectl's configuration goes (nobody else owns it); the
	// one other owns stays.
	p2 := k.file("p2.yaml", projectYAML("  allowedClusters:\n  - name: c1\n"))
	k.run(false, "apply", "--server-side", "-f", p2)
	assert.Empty(t, field(".spec.description"))
	assert.Equal(t, "Two", field(".spec.displayName"))

	// Two managers applying the same value share the field; the list-map item of a
	// third manager merges by key.
	third := k.file("third.yaml", projectYAML("  displayName: Two\n  allowedClusters:\n  - name: c2\n"))
	k.run(false, "apply", "--server-side", "--field-manager=third", "-f", third)
	assert.Equal(t, "c1 c2", field(".spec.allowedClusters[*].name"))
	mgrs = k.managers("ssa")
	assert.Contains(t, mgrs["other/Apply"], "f:displayName")
	assert.Contains(t, mgrs["third/Apply"], "f:displayName")
	// other drops displayName: third still owns it, so it stays.
	k.run(false, "apply", "--server-side", "--field-manager=other", "-f", k.file("empty.yaml", "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: ssa\n"))
	assert.Equal(t, "Two", field(".spec.displayName"))
	assert.NotContains(t, k.managers("ssa"), "other/Apply")

	// kubectl edit takes the field it changes (an Update manager), so applying the
	// old value again conflicts until forced.
	editor := k.file("editor.sh", "#!/bin/sh\nsed -i 's/displayName: Two/displayName: Edited/' \"$1\"\n")
	require.NoError(t, os.Chmod(editor, 0o700))
	k.env = append(k.env, "KUBE_EDITOR="+editor)
	k.run(false, "edit", "project", "ssa")
	assert.Equal(t, "Edited", field(".spec.displayName"))
	mgrs = k.managers("ssa")
	assert.Contains(t, mgrs["kubectl-edit/Update"], "f:displayName", "%v", mgrs)
	out = k.run(true, "apply", "--server-side", "--field-manager=third", "-f", third)
	assert.Contains(t, out, `conflict with "kubectl-edit"`)
	k.run(false, "apply", "--server-side", "--field-manager=third", "--force-conflicts", "-f", third)
	assert.Equal(t, "Two", field(".spec.displayName"))

	// kubectl patch, then apply: the same.
	k.run(false, "patch", "project", "ssa", "--type=merge", "-p", `{"spec":{"displayName":"Patched"}}`)
	out = k.run(true, "apply", "--server-side", "--field-manager=third", "-f", third)
	assert.Contains(t, out, `conflict with "kubectl-patch"`)
	k.run(false, "apply", "--server-side", "--field-manager=third", "--force-conflicts", "-f", third)
	assert.Equal(t, "Two", field(".spec.displayName"))

	// The OpenAPI tells clients how the lists merge.
	cfg, err := clientcmd.BuildConfigFromFlags("", k.kubeconfig)
	require.NoError(t, err)
	base, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	// --raw takes the path from the host: the server's base path included.
	openapi := k.run(false, "get", "--raw", strings.TrimSuffix(base.Path, "/")+"/openapi/v3/apis/management.service/v1")
	assert.Contains(t, openapi, `"x-kubernetes-list-map-keys":["name"]`)
	assert.Contains(t, openapi, `"x-kubernetes-list-type":"map"`)

	// A dry run changes nothing.
	before = rv()
	k.run(false, "apply", "--server-side", "--dry-run=server", "--field-manager=third", "--force-conflicts",
		"-f", k.file("dry.yaml", projectYAML("  displayName: Dry\n")))
	assert.Equal(t, before, rv())
	assert.Equal(t, "Two", field(".spec.displayName"))
}

// TestKubectlClientSideThenServerSide moves an object from client-side "kubectl
// apply" to "kubectl apply --server-side", which takes over the fields the
// client-side apply set without conflicts, as on a kube-apiserver.
func TestKubectlClientSideThenServerSide(t *testing.T) {
	k := newKubectl(t, startApp(t))
	yaml := func(display string) string {
		return "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: csa\nspec:\n  displayName: " + display + "\n"
	}
	p := k.file("csa.yaml", yaml("One"))
	assert.Contains(t, k.run(false, "apply", "-f", p), "created")
	p = k.file("csa.yaml", yaml("Two"))
	assert.Contains(t, k.run(false, "apply", "--server-side", "-f", p), "serverside-applied")
	out := k.run(false, "get", "project", "csa", "-o", "jsonpath={.spec.displayName}")
	assert.Equal(t, "Two", out)
	last := k.run(false, "get", "project", "csa", "-o", `jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	assert.Contains(t, last, `"displayName":"Two"`, "the annotation follows the server-side apply")
	// And back to client-side apply.
	p = k.file("csa.yaml", yaml("Three"))
	assert.Contains(t, k.run(false, "apply", "-f", p), "configured")
	assert.Equal(t, "Three", k.run(false, "get", "project", "csa", "-o", "jsonpath={.spec.displayName}"))
}

// TestClientGoApply applies through client-go's dynamic client (Apply and
// ApplyStatus): create, a typed conflict error with its cause, and force.
func TestClientGoApply(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", startApp(t))
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	obj := func(display string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "management.service/v1", "kind": "Project",
			"metadata": map[string]any{"name": "cg"},
			"spec":     map[string]any{"displayName": display},
		}}
	}
	res, err := dyn.Resource(projectsGVR).Apply(ctx, "cg", obj("A"), metav1.ApplyOptions{FieldManager: "one"})
	require.NoError(t, err)
	assert.Equal(t, "Apply", string(res.GetManagedFields()[0].Operation))

	_, err = dyn.Resource(projectsGVR).Apply(ctx, "cg", obj("B"), metav1.ApplyOptions{FieldManager: "two"})
	require.True(t, apierrors.IsConflict(err), "%v", err)
	var se *apierrors.StatusError
	require.ErrorAs(t, err, &se)
	require.Len(t, se.ErrStatus.Details.Causes, 1)
	assert.Equal(t, metav1.CauseTypeFieldManagerConflict, se.ErrStatus.Details.Causes[0].Type)
	assert.Equal(t, ".spec.displayName", se.ErrStatus.Details.Causes[0].Field)

	res, err = dyn.Resource(projectsGVR).Apply(ctx, "cg", obj("B"), metav1.ApplyOptions{FieldManager: "two", Force: true})
	require.NoError(t, err)
	got, _, _ := unstructured.NestedString(res.Object, "spec", "displayName")
	assert.Equal(t, "B", got)

	_, err = dyn.Resource(projectsGVR).Apply(ctx, "cg", obj("C"), metav1.ApplyOptions{})
	assert.True(t, apierrors.IsInvalid(err), "no field manager: %v", err)

	vci := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "management.service/v1", "kind": "VirtualClusterInstance",
		"metadata": map[string]any{"name": "dev", "namespace": "p-a"},
		"status":   map[string]any{"phase": "Ready"},
	}}
	res, err = dyn.Resource(vcisGVR).Namespace("p-a").ApplyStatus(ctx, "dev", vci, metav1.ApplyOptions{FieldManager: "ctl"})
	require.NoError(t, err)
	phase, _, _ := unstructured.NestedString(res.Object, "status", "phase")
	assert.Equal(t, "Ready", phase)
}
