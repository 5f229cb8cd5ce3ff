package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// The seed keys of the tests, besides the admin key.
const (
	adminKey = "admin-key-for-tests-0123456789"
	teamKey  = "team-key-0123456789abcdef" // examples/server/seed.yaml: projects a and b
	onlyBKey = "only-b-key-0123456789abcdef"
	shortKey = "short-lived-key-0123456789abcdef"
)

// extraSeed adds keys the shipped seed file does not have.
const extraSeed = `
apiVersion: management.service/v1
kind: AccessKey
metadata:
  name: only-b
spec:
  key: only-b-key-0123456789abcdef
  scope:
    projects:
    - project: b
---
apiVersion: management.service/v1
kind: AccessKey
metadata:
  name: short-lived
spec:
  key: short-lived-key-0123456789abcdef
  ttl: 1
`

// testServer is a server started in-process on loopback over plain HTTP.
type testServer struct {
	*app.Server
	t      *testing.T
	client *http.Client
}

// startServer starts a server with the shipped seed file, the extra keys and the
// given changes to its options.
func startServer(t testing.TB, mod func(*app.Options)) *testServer {
	t.Helper()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.yaml")
	data, err := os.ReadFile("seed.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(seed, append(data, []byte("---"+extraSeed)...), 0o600))
	o := app.Options{
		Addr:       "127.0.0.1:0",
		HTTP:       true,
		AccessKey:  adminKey,
		Seed:       seed,
		Kubeconfig: filepath.Join(dir, "kubeconfig"),
		Logger:     slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(&o)
	}
	srv, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, srv.Shutdown(ctx), "shutdown")
	})
	ts := &testServer{Server: srv, client: &http.Client{Timeout: 30 * time.Second}}
	if tt, ok := t.(*testing.T); ok {
		ts.t = tt
	}
	return ts
}

// response is a finished request.
type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "response is not JSON: %s", r.body)
	return m
}

// req is one request of a test: method, path below the base path, body, headers. The
// admin key is sent unless headers name an Authorization ("" sends none).
type req struct {
	method, path string
	body         []byte
	headers      map[string]string
}

// serve runs a request through the handler, without the network.
func (ts *testServer) serve(r req) response {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	hr := httptest.NewRequest(r.method, "http://test"+"/kubernetes/management"+r.path, body)
	hr.Header.Set("Authorization", "Bearer "+adminKey)
	if r.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	ts.Handler.ServeHTTP(rec, hr)
	return response{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// do sends a request over the network.
func (ts *testServer) do(t testing.TB, r req) response {
	t.Helper()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, ts.URL+r.path, body)
	require.NoError(t, err)
	hr.Header.Set("Authorization", "Bearer "+adminKey)
	if r.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := ts.client.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

const gv = "/apis/management.service/v1"

// expectStatus checks a response's code, and that a failure is a Status of that code.
func expectStatus(t testing.TB, r response, code int, what string) {
	t.Helper()
	if r.code != code {
		assert.Fail(t, fmt.Sprintf("%s: code %d, want %d; body %s", what, r.code, code, trim(r.body)))
		return
	}
	if code >= 400 {
		var st map[string]any
		if err := json.Unmarshal(r.body, &st); err != nil || st["kind"] != "Status" || st["code"] != float64(code) {
			assert.Fail(t, fmt.Sprintf("%s: body is not a Status of code %d: %s", what, code, trim(r.body)))
		}
	}
}

func trim(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

func yamlCT() map[string]string { return map[string]string{"Content-Type": "application/yaml"} }

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func project(name string) []byte {
	return []byte(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"` + name + `"}}`)
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }
