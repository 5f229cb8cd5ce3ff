package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

// reviewAuthz allows alice everything; bob only get and list of widgets in default
// and GET /version; everyone else nothing, with a reason naming the request.
func reviewAuthz(u *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
	switch {
	case u != nil && u.Name == "alice":
		return httpapi.Decision{}, nil
	case u != nil && u.Name == "bob" && a.Resource == "widgets" && a.Namespace == "default" && (a.Verb == "get" || a.Verb == "list"):
		return httpapi.Decision{}, nil
	case u != nil && u.Name == "bob" && (a.Path == "/version" || strings.HasPrefix(a.Path, "/api") || strings.HasPrefix(a.Path, "/openapi")):
		return httpapi.Decision{}, nil
	}
	return httpapi.Decision{}, resource.NewForbidden(nil, "", "no rule allows "+a.Verb+" "+a.Resource+a.Path)
}

// TestSelfSubjectReviews checks the two reviews every authenticated caller may ask:
// who am I (the Authenticator's user) and may I (the Authorizer's answer, its refusal
// the reason), as kube-apiserver answers them.
func TestSelfSubjectReviews(t *testing.T) {
	f := newFixture(t, nil)
	f.authz = reviewAuthz
	const ssr = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	const ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

	t.Run("SelfSubjectReview", func(t *testing.T) {
		r := f.do(t, "POST", ssr, "bob", `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":null},"status":{"userInfo":{}}}`)
		require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
		got := decode[struct {
			Kind, APIVersion string
			Metadata         struct{ CreationTimestamp string }
			Status           struct {
				UserInfo struct {
					Username, UID string
					Groups        []string
				}
			}
		}](t, r)
		assert.Equal(t, "SelfSubjectReview", got.Kind)
		assert.Equal(t, "authentication.k8s.io/v1", got.APIVersion)
		assert.NotEmpty(t, got.Metadata.CreationTimestamp)
		assert.Equal(t, "bob", got.Status.UserInfo.Username)
		assert.Equal(t, "u-bob", got.Status.UserInfo.UID)
		assert.Equal(t, []string{"team-a"}, got.Status.UserInfo.Groups)
	})

	type ssarStatus struct {
		Status struct {
			Allowed         bool
			Reason          string
			EvaluationError string
		}
	}
	tests := []struct {
		name, user, body string
		code             int
		allowed          bool
		reason           string
	}{
		{"allowed resource request", "bob", `{"spec":{"resourceAttributes":{"namespace":"default","verb":"list","group":"example.com","resource":"widgets"}}}`, 201, true, ""},
		{"refused resource request carries the reason", "bob", `{"spec":{"resourceAttributes":{"namespace":"default","verb":"delete","group":"example.com","resource":"widgets","name":"w"}}}`, 201, false, "no rule allows delete widgets"},
		{"allowed non-resource request", "bob", `{"spec":{"nonResourceAttributes":{"path":"/version","verb":"get"}}}`, 201, true, ""},
		{"refused non-resource request", "eve", `{"spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`, 201, false, "no rule allows get /metrics"},
		{"everything for alice", "alice", `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"verb":"*","group":"*","resource":"*"}}}`, 201, true, ""},
		{"no attributes is 422", "bob", `{"spec":{}}`, 422, false, ""},
		{"both attributes is 422", "bob", `{"spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"verb":"get"}}}`, 422, false, ""},
		{"another kind is 400", "bob", `{"kind":"SubjectAccessReview","spec":{"resourceAttributes":{"verb":"get"}}}`, 400, false, ""},
		{"unauthenticated is 401", "", `{"spec":{"resourceAttributes":{"verb":"get"}}}`, 401, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, "POST", ssar, tt.user, tt.body)
			require.Equal(t, tt.code, r.code, "%s", r.body)
			if tt.code != 201 {
				return
			}
			got := decode[ssarStatus](t, r)
			assert.Equal(t, tt.allowed, got.Status.Allowed)
			assert.Contains(t, got.Status.Reason, tt.reason)
			assert.Empty(t, got.Status.EvaluationError)
		})
	}

	t.Run("GET is 405", func(t *testing.T) {
		assert.Equal(t, http.StatusMethodNotAllowed, f.do(t, "GET", ssr, "bob", "").code)
	})
}

// TestKubectlAuth runs "kubectl auth whoami" and "kubectl auth can-i" against the
// custom server.
func TestKubectlAuth(t *testing.T) {
	f := newFixture(t, nil)
	f.authz = reviewAuthz
	// kubectl sends a bearer token over TLS only.
	srv := httptest.NewTLSServer(f.h)
	t.Cleanup(srv.Close)
	bob := kubectlAgainst(t, srv.URL, "--token", "bob", "--insecure-skip-tls-verify")
	assert.Regexp(t, `Username\s+bob`, bob(false, "auth", "whoami"))
	assert.Regexp(t, `Groups\s+\[team-a\]`, bob(false, "auth", "whoami"))
	assert.Equal(t, "yes\n", bob(false, "auth", "can-i", "list", "widgets"))
	out := bob(true, "auth", "can-i", "delete", "widgets")
	assert.Regexp(t, `(?m)^no - .*no rule allows delete widgets$`, out)
	assert.Equal(t, "yes\n", bob(false, "auth", "can-i", "get", "/version"))
	alice := kubectlAgainst(t, srv.URL, "--token", "alice", "--insecure-skip-tls-verify")
	assert.Regexp(t, `(?m)^yes$`, alice(false, "auth", "can-i", "delete", "gadgets"))
}
