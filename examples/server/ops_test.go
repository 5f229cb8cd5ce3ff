package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

// syncBuffer is a buffer the server's log goroutines write to while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMetrics checks /metrics: the Prometheus text format with the request, store
// and size metrics the operator needs, served to the admin and refused to a scoped
// key whose scope does not name it.
func TestMetrics(t *testing.T) {
	ts := startServer(t, nil)
	expectStatus(t, ts.do(t, req{method: http.MethodPost, path: gv + "/projects", body: project("m")}), http.StatusCreated, "create")
	expectStatus(t, ts.do(t, req{method: http.MethodGet, path: gv + "/projects/missing"}), http.StatusNotFound, "get missing")

	r := ts.do(t, req{method: http.MethodGet, path: "/metrics"})
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", r.header.Get("Content-Type"))
	body := string(r.body)
	for _, want := range []string{
		`mgmt_http_requests_total{verb="create",resource="projects.management.service",code="201"} 1`,
		`mgmt_http_requests_total{verb="get",resource="projects.management.service",code="404"} 1`,
		`mgmt_http_request_duration_seconds_bucket{verb="create",resource="projects.management.service",le="+Inf"} 1`,
		`mgmt_store_transactions_total{outcome="committed"}`,
		`mgmt_store_commit_duration_seconds_count`,
		`mgmt_http_requests_in_flight{kind="readonly"} 1`, // this scrape
		`mgmt_http_watches_open 0`,
		`mgmt_store_objects `,
		`mgmt_store_history_revisions `,
		`# TYPE mgmt_http_request_duration_seconds histogram`,
	} {
		assert.Contains(t, body, want)
	}
	// Every sample line is "name{labels} value" with a number.
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		require.Len(t, f, 2, "line %q", l)
	}
	expectStatus(t, ts.do(t, req{method: http.MethodGet, path: "/metrics", headers: bearer(teamKey)}), http.StatusForbidden,
		"a key scoped to projects does not read the metrics")
}

// TestAccessLog checks the access log: one JSON line per request, with verb, path,
// user, code, bytes and duration, and never the bearer key.
func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	ts := startServer(t, func(o *app.Options) { o.Logger = slog.New(slog.NewJSONHandler(&buf, nil)) })
	expectStatus(t, ts.do(t, req{method: http.MethodPost, path: gv + "/projects", body: project("logged")}), http.StatusCreated, "create")
	expectStatus(t, ts.do(t, req{method: http.MethodGet, path: gv + "/projects/logged", headers: bearer("wrong-key-0123456789")}),
		http.StatusUnauthorized, "a wrong key")

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "%s", sc.Text())
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 2)
	assert.Equal(t, "POST", lines[0]["method"])
	assert.Equal(t, "/kubernetes/management"+gv+"/projects", lines[0]["path"])
	assert.Equal(t, "create", lines[0]["verb"])
	assert.Equal(t, "admin", lines[0]["user"])
	assert.Equal(t, float64(201), lines[0]["code"])
	assert.Positive(t, lines[0]["bytes"])
	assert.Contains(t, lines[0], "duration")
	assert.Equal(t, float64(401), lines[1]["code"])
	assert.NotContains(t, buf.String(), adminKey)
	assert.NotContains(t, buf.String(), "wrong-key-0123456789")
}

// TestPprof checks that the profiler is opt-in, on its own loopback listener, and
// refused on any other address.
func TestPprof(t *testing.T) {
	ts := startServer(t, func(o *app.Options) { o.Pprof = "127.0.0.1:0" })
	require.NotEmpty(t, ts.PprofURL)
	resp, err := http.Get(ts.PprofURL + "cmdline")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, http.StatusNotFound, ts.do(t, req{method: http.MethodGet, path: "/debug/pprof/"}).code,
		"the API listener serves no profiler")

	for _, bad := range []string{"0.0.0.0:6060", ":6060", "10.1.2.3:6060", "nonsense"} {
		_, err := app.ParseFlags([]string{"--pprof", bad}, io.Discard)
		assert.ErrorContains(t, err, "loopback", bad)
	}
	_, err = app.ParseFlags([]string{"--log-format", "xml"}, io.Discard)
	assert.ErrorContains(t, err, "text or json")
}

// TestShutdownEndsWatches checks that a shutdown ends an open watch cleanly (the
// client sees the stream end) and returns promptly.
func TestShutdownEndsWatches(t *testing.T) {
	srv, err := app.Start(t.Context(), app.Options{Addr: "127.0.0.1:0", HTTP: true, AccessKey: adminKey,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	hr, err := http.NewRequest(http.MethodGet, srv.URL+gv+"/projects?watch=1", nil)
	require.NoError(t, err)
	hr.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()

	start := time.Now()
	require.NoError(t, srv.Shutdown(t.Context()))
	assert.Less(t, time.Since(start), 5*time.Second)
	select {
	case err := <-ended:
		assert.NoError(t, err, "the stream ends cleanly")
	case <-time.After(5 * time.Second):
		require.Fail(t, "the watch stream did not end")
	}
}
