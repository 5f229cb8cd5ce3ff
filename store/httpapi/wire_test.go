package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// TestWireDetails checks the smaller answers that must be kube-apiserver's: a field
// selector on metadata.namespace of a cluster-scoped kind is 400; a body naming
// another kind of the group is 422 with a cause on kind; the integer label selectors
// > and < are read; a dry-run update keeps the resourceVersion; a page of a list
// without a selector counts the items after it.
func TestWireDetails(t *testing.T) {
	f := newFixture(t, nil)
	f.seedGadget(t, "g1")
	for i := range 4 {
		f.seedWidget(t, "default", fmt.Sprintf("w%d", i), i+1, map[string]string{"size": fmt.Sprint(i + 1)})
	}
	w0 := f.widget(t, "default", "w0")
	// A page's count comes from the label index, which a new store builds in the
	// background.
	require.NoError(t, f.st.Settle(t.Context()))

	tests := []struct {
		name, method, path, body string
		code                     int
		check                    func(t *testing.T, r response)
	}{
		{"metadata.namespace of a cluster-scoped kind is 400", "GET", toolsGV + "/gadgets?fieldSelector=metadata.namespace%3D", "", 400,
			func(t *testing.T, r response) {
				assert.Equal(t, "field label not supported: metadata.namespace", status(t, r).Message)
			}},
		{"metadata.namespace of a namespaced kind is served", "GET", widgetsGV + "/widgets?fieldSelector=metadata.namespace%3Ddefault", "", 200, nil},
		{"metadata.name of a cluster-scoped kind is served", "GET", toolsGV + "/gadgets?fieldSelector=metadata.name%3Dg1", "", 200, nil},
		{"a watch is refused the same", "GET", toolsGV + "/gadgets?watch=1&fieldSelector=metadata.namespace%21%3Dx", "", 400, nil},
		{"another kind of the group is 422 on kind", "POST", widgetsNS, `{"apiVersion":"example.com/v1","kind":"WidgetResize","metadata":{"name":"k"}}`, 422,
			func(t *testing.T, r response) {
				st := status(t, r)
				assert.Equal(t, `WidgetResize.example.com "k" is invalid: kind: Invalid value: "WidgetResize": must be Widget`, st.Message)
				require.NotNil(t, st.Details)
				assert.Equal(t, resource.StatusDetails{Group: "example.com", Kind: "WidgetResize", Name: "k",
					Causes: st.Details.Causes}, *st.Details, "the details name the body's kind")
				require.Len(t, st.Details.Causes, 1)
				assert.Equal(t, "kind", st.Details.Causes[0].Field)
			}},
		{"a bogus propagationPolicy is DeleteOptions' 422", "DELETE", widgetsNS + "/w3?propagationPolicy=Sideways", "", 422,
			func(t *testing.T, r response) {
				requireOptionsInvalid(t, r, "propagationPolicy")
			}},
		{"so is one in a DeleteOptions body", "DELETE", widgetsNS + "/w3", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Up"}`, 422,
			func(t *testing.T, r response) {
				requireOptionsInvalid(t, r, "propagationPolicy")
			}},
		{"and of a deletecollection", "DELETE", widgetsNS + "?propagationPolicy=Sideways", "", 422,
			func(t *testing.T, r response) {
				requireOptionsInvalid(t, r, "propagationPolicy")
			}},
		{"another apiVersion stays 400", "POST", widgetsNS, `{"apiVersion":"tools.example.org/v1","kind":"Gadget","metadata":{"name":"k"}}`, 400, nil},
		{"label selector >", "GET", widgetsNS + "?labelSelector=size%3E2", "", 200, func(t *testing.T, r response) {
			assert.Equal(t, []string{"w2", "w3"}, names(t, r))
		}},
		{"label selector <", "GET", widgetsNS + "?labelSelector=size%3C2", "", 200, func(t *testing.T, r response) {
			assert.Equal(t, []string{"w0"}, names(t, r))
		}},
		{"label selector > of a non-integer is 400", "GET", widgetsNS + "?labelSelector=size%3Ea", "", 400, nil},
		{"a dry-run update keeps the resourceVersion", "PUT", widgetsNS + "/w0?dryRun=All",
			`{"metadata":{"name":"w0","resourceVersion":"` + w0.ResourceVersion + `"},"spec":{"size":9}}`, 200,
			func(t *testing.T, r response) {
				got := decode[Widget](t, r)
				assert.Equal(t, w0.ResourceVersion, got.ResourceVersion)
				assert.Equal(t, 9, got.Spec.Size)
			}},
		{"a page counts the items after it", "GET", widgetsNS + "?limit=1", "", 200, func(t *testing.T, r response) {
			l := decode[resource.List[Widget, *Widget]](t, r)
			require.NotNil(t, l.RemainingItemCount)
			assert.Equal(t, int64(3), *l.RemainingItemCount)
		}},
		{"a page with a selector does not", "GET", widgetsNS + "?limit=1&labelSelector=size", "", 200, func(t *testing.T, r response) {
			l := decode[resource.List[Widget, *Widget]](t, r)
			assert.NotEmpty(t, l.Continue)
			assert.Nil(t, l.RemainingItemCount)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, tt.method, tt.path, "alice", tt.body)
			require.Equal(t, tt.code, r.code, "%s", r.body)
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	assert.Equal(t, 1, f.widget(t, "default", "w0").Spec.Size, "the dry run stored nothing")
}

// requireOptionsInvalid checks a 422 of DeleteOptions as kube-apiserver answers it:
// the details name meta.k8s.io's DeleteOptions and no object, the cause is on field.
func requireOptionsInvalid(t *testing.T, r response, field string) {
	t.Helper()
	st := status(t, r)
	assert.Equal(t, resource.ReasonInvalid, st.Reason)
	require.NotNil(t, st.Details)
	assert.Equal(t, "meta.k8s.io", st.Details.Group)
	assert.Equal(t, "DeleteOptions", st.Details.Kind)
	assert.Empty(t, st.Details.Name)
	require.Len(t, st.Details.Causes, 1)
	assert.Equal(t, field, st.Details.Causes[0].Field)
	assert.Equal(t, resource.CauseFieldValueNotSupported, st.Details.Causes[0].Type)
}

func names(t *testing.T, r response) []string {
	t.Helper()
	l := decode[resource.List[Widget, *Widget]](t, r)
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}
