package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// TestMainStartsAndStops runs the command's Main as main does, reads the lines it
// prints, and stops it as SIGINT would (main turns the signal into ctx's end).
func TestMainStartsAndStops(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- app.Main(ctx, []string{"--addr", "127.0.0.1:0", "--write-kubeconfig", filepath.Join(dir, "kc"),
			"--write-ca", filepath.Join(dir, "ca.crt"), "--seed", "seed.yaml"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "certificate:") {
			break
		}
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "listening on https://127.0.0.1:") ||
		!strings.HasSuffix(lines[0], "/kubernetes/management") || strings.HasSuffix(lines[0], ":0/kubernetes/management") {
		require.FailNow(t, fmt.Sprintf("printed %q", lines))
	}
	if !strings.HasPrefix(lines[1], "admin access key: ") || len(lines[1]) < len("admin access key: ")+40 {
		assert.Fail(t, fmt.Sprintf("admin key line %q", lines[1]))
	}
	kc, err := os.ReadFile(filepath.Join(dir, "kc"))
	require.NoError(t, err)
	key := strings.TrimPrefix(lines[1], "admin access key: ")
	for _, want := range []string{"server: " + strings.TrimPrefix(lines[0], "listening on "), "certificate-authority-data: ", "token: " + key} {
		assert.Contains(t, string(kc), want, "kubeconfig lacks %q:\n%s", want, kc)
	}
	if fi, err := os.Stat(filepath.Join(dir, "kc")); err != nil || fi.Mode().Perm() != 0o600 {
		assert.Fail(t, fmt.Sprintf("kubeconfig mode: %v %v", fi.Mode(), err))
	}
	go io.Copy(io.Discard, pr)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "Main after the signal")
	case <-time.After(15 * time.Second):
		require.FailNow(t, "Main did not return after the signal")
	}
}

// TestDataDir restarts a server on the same --data-dir (badger): objects, the token
// keys and the self-signed certificate survive; the admin key is replaced.
func TestDataDir(t *testing.T) {
	dir := t.TempDir()
	start := func(key string) *app.Server {
		srv, err := app.Start(context.Background(), app.Options{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"),
			AccessKey: key, Seed: "seed.yaml", Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return srv
	}
	stop := func(srv *app.Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
	}
	srv := start("first-admin-key-0123456789")
	ts := &testServer{Server: srv}
	r := ts.serve(req{method: "POST", path: gv + "/projects", body: project("kept"), headers: bearer("first-admin-key-0123456789")})
	expectStatus(t, r, 201, "create")
	jwks := string(ts.serve(req{method: "GET", path: "/openid/v1/jwks"}).body)
	ca := string(srv.CACert)
	stop(srv)

	srv = start("second-admin-key-0123456789")
	defer stop(srv)
	ts = &testServer{Server: srv}
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects/kept", headers: bearer("second-admin-key-0123456789")}), 200, "get after restart")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects/kept", headers: bearer("first-admin-key-0123456789")}), 401, "the old admin key")
	assert.Equal(t, jwks, string(ts.serve(req{method: "GET", path: "/openid/v1/jwks"}).body), "the token keys changed across the restart")
	assert.Equal(t, ca, string(srv.CACert), "the self-signed certificate was not kept in --data-dir")
}
