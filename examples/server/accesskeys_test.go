package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/token"
)

// The attacks of issue 18, each as an HTTP test of the example server (their library
// tests are in package token).

const keyManagerKey = "key-manager-0123456789abcdef"

// keyManager makes, as the admin, a key whose scope allows only create, update and
// patch of accesskeys: the attacker of the issue.
func keyManager(t *testing.T, ts *testServer) {
	t.Helper()
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(`{"metadata":{"name":"key-manager"},
		"spec":{"subject":"mallory","key":"` + keyManagerKey + `","scope":{"rules":[{"verbs":["create","update","patch"],"resources":[{"group":"management.service","resources":["accesskeys"]}]}]}}}`)}),
		http.StatusCreated, "the admin makes the key manager")
}

func TestHTTPAccessKeys_noKeyTakesOverAnother(t *testing.T) {
	ts := startServer(t, nil)
	keyManager(t, ts)
	as := bearer(keyManagerKey)
	mergeCT := map[string]string{"Content-Type": "application/merge-patch+json"}

	cases := []struct{ name, body string }{
		{"rotate the admin's secret", `{"spec":{"key":"stolen-admin-key-0123456789"}}`},
		{"shorten the admin's ttl", `{"spec":{"ttl":1}}`},
		{"rotate the team key's secret", `{"spec":{"key":"stolen-team-key-0123456789"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "admin"
			if strings.Contains(c.name, "team") {
				name = "team"
			}
			// Another subject's key is not the caller's to see: the same answer as for a
			// key that does not exist.
			r := ts.serve(req{method: "PATCH", path: gv + "/accesskeys/" + name, body: []byte(c.body), headers: merge(as, mergeCT)})
			expectStatus(t, r, http.StatusNotFound, c.name)
			missing := ts.serve(req{method: "PATCH", path: gv + "/accesskeys/no-such-key", body: []byte(c.body), headers: merge(as, mergeCT)})
			assert.Equal(t, strings.ReplaceAll(string(missing.body), "no-such-key", name), string(r.body))
		})
	}
	// A verb its scope lacks is 403 before anything is read, for any name.
	del := ts.serve(req{method: "DELETE", path: gv + "/accesskeys/admin", headers: as})
	expectStatus(t, del, http.StatusForbidden, "delete the admin key")
	delMissing := ts.serve(req{method: "DELETE", path: gv + "/accesskeys/no-such-key", headers: as})
	assert.Equal(t, strings.ReplaceAll(string(delMissing.body), "no-such-key", "admin"), string(del.body))
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects"}), http.StatusOK, "the admin key still works")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects/a", headers: bearer("stolen-admin-key-0123456789")}),
		http.StatusUnauthorized, "the stolen secret is nobody's")

	t.Run("subject spoofing", func(t *testing.T) {
		r := ts.serve(req{method: "POST", path: gv + "/accesskeys", headers: as, body: []byte(
			`{"metadata":{"name":"fake-admin"},"spec":{"subject":"admin","key":"fake-admin-key-0123456789"}}`)})
		expectStatus(t, r, http.StatusForbidden, "a key for another subject")
		msg := r.json(t)["message"].(string)
		first, rest, _ := strings.Cut(msg, ". ")
		assert.True(t, strings.HasPrefix(first, "Your access key"), "opens with a sentence a user can act on: %s", msg)
		assert.Contains(t, rest, "subject", "then the precise explanation")
		expectStatus(t, ts.serve(req{method: "POST", path: gv + "/accesskeys", headers: as, body: []byte(
			`{"metadata":{"name":"gen"},"spec":{"subject":"mallory","tokenGeneration":1000000,"key":"gen-key-0123456789abc"}}`)}),
			http.StatusForbidden, "a raised tokenGeneration")
	})
}

func TestHTTPAccessKeys_secretsAndTTL(t *testing.T) {
	ts := startServer(t, nil)
	r := ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(
		`{"metadata":{"name":"copy"},"spec":{"key":"team-key-0123456789abcdef"}}`)})
	expectStatus(t, r, http.StatusConflict, "a second key with the team key's secret")
	assert.NotContains(t, string(r.body), `"team"`, "the 409 names no other key")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/projects/a", headers: bearer(teamKey)}), http.StatusOK,
		"the original still authenticates")

	r = ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(
		`{"metadata":{"name":"forever"},"spec":{"key":"forever-key-0123456789ab","ttl":9223372037}}`)})
	expectStatus(t, r, http.StatusUnprocessableEntity, "a ttl that would overflow")
	assert.Contains(t, string(r.body), "spec.ttl")

	r = ts.serve(req{method: "GET", path: gv + "/accesskeys"})
	expectStatus(t, r, http.StatusOK, "list keys")
	assert.NotContains(t, string(r.body), "keyHash")
	assert.NotContains(t, string(r.body), teamKey)
	assert.NotContains(t, string(r.body), "sha256")
}

// mint creates a token with the given key and returns the response.
func mint(t *testing.T, ts *testServer, key, scope string) response {
	t.Helper()
	body := `{"apiVersion":"management.service/v1","kind":"DirectClusterEndpointToken","metadata":{"generateName":"t-"},"spec":{"ttl":600` + scope + `}}`
	return ts.serve(req{method: "POST", path: gv + "/directclusterendpointtokens", body: []byte(body), headers: bearer(key)})
}

func TestHTTPAccessKeys_deletingAKeyRevokesItsTokens(t *testing.T) {
	ts := startServer(t, nil)
	r := mint(t, ts, teamKey, "")
	expectStatus(t, r, http.StatusCreated, "the team key (spec.subject team) mints a token")
	tok := r.json(t)["status"].(map[string]any)["token"].(string)
	v, err := token.NewVerifier(ts.Issuer.Keys(), token.VerifierOptions{Issuer: ts.URL,
		Revocation: token.NewStoreRevocation(ts.Store, nil)})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), tok)
	require.NoError(t, err, "valid online while the key lives")
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/accesskeys/team"}), http.StatusOK, "delete the key")
	_, err = v.Verify(context.Background(), tok)
	assert.Error(t, err, "revoked online once its key is gone")
}

func TestHTTPAccessKeys_selfService(t *testing.T) {
	ts := startServer(t, nil)
	// A key scoped to project a only, without allowServiceCli.
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/accesskeys", body: []byte(
		`{"metadata":{"name":"only-a"},"spec":{"subject":"ann","key":"only-a-key-0123456789abc","scope":{"projects":[{"project":"a"}]}}}`)}),
		http.StatusCreated, "make the key")
	as := bearer("only-a-key-0123456789abc")
	for _, p := range []string{"/api", "/apis", gv, "/version", "/openapi/v3"} {
		expectStatus(t, ts.serve(req{method: "GET", path: p, headers: as}), http.StatusOK, "discovery "+p)
	}
	r := mint(t, ts, "only-a-key-0123456789abc", "")
	expectStatus(t, r, http.StatusCreated, "mint within its own scope")
	own := meta(r.json(t))["name"].(string)
	expectStatus(t, mint(t, ts, "only-a-key-0123456789abc", `,"scope":{"projects":[{"project":"b"}]}`), http.StatusForbidden,
		"mint wider than its scope")
	r = mint(t, ts, teamKey, "")
	expectStatus(t, r, http.StatusCreated, "another key mints")
	other := meta(r.json(t))["name"].(string)

	r = ts.serve(req{method: "GET", path: gv + "/directclusterendpointtokens", headers: as})
	expectStatus(t, r, http.StatusOK, "list its records")
	var list struct{ Items []map[string]any }
	require.NoError(t, json.Unmarshal(r.body, &list))
	require.Len(t, list.Items, 1, "a list shows only its own")
	assert.Equal(t, own, meta(list.Items[0])["name"])

	missing := ts.serve(req{method: "GET", path: gv + "/directclusterendpointtokens/no-such-token", headers: as})
	expectStatus(t, missing, http.StatusNotFound, "get a missing record")
	hidden := ts.serve(req{method: "GET", path: gv + "/directclusterendpointtokens/" + other, headers: as})
	expectStatus(t, hidden, http.StatusNotFound, "get another key's record: as missing")
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/directclusterendpointtokens/" + other, headers: as}),
		http.StatusNotFound, "delete another key's record: as missing")
	expectStatus(t, ts.serve(req{method: "DELETE", path: gv + "/directclusterendpointtokens/" + own, headers: as}),
		http.StatusOK, "delete (revoke) its own")
	expectStatus(t, ts.serve(req{method: "GET", path: gv + "/accesskeys", headers: as}), http.StatusForbidden,
		"nothing else follows from self-service")
}

// TestHTTPMigrate_authorizationBeforeExistence checks the move endpoint: a caller
// that may not see the source gets the same answer whether it exists or not, and no
// message names what it may not read.
func TestHTTPMigrate_authorizationBeforeExistence(t *testing.T) {
	ts := startServer(t, nil)
	for _, p := range []string{"c", "d"} {
		expectStatus(t, ts.serve(req{method: "POST", path: gv + "/projects", body: project(p)}), http.StatusCreated, "project "+p)
	}
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/namespaces/p-c/virtualclusterinstances", body: []byte(
		`{"metadata":{"name":"hidden"},"spec":{"clusterRef":{"cluster":"cluster-1"}}}`)}), http.StatusCreated, "instance in c")
	move := func(key, target, name, srcNS, srcName string) response {
		body := `{"apiVersion":"management.service/v1","kind":"ProjectMigrateVirtualClusterInstance","metadata":{"name":"` + name +
			`"},"sourceVirtualClusterInstance":{"name":"` + srcName + `","namespace":"` + srcNS + `"}}`
		return ts.serve(req{method: "POST", path: gv + "/projects/" + target + "/migratevirtualclusterinstance", body: []byte(body), headers: bearer(key)})
	}
	existing := move(teamKey, "a", "m1", "p-c", "hidden")
	missing := move(teamKey, "a", "m1", "p-c", "no-such")
	expectStatus(t, existing, http.StatusForbidden, "an instance of project c exists")
	expectStatus(t, missing, http.StatusForbidden, "an instance of project c is missing")
	norm := func(b []byte) string { return strings.ReplaceAll(string(b), "no-such", "hidden") }
	assert.Equal(t, norm(existing.body), norm(missing.body), "the same answer")
	assert.NotContains(t, string(existing.body), "p-c/hidden")

	// The admin moves c's instance into d under a name; the team key reusing that
	// name for its own move learns nothing of it, and is not blocked by it.
	expectStatus(t, move(adminKey, "d", "shared-name", "p-c", "hidden"), http.StatusCreated, "the admin's move")
	r := move(teamKey, "b", "shared-name", "p-a", "dev")
	expectStatus(t, r, http.StatusCreated, "the team's move under the same name, into another project")
	assert.NotContains(t, string(r.body), "hidden")
}

// TestHTTPAccessKeys_seededTeamKey checks what the README says the seed's team key
// may do.
func TestHTTPAccessKeys_seededTeamKey(t *testing.T) {
	ts := startServer(t, nil)
	expectStatus(t, ts.serve(req{method: "POST", path: gv + "/projects", body: project("c")}), http.StatusCreated, "project c")
	as := bearer(teamKey)
	for _, c := range []struct {
		method, path, body string
		code               int
	}{
		{"GET", gv + "/projects/a", "", http.StatusOK},
		{"GET", gv + "/projects/b", "", http.StatusOK},
		{"GET", gv + "/namespaces/p-a/virtualclusterinstances/dev", "", http.StatusOK},
		{"POST", gv + "/namespaces/p-b/virtualclusterinstances", `{"metadata":{"name":"new"},"spec":{"clusterRef":{"cluster":"cluster-1"}}}`, http.StatusCreated},
		{"PATCH", gv + "/projects/a", `{"spec":{"displayName":"A"}}`, http.StatusOK},
		{"GET", gv + "/projects/c", "", http.StatusForbidden},
		{"GET", gv + "/namespaces/p-c/virtualclusterinstances", "", http.StatusForbidden},
		{"GET", gv + "/accesskeys", "", http.StatusForbidden},
		{"GET", "/metrics", "", http.StatusForbidden},
		{"GET", "/openapi/v3", "", http.StatusOK},
	} {
		h := as
		if c.method == "PATCH" {
			h = merge(as, map[string]string{"Content-Type": "application/merge-patch+json"})
		}
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		expectStatus(t, ts.serve(req{method: c.method, path: c.path, body: body, headers: h}), c.code, c.method+" "+c.path)
	}
}
