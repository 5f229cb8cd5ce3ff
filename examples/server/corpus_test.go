package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/examples/server/internal/app"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
)

// TestBadInputCorpus is the bad-input corpus of reliability-security §4.8, one case per
// row that applies to the HTTP server, each with the code the row expects.
func TestBadInputCorpus(t *testing.T) {
	ts := startServer(t, nil)
	projects := gv + "/projects"
	vcis := gv + "/namespaces/p-a/virtualclusterinstances"

	big := make([]byte, 3<<20+10)
	for i := range big {
		big[i] = 'a'
	}
	nest := func(open string, n int) []byte { return []byte(strings.Repeat(open, n)) }
	billionLaughs := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	yamlProject := func(meta string) []byte {
		return []byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n" + meta)
	}
	cases := []struct {
		row  string
		r    req
		code int
	}{
		// Body > 3 MiB.
		{"body over 3 MiB", req{method: "POST", path: projects, body: big}, 413},
		{"body over 3 MiB, YAML", req{method: "POST", path: projects, body: big, headers: yamlCT()}, 413},
		{"body over 3 MiB, patch", req{method: "PATCH", path: projects + "/a", body: big,
			headers: map[string]string{"Content-Type": "application/merge-patch+json"}}, 413},
		{"gzip body (not accepted)", req{method: "POST", path: projects, body: []byte{0x1f, 0x8b},
			headers: map[string]string{"Content-Encoding": "gzip"}}, 415},
		// Stored object > 1.5 MiB.
		{"stored object over 1.5 MiB", req{method: "POST", path: projects, body: []byte(
			`{"metadata":{"name":"huge"},"spec":{"description":"` + strings.Repeat("x", 2<<20) + `"}}`)}, 413},
		// Malformed bodies.
		{"truncated JSON", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"x"`)}, 400},
		{"invalid JSON", req{method: "POST", path: projects, body: []byte(`{"metadata":}`)}, 400},
		{"truncated YAML", req{method: "POST", path: projects, body: []byte("metadata:\n  name: [x"), headers: yamlCT()}, 400},
		{"YAML with tabs", req{method: "POST", path: projects, body: []byte("metadata:\n\tname: x\n"), headers: yamlCT()}, 400},
		{"invalid UTF-8", req{method: "POST", path: projects, body: []byte("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"displayName\":\"\xff\xfe\"}}")}, 400},
		{"billion laughs", req{method: "POST", path: projects, body: []byte(billionLaughs), headers: yamlCT()}, 400},
		{"1 MiB of [", req{method: "POST", path: projects, body: nest("[", 1<<20)}, 400},
		{"1 MiB of {", req{method: "POST", path: projects, body: nest(`{"a":`, 1<<20/5)}, 400},
		{"1 MiB of - ", req{method: "POST", path: projects, body: nest("- ", 1<<19), headers: yamlCT()}, 400},
		{"multi-document YAML", req{method: "POST", path: projects,
			body: append(yamlProject("  name: m1\n"), []byte("---\n"+string(yamlProject("  name: m2\n")))...), headers: yamlCT()}, 400},
		{"duplicate keys", req{method: "POST", path: projects + "?fieldValidation=Strict", body: []byte(`{"metadata":{"name":"d1","name":"d2"}}`)}, 400},
		{"unknown field", req{method: "POST", path: projects + "?fieldValidation=Strict", body: []byte(`{"metadata":{"name":"u"},"spec":{"bogus":1}}`)}, 400},
		{"non-string map key", req{method: "POST", path: projects, body: yamlProject("  name: k\n  labels:\n    1: a\n"), headers: yamlCT()}, 400},
		{"!!binary tag", req{method: "POST", path: projects, body: yamlProject("  name: !!binary aGVsbG8=\n"), headers: yamlCT()}, 400},
		{"unquoted no in a label", req{method: "POST", path: projects, body: yamlProject("  name: l\n  labels:\n    a: no\n"), headers: yamlCT()}, 400},
		{"unquoted 1.10 in a label", req{method: "POST", path: projects, body: yamlProject("  name: l\n  labels:\n    a: 1.10\n"), headers: yamlCT()}, 400},
		// Kinds and versions.
		{"missing apiVersion and kind (taken from the endpoint)", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"nokind"}}`)}, 201},
		{"unknown apiVersion", req{method: "POST", path: projects, body: []byte(`{"apiVersion":"management.service/v2","kind":"Project","metadata":{"name":"v2"}}`)}, 400},
		{"apiVersion other than the URL's", req{method: "POST", path: projects, body: []byte(`{"apiVersion":"v1","kind":"Project","metadata":{"name":"v1"}}`)}, 400},
		{"kind other than the URL's", req{method: "POST", path: projects, body: []byte(`{"apiVersion":"management.service/v1","kind":"AccessKey","metadata":{"name":"k"}}`)}, 422},
		{"unknown group-version", req{method: "GET", path: "/apis/management.service/v2/projects"}, 404},
		{"unknown resource", req{method: "GET", path: gv + "/pods"}, 404},
		{"cluster-scoped kind under a namespace", req{method: "GET", path: gv + "/namespaces/p-a/projects/a"}, 404},
		{"namespaced kind without a namespace", req{method: "GET", path: gv + "/virtualclusterinstances/dev"}, 404},
		{"unsupported Content-Type", req{method: "POST", path: projects, body: project("ct"), headers: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"protobuf Content-Type", req{method: "POST", path: projects, body: project("ct"), headers: map[string]string{"Content-Type": "application/vnd.kubernetes.protobuf"}}, 415},
		{"strategic merge patch that is not an object", req{method: "PATCH", path: projects + "/a", body: []byte(`[]`), headers: map[string]string{"Content-Type": "application/strategic-merge-patch+json"}}, 400},
		{"server-side apply without fieldManager", req{method: "PATCH", path: projects + "/a", body: []byte(`{}`), headers: map[string]string{"Content-Type": "application/apply-patch+yaml"}}, 422},
		{"unacceptable Accept", req{method: "GET", path: projects, headers: map[string]string{"Accept": "application/vnd.kubernetes.protobuf"}}, 406},
		// Names.
		{"empty name", req{method: "POST", path: projects, body: []byte(`{"metadata":{}}`)}, 422},
		{"name of 254 characters", req{method: "POST", path: projects, body: project(strings.Repeat("a", 254))}, 422},
		{"upper-case name", req{method: "POST", path: projects, body: project("Upper")}, 422},
		{"name a/b", req{method: "POST", path: projects, body: project("a/b")}, 422},
		{"name ..", req{method: "GET", path: projects + "/.."}, 422},
		{"name with %2F", req{method: "GET", path: projects + "/a%2F..%2Fb"}, 422},
		{"name with NUL", req{method: "GET", path: projects + "/a%00"}, 422},
		{"name with a leading -", req{method: "POST", path: projects, body: project("-a")}, 422},
		{"upper-case name in the URL", req{method: "GET", path: projects + "/A"}, 422},
		{"namespace of 64 characters", req{method: "GET", path: gv + "/namespaces/" + strings.Repeat("n", 64) + "/virtualclusterinstances"}, 422},
		{"upper-case namespace", req{method: "GET", path: gv + "/namespaces/P-A/virtualclusterinstances"}, 422},
		{"label value of 64 characters", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"lv","labels":{"a":"` + strings.Repeat("v", 64) + `"}}}`)}, 422},
		{"label key prefix of 254 characters", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"lk","labels":{"` + strings.Repeat("p", 254) + `/a":"v"}}}`)}, 422},
		{"annotations over 256 KiB", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"an","annotations":{"a":"` + strings.Repeat("v", 256<<10) + `"}}}`)}, 422},
		// Schema violations.
		{"schema: pattern (allowed cluster name)", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"sp"},"spec":{"allowedClusters":[{"name":"Bad_Name"}]}}`)}, 422},
		{"schema: required (migration source)", req{method: "POST", path: gv + "/projects/b/migratevirtualclusterinstance", body: []byte(`{"sourceVirtualClusterInstance":{"namespace":"p-a"}}`)}, 422},
		{"schema: wrong type", req{method: "POST", path: projects, body: []byte(`{"metadata":{"name":"wt"},"spec":{"displayName":7}}`)}, 400},
		// Conflicts.
		{"update with a stale resourceVersion", req{method: "PUT", path: projects + "/a", body: []byte(`{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"displayName":"stale"}}`)}, 409},
		{"create of an existing name", req{method: "POST", path: projects, body: project("a")}, 409},
		{"delete with a failing uid precondition", req{method: "DELETE", path: projects + "/b", body: []byte(`{"preconditions":{"uid":"not-the-uid"}}`)}, 409},
		// Authentication.
		{"no Authorization", req{method: "GET", path: projects, headers: map[string]string{"Authorization": ""}}, 401},
		{"malformed bearer", req{method: "GET", path: projects, headers: map[string]string{"Authorization": "Bearer"}}, 401},
		{"basic instead of bearer", req{method: "GET", path: projects, headers: map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}}, 401},
		{"unknown access key", req{method: "GET", path: projects, headers: bearer("no-such-key")}, 401},
		{"a token (JWT) instead of an access key", req{method: "GET", path: projects, headers: bearer("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")}, 401},
		{"Authorization header over 8 KiB", req{method: "GET", path: projects, headers: bearer(strings.Repeat("k", 9<<10))}, 401},
		// Authorization.
		{"no permission (list of all projects with a project key)", req{method: "GET", path: projects, headers: bearer(teamKey)}, 403},
		{"no permission (other project)", req{method: "GET", path: projects + "/a", headers: bearer(onlyBKey)}, 403},
		{"scope escalation: token wider than the key", req{method: "POST", path: gv + "/directclusterendpointtokens", headers: bearer(teamKey),
			body: []byte(`{"metadata":{"generateName":"t-"},"spec":{"scope":{"projects":[{"project":"*"}]}}}`)}, 403},
		{"scope escalation: access key wider than the key", req{method: "POST", path: gv + "/accesskeys", headers: bearer(teamKey),
			body: []byte(`{"metadata":{"name":"wider"},"spec":{"key":"wider-key-0123456789"}}`)}, 403},
		{"migration without rights on the source", req{method: "POST", path: gv + "/projects/b/migratevirtualclusterinstance", headers: bearer(onlyBKey),
			body: []byte(`{"sourceVirtualClusterInstance":{"name":"dev","namespace":"p-a"}}`)}, 403},
		// Operations a resource does not have.
		{"update of a DirectClusterEndpointToken", req{method: "PUT", path: gv + "/directclusterendpointtokens/x", body: []byte(`{}`)}, 405},
		{"patch of a DirectClusterEndpointToken", req{method: "PATCH", path: gv + "/directclusterendpointtokens/x", body: []byte(`{}`),
			headers: map[string]string{"Content-Type": "application/merge-patch+json"}}, 405},
		{"get of the migrate subresource", req{method: "GET", path: gv + "/projects/b/migratevirtualclusterinstance"}, 405},
		{"watch of access keys", req{method: "GET", path: gv + "/accesskeys?watch=1"}, 405},
		{"delete of a status", req{method: "DELETE", path: vcis + "/dev/status"}, 405},
		{"patch of an access key's status (access keys have no status subresource)", req{method: "PATCH", path: gv + "/accesskeys/a/status", body: []byte(`{}`),
			headers: map[string]string{"Content-Type": "application/merge-patch+json"}}, 404},
		{"create of a namespaced kind without a namespace", req{method: "POST", path: gv + "/virtualclusterinstances", body: []byte(`{}`)}, 405},
		// Options.
		{"dryRun other than All", req{method: "POST", path: projects + "?dryRun=Some", body: project("dry")}, 422},
		{"fieldManager too long", req{method: "POST", path: projects + "?fieldManager=" + strings.Repeat("m", 129), body: project("fm")}, 422},
		{"fieldValidation unknown", req{method: "POST", path: projects + "?fieldValidation=Loose", body: project("fv")}, 422},
		{"malformed label selector", req{method: "GET", path: projects + "?labelSelector=a%20in%20("}, 400},
		{"unsupported field selector", req{method: "GET", path: projects + "?fieldSelector=spec.x%3D1"}, 400},
		{"malformed limit", req{method: "GET", path: projects + "?limit=-1"}, 400},
		{"malformed continue", req{method: "GET", path: projects + "?limit=1&continue=garbage"}, 400},
		{"unknown propagation policy", req{method: "DELETE", path: projects + "/b", body: []byte(`{"propagationPolicy":"Sideways"}`)}, 422},
	}
	for _, c := range cases {
		t.Run(c.row, func(t *testing.T) {
			start := time.Now()
			r := ts.serve(c.r)
			expectStatus(t, r, c.code, c.row)
			if strings.HasPrefix(c.row, "billion") && time.Since(start) > time.Second {
				assert.Fail(t, fmt.Sprintf("billion laughs took %v", time.Since(start)))
			}
		})
	}

	t.Run("schema: enum (status phase)", func(t *testing.T) {
		rv := ts.serve(req{method: "GET", path: vcis + "/dev"}).json(t)["metadata"].(map[string]any)["resourceVersion"].(string)
		r := ts.serve(req{method: "PUT", path: vcis + "/dev/status", body: []byte(
			`{"metadata":{"name":"dev","namespace":"p-a","resourceVersion":"` + rv + `"},"status":{"phase":"Bogus"}}`)})
		expectStatus(t, r, 422, "status phase Bogus")
		assert.Contains(t, string(r.body), `"field":"status.phase"`, "422 without the field path: %s", r.body)
	})

	t.Run("expired access key", func(t *testing.T) {
		// The short-lived key has ttl 1 s from its creation.
		deadline := time.Now().Add(5 * time.Second)
		for {
			r := ts.serve(req{method: "GET", path: "/version", headers: bearer(shortKey)})
			if r.code == 401 {
				expectStatus(t, r, 401, "expired key")
				return
			}
			if time.Now().After(deadline) {
				require.FailNow(t, fmt.Sprintf("the short-lived key still works after 5 s: %d", r.code))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("watch from a compacted resourceVersion", func(t *testing.T) {
		// More writes than the store's watch cache keeps, so that only the backend
		// could serve rv 1 (a cache that still holds it serves it, as kube's does).
		ctx := context.Background()
		for i := range 1100 {
			require.NoError(t, ts.Store.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{
				Name: fmt.Sprintf("compact-%d", i)}}, store.CreateOptions{}))
		}
		rev, err := ts.Store.Backend().Revision(ctx)
		require.NoError(t, err)
		c, ok := ts.Store.Backend().(backend.Compactor)
		if !ok {
			t.Skip("backend cannot compact")
		}
		require.NoError(t, c.Compact(ctx, rev))
		expectStatus(t, ts.serve(req{method: "GET", path: projects + "?watch=1&resourceVersion=1"}), 410, "watch from rv 1")
	})

	t.Run("chunked body over 3 MiB", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			chunk := make([]byte, 64<<10)
			for i := range chunk {
				chunk[i] = ' '
			}
			for i := 0; i < 60; i++ {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		hr, _ := http.NewRequest("POST", ts.URL+projects, pr)
		hr.Header.Set("Authorization", "Bearer "+adminKey)
		hr.Header.Set("Content-Type", "application/json")
		resp, err := ts.client.Do(hr)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pr.CloseWithError(errors.New("done"))
		expectStatus(t, response{code: resp.StatusCode, body: b}, 413, "chunked")
	})

	t.Run("headers over 1 MiB", func(t *testing.T) {
		r := ts.do(t, req{method: "GET", path: "/version", headers: map[string]string{"X-Big": strings.Repeat("h", 2<<20)}})
		assert.Equal(t, 431, r.code, "code")
	})
}

// TestTooManyRequests holds the only mutating slot with a request whose body never
// ends, and checks that the next mutating request is 429 with Retry-After.
func TestTooManyRequests(t *testing.T) {
	ts := startServer(t, func(o *app.Options) { o.MaxMutatingRequestsInFlight = 1 })
	// A slow request holds the one mutating slot: its body arrives only at the end.
	var pw *io.PipeWriter
	var done chan struct{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pr, w := io.Pipe()
		pw, done = w, make(chan struct{})
		go func() {
			defer close(done)
			hr, _ := http.NewRequest("POST", ts.URL+gv+"/projects", pr)
			hr.Header.Set("Authorization", "Bearer "+adminKey)
			hr.Header.Set("Content-Type", "application/json")
			if resp, err := ts.client.Do(hr); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		_, _ = pw.Write([]byte(`{"metadata":`))
		held := false
		for !held && time.Now().Before(deadline) {
			_, mutating, _ := ts.Handler.InFlight()
			held = mutating == 1
			select {
			case <-done: // answered (it met a slot taken by someone else): try again
				held = false
			default:
			}
			if !held {
				time.Sleep(5 * time.Millisecond)
			}
		}
		require.True(t, held, "the slow request never held the slot")
		select {
		case <-done:
			continue
		default:
		}
		break
	}
	r := ts.do(t, req{method: "POST", path: gv + "/projects", body: project("second")})
	expectStatus(t, r, 429, "a second write while the slot is held")
	assert.NotEmpty(t, r.header.Get("Retry-After"), "429 with Retry-After")
	// Reads have their own bound.
	expectStatus(t, ts.do(t, req{method: "GET", path: gv + "/projects"}), 200, "read while writes are full")
	_, _ = pw.Write([]byte(`{"name":"slow"}}`))
	pw.Close()
	<-done
}

// TestSlowHeaders checks that a client that never finishes its headers is dropped after
// ReadHeaderTimeout.
func TestSlowHeaders(t *testing.T) {
	ts := startServer(t, func(o *app.Options) { o.ReadHeaderTimeout = 300 * time.Millisecond })
	addr := strings.TrimPrefix(strings.TrimSuffix(ts.URL, "/kubernetes/management"), "http://")
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /kubernetes/management/healthz HTTP/1.1\r\nHost: x\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// Go answers 408 before closing on some versions; either way the connection ends.
		_, err = io.ReadAll(conn)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		require.FailNow(t, fmt.Sprintf("the connection was not closed after the header timeout (waited %v)", time.Since(start)))
	}
	if time.Since(start) > 3*time.Second {
		assert.Fail(t, fmt.Sprintf("closed after %v, want about 300ms", time.Since(start)))
	}
}
