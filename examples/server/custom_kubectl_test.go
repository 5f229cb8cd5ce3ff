package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// customWidget is the user-defined kind of the custom server: example.com/v1 Widget,
// namespaced.
type customWidget struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Size int `json:"size"`
	} `json:"spec"`
}

const customWidgetSchema = `{"type": "object", "properties": {"spec": {"type": "object",
  "description": "the desired state of the widget",
  "properties": {"size": {"type": "integer", "minimum": 1, "description": "how big the widget is"}},
  "required": ["size"]}}}`

// startCustomServer serves Widgets with store/httpapi on memdb over plain HTTP: a
// custom server built on the library package alone, without the management API.
func startCustomServer(t *testing.T) string {
	t.Helper()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	scheme, schemas := resource.NewScheme(), schema.NewRegistry()
	require.NoError(t, scheme.Register(resource.KindInfo{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: "widgets", Namespaced: true,
		New:     func() resource.Object { return &customWidget{} },
		NewList: func() resource.ObjectList { return &resource.List[customWidget, *customWidget]{} },
	}))
	require.NoError(t, schemas.Register(gvk, []byte(customWidgetSchema)))
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: scheme,
		Validating: []store.ValidatingAdmitter{schema.NewAdmitter(schemas)}})
	require.NoError(t, err)
	h, err := httpapi.New(httpapi.Config{Store: st, Schemas: schemas,
		Resources: []httpapi.Resource{{Group: "example.com", Version: "v1", Resource: "widgets",
			ShortNames: []string{"wd"}, Categories: []string{"all"}}}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { _ = st.Close() })
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return srv.URL
}

// TestKubectlCustomServer runs a stock kubectl against a custom server on
// store/httpapi for a user-defined kind: api-resources, apply (create, then change),
// get (by resource, short name and category), get -w seeing a later create, explain
// (from the OpenAPI document), a create the JSON Schema refuses, and delete. It is
// skipped when kubectl is not on PATH.
func TestKubectlCustomServer(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: skipping the kubectl test (install kubectl 1.27 or later to run it)")
	}
	if minor, err := kubectlMinor(kubectl); err != nil || minor < 27 {
		t.Skipf("kubectl at %s is older than 1.27 (minor %d, %v): skipping the kubectl test", kubectl, minor, err)
	}
	url := startCustomServer(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	env := append(os.Environ(), "HOME="+home, "KUBECONFIG=", "KUBECACHEDIR="+filepath.Join(dir, "cache"))
	flags := []string{"--server", url, "--namespace", "default"}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	run := func(wantErr bool, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, append(flags, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr {
			require.FailNow(t, fmt.Sprintf("kubectl %s: err=%v\n%s", strings.Join(args, " "), err, out))
		}
		return string(out)
	}
	k := func(args ...string) string { t.Helper(); return run(false, args...) }
	expect := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			assert.Contains(t, out, w, "output lacks %q:\n%s", w, out)
		}
	}
	widget := func(name, size string) string {
		return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\nspec:\n  size: " + size + "\n"
	}

	expect(k("api-resources", "--api-group", "example.com"), "widgets", "wd", "example.com/v1", "true", "Widget")

	w1 := write("w1.yaml", widget("w1", "3"))
	expect(k("apply", "-f", w1), "widget.example.com/w1 created")
	expect(k("get", "widgets"), "NAME", "w1")
	expect(k("get", "wd", "w1", "-o", "jsonpath={.spec.size}"), "3")
	expect(k("get", "all", "-o", "name"), "widget.example.com/w1")

	// get -w prints the widgets, then the ones created after it started.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	watch := exec.CommandContext(ctx, kubectl, append(flags, "get", "widgets", "-w", "-o", "name")...)
	watch.Env = env
	stdout, err := watch.StdoutPipe()
	require.NoError(t, err)
	watch.Stderr = watch.Stdout
	require.NoError(t, watch.Start())
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	wait := func(want string) {
		t.Helper()
		var seen []string
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					require.FailNow(t, fmt.Sprintf("kubectl get -w ended before %q: %v", want, seen))
				}
				seen = append(seen, l)
				if strings.TrimSpace(l) == want {
					return
				}
			case <-ctx.Done():
				require.FailNow(t, fmt.Sprintf("kubectl get -w did not print %q: %v", want, seen))
			}
		}
	}
	wait("widget.example.com/w1")
	expect(k("apply", "-f", write("w2.yaml", widget("w2", "1"))), "widget.example.com/w2 created")
	wait("widget.example.com/w2")

	// apply of a change patches the widget.
	write("w1.yaml", widget("w1", "5"))
	expect(k("apply", "-f", w1), "widget.example.com/w1 configured")
	expect(k("get", "widget", "w1", "-o", "jsonpath={.spec.size}"), "5")
	wait("widget.example.com/w1")

	// explain reads the OpenAPI document generated from the JSON Schema.
	expect(k("explain", "widgets.spec.size"), "how big the widget is")

	// The JSON Schema is enforced by the server.
	out := run(true, "apply", "-f", write("bad.yaml", widget("w3", "0")))
	expect(out, "Invalid", "spec.size")

	expect(k("delete", "widget", "w1"), `widget.example.com "w1" deleted`)
	expect(k("get", "widgets", "-o", "name"), "widget.example.com/w2")
	listed := k("get", "widgets", "-o", "name")
	assert.NotContains(t, listed, "w1", "w1 is still listed after its delete:\n%s", listed)
}
