package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// oursServer is examples/server running as a child process.
type oursServer struct {
	cmd  *exec.Cmd
	done chan error
	// URL is the API root (with the base path /kubernetes/management).
	URL string
	// Key is the admin access key.
	Key string
}

// buildOurs builds examples/server from the repository root into dir.
func buildOurs(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "mgmt-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/server")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building examples/server in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// startOurs runs the example server in memory, on plain HTTP on a free loopback
// port, with a random admin key; its log goes to logPath.
func startOurs(ctx context.Context, bin, logPath string) (*oursServer, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	key := base64.RawURLEncoding.EncodeToString(b)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--http", "--access-key", key,
		"--write-kubeconfig=", "--write-ca=")
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &oursServer{cmd: cmd, done: make(chan error, 1), Key: key}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "listening on "); ok {
				urls <- strings.TrimSpace(u)
			}
		}
	}()
	go func() {
		s.done <- cmd.Wait()
		_ = logf.Close()
	}()
	select {
	case s.URL = <-urls:
	case err := <-s.done:
		return nil, fmt.Errorf("examples/server exited at start (%v); its log: %s", err, logPath)
	case <-time.After(60 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("examples/server printed no URL in 60s; its log: %s", logPath)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
	return s, nil
}

// Target is the server as a comparison target.
func (s *oursServer) Target() *Target {
	return &Target{
		Name:   "ours",
		Base:   s.URL,
		Client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}},
		Header: http.Header{"Authorization": {"Bearer " + s.Key}},
	}
}

// Stop ends the child with SIGTERM, then SIGKILL after 10 s.
func (s *oursServer) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// errNoKube is returned by startKube in a build without the kubediff tag.
var errNoKube = errors.New("this build has no kube-apiserver: build and run with -tags kubediff (cd examples/kubediff && go run -tags kubediff .)")
