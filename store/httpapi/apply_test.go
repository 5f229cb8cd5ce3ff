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

// TestApply checks PATCH with application/apply-patch+yaml (server-side apply) as
// kube-apiserver answers it: 201 on create, 200 after, the same resourceVersion when
// nothing changes, 409 with FieldManagerConflict causes, force, 422 without a field
// manager, and fieldValidation for unknown fields.
func TestApply(t *testing.T) {
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	h, err := httpapi.New(httpapi.Config{Store: st,
		Resources: []httpapi.Resource{{Group: resource.Group, Version: resource.Version, Resource: "projects"}}})
	require.NoError(t, err)
	const path = "/apis/management.service/v1/projects/a"
	send := func(query, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("PATCH", path+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	decode := func(t *testing.T, w *httptest.ResponseRecorder) resource.Project {
		var p resource.Project
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p), "%s", w.Body)
		return p
	}
	yamlA := "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: a\nspec:\n  displayName: A\n"

	w := send("?fieldManager=alice", yamlA)
	require.Equal(t, http.StatusCreated, w.Code, "%s", w.Body)
	first := decode(t, w)
	require.Len(t, first.ManagedFields, 1)
	assert.Equal(t, resource.ManagedFieldsOperationApply, first.ManagedFields[0].Operation)

	w = send("?fieldManager=alice", yamlA)
	require.Equal(t, http.StatusOK, w.Code, "%s", w.Body)
	assert.Equal(t, first.ResourceVersion, decode(t, w).ResourceVersion, "re-applying changes nothing")

	tests := []struct {
		name, query, body string
		code              int
		reason            resource.StatusReason
	}{
		{"no field manager", "", yamlA, http.StatusUnprocessableEntity, resource.ReasonInvalid},
		{"not YAML", "?fieldManager=bob", "a: [", http.StatusBadRequest, resource.ReasonBadRequest},
		{"another version", "?fieldManager=bob", `{"apiVersion":"management.service/v2","kind":"Project","metadata":{"name":"a"}}`, http.StatusBadRequest, resource.ReasonBadRequest},
		{"managedFields in the body", "?fieldManager=bob", `{"metadata":{"name":"a","managedFields":[{"manager":"x"}]}}`, http.StatusBadRequest, resource.ReasonBadRequest},
		{"unknown field under Strict", "?fieldManager=bob&fieldValidation=Strict", `{"metadata":{"name":"a"},"spec":{"colour":"red"}}`, http.StatusBadRequest, resource.ReasonBadRequest},
		{"bad force", "?fieldManager=bob&force=maybe", yamlA, http.StatusBadRequest, resource.ReasonBadRequest},
		{"conflict", "?fieldManager=bob", `{"metadata":{"name":"a"},"spec":{"displayName":"B"}}`, http.StatusConflict, resource.ReasonConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := send(tt.query, tt.body)
			require.Equal(t, tt.code, w.Code, "%s", w.Body)
			var s resource.Status
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s))
			assert.Equal(t, tt.reason, s.Reason)
			if tt.reason == resource.ReasonConflict {
				require.NotNil(t, s.Details)
				require.Len(t, s.Details.Causes, 1)
				assert.Equal(t, resource.StatusCause{Type: resource.CauseFieldManagerConflict,
					Message: `conflict with "alice"`, Field: ".spec.displayName"}, s.Details.Causes[0])
			}
		})
	}

	w = send("?fieldManager=bob&force=true", `{"metadata":{"name":"a"},"spec":{"displayName":"B","colour":"red"}}`)
	require.Equal(t, http.StatusOK, w.Code, "%s", w.Body)
	assert.Equal(t, []string{`299 - "unknown field \"spec.colour\""`}, w.Header().Values("Warning"))
	p := decode(t, w)
	assert.Equal(t, "B", p.Spec.DisplayName)

	req := httptest.NewRequest("PATCH", path+"?force=true", strings.NewReader(`{"spec":{"description":"m"}}`))
	req.Header.Set("Content-Type", store.PatchTypeMerge)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, "force is for apply only: %s", rec.Body)

	w = send("?fieldManager=carol&fieldValidation=Ignore&dryRun=All", `{"metadata":{"name":"a"},"spec":{"description":"d","colour":"red"}}`)
	require.Equal(t, http.StatusOK, w.Code, "%s", w.Body)
	assert.Empty(t, w.Header().Values("Warning"))
	assert.Equal(t, "d", decode(t, w).Spec.Description)
	got := resource.Project{}
	require.NoError(t, st.Get(t.Context(), "", "a", &got, store.GetOptions{}))
	assert.Empty(t, got.Spec.Description, "a dry run stores nothing")
	assert.Equal(t, p.ResourceVersion, got.ResourceVersion)
}
