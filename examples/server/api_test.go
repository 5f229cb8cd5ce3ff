package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func meta(m map[string]any) map[string]any { v, _ := m["metadata"].(map[string]any); return v }

// TestCRUD walks a Project through create, get, list, update, the two patch types and
// delete, checking the codes and bodies kube-apiserver gives for custom resources.
func TestCRUD(t *testing.T) {
	ts := startServer(t, nil)
	p := gv + "/projects"

	r := ts.serve(req{method: "POST", path: p + "?dryRun=All", body: project("web")})
	expectStatus(t, r, 201, "dry-run create")
	expectStatus(t, ts.serve(req{method: "GET", path: p + "/web"}), 404, "get after dry run")

	r = ts.serve(req{method: "POST", path: p, body: []byte(`{"metadata":{"name":"web"},"spec":{"displayName":"w"}}`),
		headers: map[string]string{"User-Agent": "my-tool/1.2 (linux)"}})
	expectStatus(t, r, 201, "create")
	created := r.json(t)
	if created["kind"] != "Project" || meta(created)["uid"] == "" || meta(created)["resourceVersion"] == "" {
		require.FailNow(t, fmt.Sprintf("create response: %s", r.body))
	}
	if mf, _ := meta(created)["managedFields"].([]any); len(mf) == 0 || mf[0].(map[string]any)["manager"] != "my-tool" {
		assert.Fail(t, fmt.Sprintf("field manager from the User-Agent: %v", mf))
	}

	r = ts.serve(req{method: "GET", path: p + "/web", headers: map[string]string{"Accept": "application/yaml"}})
	expectStatus(t, r, 200, "get as YAML")
	if r.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(r.body), "kind: Project") {
		assert.Fail(t, fmt.Sprintf("YAML get: %s %s", r.header.Get("Content-Type"), r.body))
	}

	r = ts.serve(req{method: "GET", path: p + "?labelSelector=x%3Dy"})
	expectStatus(t, r, 200, "list")
	if l := r.json(t); l["kind"] != "ProjectList" || len(l["items"].([]any)) != 0 || meta(l)["resourceVersion"] == "" {
		assert.Fail(t, fmt.Sprintf("list with a selector matching nothing: %s", r.body))
	}
	r = ts.serve(req{method: "GET", path: p + "?limit=1"})
	if l := r.json(t); len(l["items"].([]any)) != 1 || meta(l)["continue"] == nil {
		assert.Fail(t, fmt.Sprintf("paged list: %s", r.body))
	}
	cont := meta(r.json(t))["continue"].(string)
	r = ts.serve(req{method: "GET", path: p + "?limit=10&continue=" + cont})
	expectStatus(t, r, 200, "second page")

	rv := meta(created)["resourceVersion"].(string)
	upd := `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"web","resourceVersion":"` + rv + `"},"spec":{"displayName":"Web"}}`
	r = ts.serve(req{method: "PUT", path: p + "/web?fieldManager=editor", body: []byte(upd)})
	expectStatus(t, r, 200, "update")
	expectStatus(t, ts.serve(req{method: "PUT", path: p + "/web", body: []byte(upd)}), 409, "update with the old resourceVersion")
	expectStatus(t, ts.serve(req{method: "PUT", path: p + "/other", body: []byte(upd)}), 400, "update of another name than the URL's")

	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	r = ts.serve(req{method: "PATCH", path: p + "/web", body: []byte(`{"metadata":{"labels":{"env":"dev"}}}`), headers: merge})
	expectStatus(t, r, 200, "merge patch")
	if meta(r.json(t))["labels"].(map[string]any)["env"] != "dev" {
		assert.Fail(t, fmt.Sprintf("merge patch result: %s", r.body))
	}
	expectStatus(t, ts.serve(req{method: "PATCH", path: p + "/web", headers: merge,
		body: []byte(`{"metadata":{"resourceVersion":"1","labels":{"env":"x"}}}`)}), 409, "patch with a stale resourceVersion precondition")
	r = ts.serve(req{method: "PATCH", path: p + "/web", headers: map[string]string{"Content-Type": "application/json-patch+json"},
		body: []byte(`[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}},{"op":"test","path":"/spec/displayName","value":"Web"}]`)})
	expectStatus(t, r, 200, "JSON patch")
	expectStatus(t, ts.serve(req{method: "PATCH", path: p + "/web", headers: map[string]string{"Content-Type": "application/json-patch+json"},
		body: []byte(`[{"op":"test","path":"/spec/displayName","value":"Nope"}]`)}), 422, "JSON patch whose test fails")

	// Delete of an object with a finalizer only marks it: the object comes back.
	r = ts.serve(req{method: "PATCH", path: p + "/web", headers: merge, body: []byte(`{"metadata":{"finalizers":["example.com/keep"]}}`)})
	expectStatus(t, r, 200, "add finalizer")
	r = ts.serve(req{method: "DELETE", path: p + "/web", body: []byte(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`)})
	expectStatus(t, r, 200, "delete with a finalizer")
	if got := r.json(t); got["kind"] != "Project" || meta(got)["deletionTimestamp"] == nil {
		assert.Fail(t, fmt.Sprintf("delete that only marks must return the object: %s", r.body))
	}
	uid := meta(created)["uid"].(string)
	r = ts.serve(req{method: "PATCH", path: p + "/web", headers: merge, body: []byte(`{"metadata":{"finalizers":null}}`)})
	expectStatus(t, r, 200, "remove the finalizers")
	// The foregroundDeletion finalizer goes with the store's collector; wait for it.
	deadline := time.Now().Add(5 * time.Second)
	for ts.serve(req{method: "GET", path: p + "/web"}).code != 404 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	expectStatus(t, ts.serve(req{method: "GET", path: p + "/web"}), 404, "get after the finalizers went")

	// Delete that removes: a Status Success with details, as for custom resources.
	// (A project is deleted like a namespace: marked, emptied, then removed; an access
	// key has no such finalizer.)
	r = ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(`{"metadata":{"name":"gone"},"spec":{"key":"gone-key-0123456789abcdef"}}`)})
	expectStatus(t, r, 201, "create key")
	uid = meta(r.json(t))["uid"].(string)
	r = ts.serve(req{method: "DELETE", path: gv + "/accesskeys/gone", headers: yamlCT(),
		body: []byte("kind: DeleteOptions\napiVersion: v1\npreconditions:\n  uid: " + uid + "\n")})
	expectStatus(t, r, 200, "delete")
	st := r.json(t)
	d, _ := st["details"].(map[string]any)
	assert.Equal(t, "Status", st["kind"], "%s", r.body)
	assert.Equal(t, "Success", st["status"])
	assert.Equal(t, map[string]any{"name": "gone", "kind": "accesskeys", "group": "management.service", "uid": uid}, d)
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/accesskeys/gone"}), 404, "delete again")

	// A project with no instances: marked, then removed by the project worker.
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: project("gone")}), 201, "create project")
	r = ts.serve(req{method: "DELETE", path: p + "/gone"})
	expectStatus(t, r, 200, "delete project")
	assert.NotNil(t, meta(r.json(t))["deletionTimestamp"], "the project is marked first")
	require.Eventually(t, func() bool { return ts.serve(req{method: "GET", path: p + "/gone"}).code == 404 },
		10*time.Second, 10*time.Millisecond, "the empty project goes")
}

// TestBodies checks the request body forms: YAML, no Content-Type (read as YAML, which
// covers JSON), and JSON.
func TestBodies(t *testing.T) {
	ts := startServer(t, nil)
	p := gv + "/projects"
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: []byte("metadata:\n  name: y1\n"), headers: yamlCT()}), 201, "YAML")
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: []byte("metadata:\n  name: y2\n"), headers: map[string]string{"Content-Type": ""}}), 201, "YAML without Content-Type")
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: []byte(`{"metadata":{"name":"y3"}}`), headers: map[string]string{"Content-Type": ""}}), 201, "JSON without Content-Type")
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: []byte(`{metadata: {name: y4}}`), headers: map[string]string{"Content-Type": ""}}), 201, "YAML flow mapping without Content-Type")
	expectStatus(t, ts.serve(req{method: "POST", path: p, body: []byte(`{"metadata":{"name":"y5"}}`), headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}}), 201, "JSON with charset")
}

// TestAccessKeys checks that an AccessKey's secret is stored as a hash only, never
// returned, works at once, and stays out of kubectl's last-applied annotation.
func TestAccessKeys(t *testing.T) {
	ts := startServer(t, nil)
	body := `{"metadata":{"name":"ci","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"key\":\"ci-key-0123456789abcdef\"}}"}},` +
		`"spec":{"key":"ci-key-0123456789abcdef","scope":{"projects":[{"project":"a"}]}}}`
	r := ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(body)})
	expectStatus(t, r, 201, "create access key")
	require.NotContains(t, string(r.body), "ci-key-0123456789abcdef", "the create response shows the key: %s", r.body)
	spec := r.json(t)["spec"].(map[string]any)
	assert.NotContains(t, spec, "key", "the secret is never returned")
	assert.NotContains(t, spec, "keyHash", "nor its hash")
	r = ts.serve(req{method: "GET", path: gv + "/projects/a", headers: bearer("ci-key-0123456789abcdef")})
	expectStatus(t, r, 200, "the new key works at once")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects/b", headers: bearer("ci-key-0123456789abcdef")}), 403, "outside its scope")
	r = ts.serve(req{method: "GET", path: gv + "/accesskeys"})
	if strings.Contains(string(r.body), "ci-key-0123456789abcdef") || strings.Contains(string(r.body), adminKey) {
		assert.Fail(t, fmt.Sprintf("a list shows a key: %s", r.body))
	}
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(`{"metadata":{"name":"nokey"}}`)}), 422, "key required")
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(`{"metadata":{"name":"hash"},"spec":{"keyHash":"sha256:00"}}`)}), 422, "keyHash is the server's")
	// Deleting the key locks it out.
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/accesskeys/ci"}), 200, "delete key")
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := ts.serve(req{method: "GET", path: gv + "/projects/a", headers: bearer("ci-key-0123456789abcdef")})
		if r.code == 401 {
			break
		}
		if time.Now().After(deadline) {
			require.FailNow(t, fmt.Sprintf("a deleted key still authenticates: %d", r.code))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTokensAndOpenID creates a token with the scoped key, reads its record back
// (without the token) and fetches the key set without authentication.
func TestTokensAndOpenID(t *testing.T) {
	ts := startServer(t, nil)
	r := ts.serve(req{method: "POST", path: gv + "/directclusterendpointtokens", headers: merge(bearer(teamKey), yamlCT()),
		body: []byte("apiVersion: management.service/v1\nkind: DirectClusterEndpointToken\nmetadata:\n  name: t1\nspec:\n  ttl: 600\n  scope:\n    projects:\n    - project: a\n")})
	expectStatus(t, r, 201, "create token")
	tok := r.json(t)["status"].(map[string]any)["token"].(string)
	require.Equal(t, 2, strings.Count(tok, "."), "status.token %q is not a JWS", tok)
	r = ts.serve(req{method: "GET", path: gv + "/directclusterendpointtokens/t1"})
	expectStatus(t, r, 200, "get record")
	if strings.Contains(string(r.body), tok) || strings.Contains(string(r.body), `"token"`) {
		assert.Fail(t, fmt.Sprintf("the record holds the token: %s", r.body))
	}
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/directclusterendpointtokens"}), 200, "list records")
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/directclusterendpointtokens", headers: bearer(teamKey),
		body: []byte(`{"metadata":{"name":"t2"},"spec":{"ttl":-1}}`)}), 422, "negative ttl")
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/directclusterendpointtokens/t1"}), 200, "delete (revoke)")

	for _, path := range []string{"/openid/v1/jwks", "/.well-known/openid-configuration", "/healthz", "/readyz", "/livez"} {
		r := ts.serve(req{method: "GET", path: path, headers: map[string]string{"Authorization": ""}})
		expectStatus(t, r, 200, path)
	}
	var jwks struct{ Keys []map[string]any }
	if err := json.Unmarshal(ts.serve(req{method: "GET", path: "/openid/v1/jwks"}).body, &jwks); err != nil || len(jwks.Keys) == 0 {
		assert.Fail(t, fmt.Sprintf("JWKS: %v %v", jwks, err))
	}
}

// TestMigration moves the seed's instance from a to b, with a dry run first.
func TestMigration(t *testing.T) {
	ts := startServer(t, nil)
	body := []byte("apiVersion: management.service/v1\nkind: ProjectMigrateVirtualClusterInstance\nmetadata:\n  name: move-dev\n" +
		"sourceVirtualClusterInstance:\n  name: dev\n  namespace: p-a\n")
	path := gv + "/projects/b/migratevirtualclusterinstance"
	r := ts.serve(req{method: "POST", path: path + "?dryRun=All", body: body, headers: map[string]string{"Content-Type": ""}})
	expectStatus(t, r, 201, "dry-run move")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/namespaces/p-a/virtualclusterinstances/dev"}), 200, "still in a")
	r = ts.serve(req{method: "POST", path: path, body: body, headers: merge(bearer(teamKey), map[string]string{"Content-Type": ""})})
	expectStatus(t, r, 201, "move")
	if st := r.json(t)["status"].(map[string]any); st["namespace"] != "p-b" || st["name"] != "dev" {
		assert.Fail(t, fmt.Sprintf("move status: %v", st))
	}
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/namespaces/p-b/virtualclusterinstances/dev"}), 200, "now in b")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/namespaces/p-a/virtualclusterinstances/dev"}), 404, "gone from a")
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/projects/nope/migratevirtualclusterinstance",
		body: []byte(`{"sourceVirtualClusterInstance":{"name":"dev","namespace":"p-b"}}`)}), 404, "unknown target project")
}

// TestOwnerAuthorizer checks that blockOwnerDeletion needs delete permission on the
// owner (422, the spec's rule).
func TestOwnerAuthorizer(t *testing.T) {
	ts := startServer(t, nil)
	owned := func(owner string) []byte {
		return []byte(`{"metadata":{"name":"owned-` + owner + `","ownerReferences":[{"apiVersion":"management.service/v1","kind":"Project",` +
			`"name":"` + owner + `","uid":"u-1","blockOwnerDeletion":true}]}}`)
	}
	path := gv + "/namespaces/p-a/virtualclusterinstances"
	expectStatus(t, ts.serve(req{method: "POST", path: path, body: owned("a"), headers: bearer(teamKey)}), 201, "owner in scope")
	expectStatus(t, ts.serve(req{method: "POST", path: path, body: owned("zzz"), headers: bearer(teamKey)}), 422, "owner outside the scope")
}

// TestDiscovery reads the documents kubectl reads.
func TestDiscovery(t *testing.T) {
	ts := startServer(t, nil)
	aggregated := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
	for _, p := range []string{"/api", "/apis", "/apis/management.service", gv, "/version", "/openapi/v3", "/openapi/v3/apis/management.service/v1", "/"} {
		r := ts.serve(req{method: "GET", path: p, headers: map[string]string{"Accept": aggregated}})
		expectStatus(t, r, 200, p)
		assert.Equal(t, "application/json", r.header.Get("Content-Type"), "%s: Content-Type", p)
	}
	var rl struct {
		Resources []struct {
			Name       string
			Kind       string
			Namespaced bool
			Verbs      []string
		}
	}
	_ = json.Unmarshal(ts.serve(req{method: "GET", path: gv}).body, &rl)
	got := map[string]string{}
	for _, r := range rl.Resources {
		got[r.Name] = r.Kind + " " + strings.Join(r.Verbs, ",")
	}
	want := map[string]string{
		"projects":                               "Project create,delete,deletecollection,get,list,patch,update,watch",
		"projects/migratevirtualclusterinstance": "ProjectMigrateVirtualClusterInstance create",
		"virtualclusterinstances/status":         "VirtualClusterInstance get,patch,update",
		"directclusterendpointtokens":            "DirectClusterEndpointToken create,delete,deletecollection,get,list",
		"accesskeys":                             "AccessKey create,delete,deletecollection,get,list,patch,update",
	}
	for k, v := range want {
		assert.Equal(t, v, got[k], "discovery of %s", k)
	}
	var idx struct {
		Paths map[string]struct{ ServerRelativeURL string }
	}
	_ = json.Unmarshal(ts.serve(req{method: "GET", path: "/openapi/v3"}).body, &idx)
	u := idx.Paths["apis/management.service/v1"].ServerRelativeURL
	assert.True(t, strings.HasPrefix(u, "/kubernetes/management/openapi/v3/apis/management.service/v1?hash="), "serverRelativeURL %q", u)
}

// TestWatch streams the changes of a namespace as JSON lines.
func TestWatch(t *testing.T) {
	ts := startServer(t, nil)
	list := ts.do(t, req{method: "GET", path: gv + "/namespaces/p-a/virtualclusterinstances"}).json(t)
	rv := meta(list)["resourceVersion"].(string)
	hr, _ := http.NewRequest("GET", ts.URL+gv+"/namespaces/p-a/virtualclusterinstances?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, nil)
	hr.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		require.FailNow(t, fmt.Sprintf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type")))
	}
	expectStatus(t, ts.do(t, req{method: "POST", path: gv + "/namespaces/p-a/virtualclusterinstances", body: []byte(`{"metadata":{"name":"w1"}}`)}), 201, "create")
	expectStatus(t, ts.do(t, req{method: "DELETE", path: gv + "/namespaces/p-a/virtualclusterinstances/w1"}), 200, "delete")
	sc := bufio.NewScanner(resp.Body)
	var types []string
	for len(types) < 2 && sc.Scan() {
		var ev struct {
			Type   string
			Object map[string]any
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "event %q", sc.Text())
		if ev.Type == "BOOKMARK" {
			continue
		}
		if ev.Object["kind"] != "VirtualClusterInstance" || meta(ev.Object)["name"] != "w1" {
			assert.Fail(t, fmt.Sprintf("event object: %v", ev.Object))
		}
		types = append(types, ev.Type)
	}
	assert.Equal(t, "ADDED,DELETED", strings.Join(types, ","), "events %v", types)
	expectStatus(t, ts.do(t, req{method: "GET", path: gv + "/namespaces/p-a/virtualclusterinstances?watch=1&labelSelector=a%20in%20("}), 400, "watch with a bad selector")
}
