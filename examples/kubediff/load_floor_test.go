package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The floor answers each request of the throughput workloads with the captured
// body that belongs to it.
func TestFloorHandler_answers_each_workload_with_its_capture(t *testing.T) {
	a := floorAnswers{object: []byte(`{"o":1}`), list: []byte(`{"l":1}`), page1: []byte(`{"p":1}`), page2: []byte(`{"p":2}`)}
	srv := httptest.NewServer(floorHandler(a))
	defer srv.Close()
	vcis := "/apis/management.service/v1/namespaces/p-x/virtualclusterinstances"
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"get of an object", http.MethodGet, vcis + "/o-1", "", http.StatusOK, `{"o":1}`},
		{"list", http.MethodGet, vcis, "", http.StatusOK, `{"l":1}`},
		{"first page", http.MethodGet, vcis + "?limit=500", "", http.StatusOK, `{"p":1}`},
		{"next page", http.MethodGet, vcis + "?limit=500&continue=abc", "", http.StatusOK, `{"p":2}`},
		{"create echoes", http.MethodPost, vcis, `{"c":1}`, http.StatusCreated, `{"c":1}`},
		{"project create", http.MethodPost, "/apis/management.service/v1/projects", `{"pr":1}`, http.StatusCreated, `{"pr":1}`},
		{"update echoes", http.MethodPut, vcis + "/o-1", `{"u":1}`, http.StatusOK, `{"u":1}`},
		{"anything else", http.MethodDelete, vcis + "/o-1", "", http.StatusNotFound, "404 page not found\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.code, resp.StatusCode)
			assert.Equal(t, tc.want, string(b))
		})
	}
}

// The floor's certificate is one a client that trusts its PEM accepts for
// 127.0.0.1.
func TestFloorCertificate_verifies_for_loopback(t *testing.T) {
	cert, pemBytes, err := floorCertificate()
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pemBytes))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: floorHandler(floorAnswers{object: []byte("x")})}}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/apis/x/o")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// readFloorAnswers reads the four captures and fails when one is missing.
func TestReadFloorAnswers(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{floorObject, floorList, floorPage1} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f), 0o600))
	}
	_, err := readFloorAnswers(dir)
	require.Error(t, err, "the second page is missing")
	require.NoError(t, os.WriteFile(filepath.Join(dir, floorPage2), []byte(floorPage2), 0o600))
	a, err := readFloorAnswers(dir)
	require.NoError(t, err)
	assert.Equal(t, floorAnswers{object: []byte(floorObject), list: []byte(floorList), page1: []byte(floorPage1), page2: []byte(floorPage2)}, a)
}
