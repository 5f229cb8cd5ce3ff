package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzHandler sends arbitrary methods, paths, headers and bodies to the handler and
// checks that it never answers 5xx (reliability-security §4.7, FuzzHTTPHandler), and
// that every failure is a Status. Headers come as "Name: value" lines.
func FuzzHandler(f *testing.F) {
	ts := startServer(f, nil)
	base := "/kubernetes/management"
	seeds := []struct {
		method, path, headers string
		body                  string
		auth                  bool
	}{
		{"GET", base + gv + "/projects", "", "", true},
		{"GET", base + gv + "/projects?watch=1&resourceVersion=0", "", "", true},
		{"POST", base + gv + "/projects", "Content-Type: application/json", `{"metadata":{"name":"f"}}`, true},
		{"POST", base + gv + "/projects?dryRun=All", "Content-Type: application/yaml", "metadata:\n  name: f\n", true},
		{"PUT", base + gv + "/projects/a", "Content-Type: application/json", `{"metadata":{"name":"a","resourceVersion":"3"}}`, true},
		{"PATCH", base + gv + "/projects/a", "Content-Type: application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, true},
		{"PATCH", base + gv + "/projects/a", "Content-Type: application/json-patch+json", `[{"op":"remove","path":"/spec"}]`, true},
		{"DELETE", base + gv + "/projects/b", "Content-Type: application/json", `{"propagationPolicy":"Orphan","gracePeriodSeconds":5}`, true},
		{"DELETE", base + gv + "/projects?labelSelector=x", "", "", true},
		{"POST", base + gv + "/directclusterendpointtokens", "", `{"metadata":{"generateName":"t-"},"spec":{"ttl":60}}`, true},
		{"POST", base + gv + "/projects/b/migratevirtualclusterinstance", "", "sourceVirtualClusterInstance: {name: dev, namespace: p-a}", true},
		{"POST", base + gv + "/accesskeys", "", `{"metadata":{"name":"k"},"spec":{"key":"x","scope":{"rules":[{"verbs":["get"]}]}}}`, true},
		{"PUT", base + gv + "/namespaces/p-a/virtualclusterinstances/dev/status", "", `{"metadata":{"name":"dev"},"status":{"phase":"Ready"}}`, true},
		{"GET", base + "/openapi/v3/apis/management.service/v1", "Accept: application/json;as=Table;g=meta.k8s.io;v=v1", "", true},
		{"GET", base + "/apis", "Authorization: Bearer x", "", false},
		{"GET", base + gv + "/namespaces/p-a%2F..%2Fp-b/virtualclusterinstances", "", "", true},
		{"OPTIONS", base + "/version", "", "", true},
		{"GET", "/other", "", "", false},
		{"GET", base + "/openid/v1/jwks", "", "", false},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.headers, []byte(s.body), s.auth)
	}
	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte, auth bool) {
		if method == "" || strings.ContainsAny(method, " \t\r\n()<>@,;:\\\"/[]?={}") || len(method) > 16 {
			return
		}
		u, err := url.ParseRequestURI(path)
		if err != nil || u.Host != "" {
			return
		}
		r := httptest.NewRequest("GET", "http://test/", bytes.NewReader(body))
		r.Method, r.URL, r.RequestURI = method, u, path
		r.ContentLength = int64(len(body))
		for _, line := range strings.Split(headers, "\n") {
			name, value, ok := strings.Cut(line, ":")
			if !ok || name == "" || strings.ContainsAny(name, " \t\r:") {
				continue
			}
			r.Header.Add(name, strings.TrimSpace(value))
		}
		if auth && r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+adminKey)
		}
		// A watch runs until its client goes: end it soon.
		watch := u.Query().Has("watch")
		if watch {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			r = r.WithContext(ctx)
		}
		rec := httptest.NewRecorder()
		ts.Handler.ServeHTTP(rec, r)
		code := rec.Code
		if code >= 500 && !(watch && code == http.StatusGatewayTimeout) {
			require.FailNow(t, fmt.Sprintf("%s %s (headers %q, body %q): %d %s", method, path, headers, body, code, rec.Body.String()))
		}
		if code >= 400 && rec.Header().Get("Content-Type") == "application/json" {
			b, _ := io.ReadAll(rec.Body)
			if !bytes.Contains(b, []byte(`"kind":"Status"`)) {
				require.FailNow(t, fmt.Sprintf("%s %s: %d without a Status: %s", method, path, code, b))
			}
		}
	})
}
