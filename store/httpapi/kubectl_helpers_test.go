package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kubectlAgainst returns a function that runs the kubectl on PATH against the server
// at url (namespace default, a fresh cache and home) and returns its combined output;
// wantErr says whether kubectl should fail. The test is skipped without kubectl.
func kubectlAgainst(t *testing.T, url string, extraFlags ...string) func(wantErr bool, args ...string) string {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH: skipping the kubectl test")
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	env := append(os.Environ(), "HOME="+home, "KUBECONFIG=", "KUBECACHEDIR="+filepath.Join(dir, "cache"))
	flags := append([]string{"--server", url, "--namespace", "default"}, extraFlags...)
	return func(wantErr bool, args ...string) string {
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
}
