package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
	"github.com/management-service/mgmt/store/etcd/etcdtest"
)

const (
	adminKey = "admin-key-for-tests-0123456789"
	gv       = "/apis/management.service/v1"
)

// start runs a server on etcd through the command's own flags.
func start(t *testing.T, endpoints string) *app.Server {
	t.Helper()
	o, err := app.ParseFlags([]string{"--addr", "127.0.0.1:0", "--http", "--access-key", adminKey,
		"--write-kubeconfig", "", "--write-ca", "", "--etcd-endpoints", endpoints, "--etcd-prefix", "/server-test/"},
		io.Discard, Storage())
	require.NoError(t, err)
	o.Logger = slog.New(slog.DiscardHandler)
	srv, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// do sends one request as the admin and returns the status and the decoded body.
func do(t *testing.T, srv *app.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// TestEtcd runs two servers on one etcd (--etcd-endpoints, the same prefix): they
// serve one store. What one writes the other reads, a stale write through one
// conflicts with a write through the other, and exactly one of them runs the
// reaper and the garbage collector.
func TestEtcd(t *testing.T) {
	endpoints := etcdtest.Start(t)
	require.NotEmpty(t, endpoints)
	one, two := start(t, endpoints[0]), start(t, endpoints[0])

	code, created := do(t, one, http.MethodPost, gv+"/projects",
		`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"shared"}}`)
	require.Equal(t, http.StatusCreated, code, "create through one: %v", created)
	code, got := do(t, two, http.MethodGet, gv+"/projects/shared", "")
	require.Equal(t, http.StatusOK, code, "get through two")
	meta := func(o map[string]any, f string) any { return o["metadata"].(map[string]any)[f] }
	assert.Equal(t, meta(created, "uid"), meta(got, "uid"), "two servers, one object")
	rv := meta(created, "resourceVersion").(string)
	update := func(srv *app.Server, name string) int {
		code, _ := do(t, srv, http.MethodPut, gv+"/projects/shared",
			`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"shared","resourceVersion":"`+
				rv+`"},"spec":{"displayName":"`+name+`"}}`)
		return code
	}
	assert.Equal(t, http.StatusOK, update(two, "by two"), "update through two")
	assert.Equal(t, http.StatusConflict, update(one, "by one"), "the same stale update through one")

	require.Eventually(t, func() bool { return one.Store.Leading() != two.Store.Leading() }, 30*time.Second,
		10*time.Millisecond, "exactly one of the two servers leads")
}

// TestEtcdFlags checks that the etcd flags refuse what would otherwise fall back to
// another storage quietly.
func TestEtcdFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-endpoints", "http://127.0.0.1:2379", "--data-dir", t.TempDir()}, "exclude each other"},
		{[]string{"--etcd-endpoints", " , "}, "names no endpoint"},
		{[]string{"--etcd-prefix", "/x/"}, "goes with --etcd-endpoints"},
	} {
		_, err := app.ParseFlags(c.args, io.Discard, Storage())
		assert.ErrorContains(t, err, c.want, "%q", c.args)
	}
}
