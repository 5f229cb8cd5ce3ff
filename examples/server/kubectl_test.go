package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// TestKubectl runs a stock kubectl against the server over TLS with the kubeconfig the
// server wrote, then with --server/--token/--certificate-authority, through the
// commands of the issue: create -f (validated by the server through the OpenAPI
// document), get, label, annotate, apply (create, then change), explain, delete and
// create --raw of a move. It is skipped when kubectl is not on PATH.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: skipping the kubectl test (install kubectl 1.27 or later to run it)")
	}
	// kubectl reads OpenAPI v3 (validation by the server, explain) from 1.27 on; older
	// ones need OpenAPI v2 in protobuf, which this server does not serve.
	if minor, err := kubectlMinor(kubectl); err != nil || minor < 27 {
		t.Skipf("kubectl at %s is older than 1.27 (minor %d, %v): skipping the kubectl test", kubectl, minor, err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(o *app.Options) {
		o.HTTP = false
		o.Kubeconfig = filepath.Join(dir, "management.kubeconfig")
		o.CAFile = filepath.Join(dir, "management-ca.crt")
	})
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	run := func(wantErr bool, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, args...)
		// A home and cache of its own, so that nothing of the user's is read or written.
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=", "KUBECACHEDIR="+filepath.Join(dir, "cache"))
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr {
			require.FailNow(t, fmt.Sprintf("kubectl %s: err=%v\n%s", strings.Join(args, " "), err, out))
		}
		return string(out)
	}
	kc := []string{"--kubeconfig", ts.Kubeconfig}
	k := func(args ...string) string { t.Helper(); return run(false, append(kc, args...)...) }
	flags := []string{"--server", ts.URL, "--token", teamKey, "--certificate-authority", ts.CAFile}
	kTeam := func(args ...string) string { t.Helper(); return run(false, append(flags, args...)...) }
	expect := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			assert.Contains(t, out, w, "output lacks %q:\n%s", w, out)
		}
	}

	tokenYAML := write("token.yaml", `apiVersion: management.service/v1
kind: DirectClusterEndpointToken
metadata:
  generateName: kubectl-
spec:
  ttl: 3600
  scope:
    projects:
    - project: a
`)
	expect(k("create", "-f", tokenYAML, "-o", "yaml"), "kind: DirectClusterEndpointToken", "token: ey", "expirationTimestamp")
	expect(kTeam("create", "-f", tokenYAML, "-o", "yaml"), "token: ey")
	expect(k("get", "projects"), "NAME", "a ", "b ")
	expect(k("get", "virtualclusterinstances", "-n", "p-a"), "dev")
	expect(kTeam("get", "virtualclusterinstances", "-n", "p-a"), "dev")
	expect(kTeam("get", "project", "a", "-o", "jsonpath={.spec.displayName}"), "Project A")
	expect(k("label", "projects", "a", "env=dev"), "labeled")
	expect(k("annotate", "projects", "a", "note=hello"), "annotated")
	expect(k("get", "projects", "-l", "env=dev", "-o", "name"), "project.management.service/a")
	expect(k("get", "project", "a", "-o", "jsonpath={.metadata.annotations.note}"), "hello")

	projectYAML := `apiVersion: management.service/v1
kind: Project
metadata:
  name: c
spec:
  displayName: DISPLAY
`
	p := write("project.yaml", strings.Replace(projectYAML, "DISPLAY", "Project C", 1))
	expect(k("apply", "-f", p), "created")
	write("project.yaml", strings.Replace(projectYAML, "DISPLAY", "Project C, changed", 1))
	expect(k("apply", "-f", p), "configured")
	expect(k("get", "project", "c", "-o", "jsonpath={.spec.displayName}"), "Project C, changed")
	expect(k("apply", "-f", p), "unchanged")

	// Validation is the server's: an unknown field is refused.
	bad := write("bad.yaml", strings.Replace(projectYAML, "  displayName: DISPLAY", "  bogus: 1", 1))
	expect(run(true, append(kc, "create", "-f", bad)...), "unknown field")

	expect(k("explain", "virtualclusterinstance.spec"), "KIND:", "VirtualClusterInstance", "clusterRef", "templateRef")
	expect(kTeam("explain", "project.spec.allowedClusters"), "name")

	expect(k("delete", "project", "c"), `"c" deleted`)
	expect(run(true, append(kc, "get", "project", "c")...), "NotFound", "not found")

	move := write("move.yaml", `apiVersion: management.service/v1
kind: ProjectMigrateVirtualClusterInstance
metadata:
  name: move-dev
sourceVirtualClusterInstance:
  name: dev
  namespace: p-a
`)
	expect(kTeam("create", "--raw", "/kubernetes/management/apis/management.service/v1/projects/b/migratevirtualclusterinstance", "-f", move),
		`"namespace":"p-b"`)
	expect(k("get", "virtualclusterinstances", "-A"), "p-b", "dev")
	expect(run(true, append(flags, "get", "accesskeys")...), "Forbidden")
}

// kubectlMinor returns the minor version of a kubectl client.
func kubectlMinor(kubectl string) (int, error) {
	out, err := exec.Command(kubectl, "version", "--client", "-o", "json").Output()
	if err != nil {
		return 0, err
	}
	var v struct {
		ClientVersion struct{ Minor string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimRight(v.ClientVersion.Minor, "+"))
}
