package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// TestKubectlStatusPatch patches an instance's status with kubectl's
// --subresource=status, as the README shows, when kubectl is on the PATH.
func TestKubectlStatusPatch(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	if minor, err := kubectlMinor(kubectl); err != nil || minor < 27 {
		t.Skipf("kubectl at %s is older than 1.27 (minor %d, %v): it has no --subresource for patch", kubectl, minor, err)
	}
	dir := t.TempDir()
	ts := startServer(t, func(o *app.Options) {
		o.HTTP = false
		o.Kubeconfig = filepath.Join(dir, "management.kubeconfig")
		o.CAFile = filepath.Join(dir, "management-ca.crt")
	})
	run := func(args ...string) (string, error) {
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := run("patch", "vci", "dev", "-n", "p-a", "--subresource=status", "--type", "merge",
		"-p", `{"status":{"phase":"Sleeping"},"spec":{"displayName":"ignored"}}`)
	require.NoError(t, err, out)
	out, err = run("get", "vci", "dev", "-n", "p-a", "-o", "jsonpath={.status.phase} {.spec.displayName}")
	require.NoError(t, err, out)
	assert.Equal(t, "Sleeping Development", out)
}
