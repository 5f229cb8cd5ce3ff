package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// TestStatusPatch checks PATCH of the status subresource (merge and JSON patch), as
// kube-apiserver serves it for a custom resource with a status subresource: only the
// status changes, and discovery and OpenAPI list the verb.
func TestStatusPatch(t *testing.T) {
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	h, err := httpapi.New(httpapi.Config{Store: st,
		Resources: []httpapi.Resource{{Group: resource.Group, Version: resource.Version, Resource: "virtualclusterinstances"}}})
	require.NoError(t, err)
	send := func(method, path, ct, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	base := "/apis/management.service/v1/namespaces/p-a/virtualclusterinstances"
	require.Equal(t, http.StatusCreated, send("POST", base, "application/json",
		`{"metadata":{"name":"dev"},"spec":{"displayName":"Dev"}}`).Code)

	tests := []struct{ name, ct, body, phase string }{
		{"merge patch", store.PatchTypeMerge, `{"status":{"phase":"Ready"},"spec":{"displayName":"ignored"}}`, "Ready"},
		{"JSON patch", store.PatchTypeJSON, `[{"op":"add","path":"/status/phase","value":"Sleeping"}]`, "Sleeping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := send("PATCH", base+"/dev/status", tt.ct, tt.body)
			require.Equal(t, http.StatusOK, w.Code, "%s", w.Body)
			var got resource.VirtualClusterInstance
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
			assert.Equal(t, tt.phase, got.Status.Phase)
			assert.Equal(t, "Dev", got.Spec.DisplayName, "only the status changes")
		})
	}
	w := send("PATCH", base+"/dev/status", "text/plain", `{}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, w.Code)

	w = send("GET", "/apis/management.service/v1", "", "")
	assert.Contains(t, w.Body.String(), `{"name":"virtualclusterinstances/status","singularName":"","namespaced":true,"kind":"VirtualClusterInstance","verbs":["get","patch","update"]}`)
	w = send("GET", "/openapi/v3/apis/management.service/v1", "", "")
	var doc struct{ Paths map[string]map[string]any }
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	assert.Contains(t, doc.Paths["/apis/management.service/v1/namespaces/{namespace}/virtualclusterinstances/{name}/status"], "patch")
}
