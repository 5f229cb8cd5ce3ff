package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// TestOnRequest_reports_each_request checks that Config.OnRequest hears of every
// request once, with its verb, resource, caller, code and size, and never the
// credential it carried.
func TestOnRequest_reports_each_request(t *testing.T) {
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	var mu sync.Mutex
	var got []httpapi.RequestInfo
	h, err := httpapi.New(httpapi.Config{Store: st,
		Resources: []httpapi.Resource{{Group: resource.Group, Version: resource.Version, Resource: "projects"}},
		Authenticator: httpapi.BearerAuthenticator(func(_ context.Context, tok string) (*store.UserInfo, error) {
			if tok != "secret-token" {
				return nil, resource.NewUnauthorized("no")
			}
			return &store.UserInfo{Name: "alice"}, nil
		}),
		OnRequest: func(i httpapi.RequestInfo) { mu.Lock(); got = append(got, i); mu.Unlock() },
	})
	require.NoError(t, err)

	send := func(method, path, body, tok string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	require.Equal(t, http.StatusCreated, send("POST", "/apis/management.service/v1/projects", `{"metadata":{"name":"a"}}`, "secret-token"))
	require.Equal(t, http.StatusUnauthorized, send("GET", "/apis/management.service/v1/projects/a", "", "wrong"))
	require.Equal(t, http.StatusOK, send("GET", "/version", "", "secret-token"))
	require.Equal(t, http.StatusNotFound, send("GET", "/nowhere", "", "secret-token"))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4)
	assert.Equal(t, httpapi.RequestInfo{Method: "POST", Path: "/apis/management.service/v1/projects", Verb: "create",
		Resource: "projects.management.service", User: "alice", Code: 201, Bytes: got[0].Bytes, Duration: got[0].Duration}, got[0])
	assert.Positive(t, got[0].Bytes)
	assert.Equal(t, "get", got[1].Verb)
	assert.Equal(t, "", got[1].User, "an unauthenticated request names no user")
	assert.Equal(t, 401, got[1].Code)
	assert.Equal(t, "", got[2].Resource)
	assert.Equal(t, 404, got[3].Code)
	for _, i := range got {
		assert.NotContains(t, i.Path+i.User+i.Verb+i.Resource, "secret-token")
	}
}
