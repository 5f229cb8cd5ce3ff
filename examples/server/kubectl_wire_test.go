package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// kubectlSeeded starts the seeded server over TLS and returns a function running the
// kubectl on PATH against it with the admin kubeconfig (extra flags first); the test is
// skipped without kubectl 1.27 or later.
func kubectlSeeded(t *testing.T) func(args ...string) (string, error) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	if minor, err := kubectlMinor(kubectl); err != nil || minor < 27 {
		t.Skipf("kubectl at %s is older than 1.27 (minor %d, %v)", kubectl, minor, err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(o *app.Options) {
		o.HTTP = false
		o.Kubeconfig = filepath.Join(dir, "management.kubeconfig")
		o.CAFile = filepath.Join(dir, "management-ca.crt")
	})
	return func(args ...string) (string, error) {
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", ts.Kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// TestKubectlColumns checks the columns kubectl get prints for the management kinds.
func TestKubectlColumns(t *testing.T) {
	run := kubectlSeeded(t)
	tests := []struct {
		args        []string
		header, row string
	}{
		{[]string{"get", "projects"}, `NAME\s+DISPLAY NAME\s+AGE`, `a\s+Project A\s+[0-9]+s`},
		{[]string{"get", "vci", "-A"}, `NAMESPACE\s+NAME\s+PROJECT\s+CLUSTER\s+PHASE\s+AGE`, `p-a\s+dev\s+a\s+cluster-1\s+Ready\s+[0-9]+s`},
		{[]string{"get", "accesskeys"}, `NAME\s+SUBJECT\s+EXPIRES\s+AGE`, `team\s+team\s+`},
	}
	for _, tt := range tests {
		t.Run(tt.args[1], func(t *testing.T) {
			out, err := run(tt.args...)
			require.NoError(t, err, out)
			assert.Regexp(t, tt.header, out)
			assert.Regexp(t, tt.row, out)
		})
	}
	t.Run("directclusterendpointtokens", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "token.yaml")
		require.NoError(t, os.WriteFile(f, []byte("apiVersion: management.service/v1\nkind: DirectClusterEndpointToken\n"+
			"metadata:\n  generateName: tok-\nspec:\n  ttl: 3600\n"), 0o600))
		out, err := run("create", "-f", f)
		require.NoError(t, err, out)
		out, err = run("get", "directclusterendpointtokens")
		require.NoError(t, err, out)
		assert.Regexp(t, `NAME\s+EXPIRES\s+AGE`, out)
		assert.Regexp(t, `tok-\w+\s+20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]+Z\s+[0-9]+s`, out)
	})
}

// TestPythonDynamicClient looks kinds up with the Python client's DynamicClient, which
// reads /api/v1 before the groups: it needs the core group's (empty) discovery. It
// runs when python3 has the kubernetes package (Debian: python3-kubernetes).
func TestPythonDynamicClient(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import kubernetes.dynamic").Run(); err != nil {
		t.Skip("python3 with the kubernetes package is not installed")
	}
	dir := t.TempDir()
	ts := startServer(t, func(o *app.Options) {
		o.HTTP = false
		o.Kubeconfig = filepath.Join(dir, "management.kubeconfig")
		o.CAFile = filepath.Join(dir, "management-ca.crt")
	})
	script := `
import sys
from kubernetes import config, dynamic
from kubernetes.client import api_client
client = dynamic.DynamicClient(api_client.ApiClient(configuration=config.load_kube_config(config_file=sys.argv[1])))
api = client.resources.get(kind="Project")
print("projects", sorted(p.metadata.name for p in api.get().items))
vci = client.resources.get(api_version="management.service/v1", kind="VirtualClusterInstance")
print("instances", [i.metadata.name for i in vci.get(namespace="p-a").items])
`
	out, err := exec.Command(python, "-c", script, ts.Kubeconfig).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "projects ['a', 'b'")
	assert.Contains(t, string(out), "instances ['dev']")
}

// TestKubectlAuthReviews runs "kubectl auth whoami" and "kubectl auth can-i" against
// the management API: the access key's subject, and the policy engine's answer with
// its explanation as the reason.
func TestKubectlAuthReviews(t *testing.T) {
	run := kubectlSeeded(t)
	out, err := run("auth", "whoami")
	require.NoError(t, err, out)
	assert.Regexp(t, `Username\s+\S+`, out)

	team := []string{"--token", "team-key-0123456789abcdef"}
	out, err = run(append(team, "auth", "whoami")...)
	require.NoError(t, err, out)
	assert.Regexp(t, `Username\s+team`, out)

	tests := []struct {
		args []string
		yes  bool
	}{
		{[]string{"get", "projects/a"}, true},
		{[]string{"get", "virtualclusterinstances", "-n", "p-a"}, true},
		{[]string{"get", "projects/c"}, false},
		{[]string{"create", "accesskeys"}, false},
		{[]string{"get", "/metrics"}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := run(append(append(team, "auth", "can-i"), tt.args...)...)
			if tt.yes {
				require.NoError(t, err, out)
				assert.Regexp(t, `(?m)^yes$`, out)
				return
			}
			require.Error(t, err, out)
			assert.Regexp(t, `(?m)^no - .+`, out, "a refusal carries the policy's reason")
		})
	}
	out, err = run("auth", "can-i", "delete", "accesskeys")
	require.NoError(t, err, out)
	assert.Regexp(t, `(?m)^yes$`, out)
}

// TestKubectlStrategicPatch runs a plain "kubectl patch -p", which sends a strategic
// merge patch: lists with a merge key merge item by item.
func TestKubectlStrategicPatch(t *testing.T) {
	run := kubectlSeeded(t)
	out, err := run("patch", "project", "a", "-p", `{"spec":{"displayName":"A2","allowedClusters":[{"name":"cluster-3"}]}}`)
	require.NoError(t, err, out)
	assert.Contains(t, out, "project.management.service/a patched")
	out, err = run("get", "project", "a", "-o", "jsonpath={.spec.displayName} {.spec.allowedClusters[*].name}")
	require.NoError(t, err, out)
	assert.Equal(t, "A2 cluster-1 cluster-2 cluster-3", out)
	out, err = run("patch", "project", "a", "-p", `{"spec":{"allowedClusters":[{"name":"cluster-2","$patch":"delete"}]}}`)
	require.NoError(t, err, out)
	out, err = run("get", "project", "a", "-o", "jsonpath={.spec.allowedClusters[*].name}")
	require.NoError(t, err, out)
	assert.Equal(t, "cluster-1 cluster-3", out)
}

// TestKubectlExplain checks that kubectl explain describes every field of the
// management kinds, with the types Kubernetes prints (no schema definition names).
func TestKubectlExplain(t *testing.T) {
	run := kubectlSeeded(t)
	for _, field := range []string{"project", "project.metadata", "project.spec", "project.spec.allowedClusters",
		"project.status.conditions", "vci", "vci.spec", "vci.spec.clusterRef", "vci.status", "accesskey.spec",
		"accesskey.spec.scope", "accesskey.spec.scope.rules", "accesskey.spec.scope.rules.resources",
		"directclusterendpointtoken.spec", "directclusterendpointtoken.status", "project.metadata.ownerReferences",
		"project.metadata.managedFields"} {
		t.Run(field, func(t *testing.T) {
			out, err := run("explain", field)
			require.NoError(t, err, out)
			assert.NotContains(t, out, "<no description>")
			for _, m := range regexp.MustCompile(`<(?:\[\])?([a-z][A-Za-z]*)>`).FindAllStringSubmatch(out, -1) {
				switch m[1] {
				case "string", "integer", "boolean", "number":
				default:
					assert.Fail(t, "a schema definition's name printed as a type", "%s in\n%s", m[0], out)
				}
			}
			assert.NotRegexp(t, `(?m)^\s+(apiVersion|kind|phase|namespace)\s+<Object>`, out)
		})
	}
	out, err := run("explain", "project.metadata")
	require.NoError(t, err, out)
	assert.Regexp(t, `labels\s+<map\[string\]string>`, out)
	assert.Regexp(t, `ownerReferences\s+<\[\]OwnerReference>`, out)
}
