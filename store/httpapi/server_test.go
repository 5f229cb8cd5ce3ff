package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// The custom server of these tests serves two groups of user-defined kinds, none of
// the management API:
//
//	example.com/v1        widgets (namespaced; Widget of example_test.go), with an
//	                      extra subresource widgets/<name>/resize (WidgetResize)
//	tools.example.org/v1  gadgets (cluster-scoped, with a status subresource) and
//	                      tickets (cluster-scoped, create/get/list only, created by a
//	                      service through Resource.Create)

// WidgetResize is the body of a create on the resize subresource of a widget.
type WidgetResize struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Size                int `json:"size"`
}

// Gadget is a cluster-scoped kind with a status subresource.
type Gadget struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Color string `json:"color,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status"`
}

// Ticket is a kind created by a service (Resource.Create), never stored.
type Ticket struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		For string `json:"for,omitempty"`
	} `json:"spec"`
	Status struct {
		Token string `json:"token,omitempty"`
	} `json:"status"`
}

const (
	widgetsGV = "/apis/example.com/v1"
	toolsGV   = "/apis/tools.example.org/v1"
	widgetsNS = widgetsGV + "/namespaces/default/widgets"
)

// testScheme registers the four kinds of the custom server and their JSON Schemas.
func testScheme(t testing.TB) (*resource.Scheme, *schema.Registry) {
	t.Helper()
	sch, reg := resource.NewScheme(), schema.NewRegistry()
	kinds := []struct {
		k      resource.KindInfo
		schema string
	}{
		{resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true,
			New:     func() resource.Object { return &Widget{} },
			NewList: func() resource.ObjectList { return &resource.List[Widget, *Widget]{} }}, widgetSchema},
		{resource.KindInfo{Group: "example.com", Version: "v1", Kind: "WidgetResize", Resource: "resize",
			ParentResource: "widgets", Namespaced: true,
			New:     func() resource.Object { return &WidgetResize{} },
			NewList: func() resource.ObjectList { return &resource.List[WidgetResize, *WidgetResize]{} }},
			`{"type": "object", "properties": {"size": {"type": "integer"}}}`},
		{resource.KindInfo{Group: "tools.example.org", Version: "v1", Kind: "Gadget", Resource: "gadgets", HasStatus: true,
			New:     func() resource.Object { return &Gadget{} },
			NewList: func() resource.ObjectList { return &resource.List[Gadget, *Gadget]{} }},
			`{"type": "object", "properties": {"spec": {"type": "object", "properties": {"color": {"type": "string"}}},
			  "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}`},
		{resource.KindInfo{Group: "tools.example.org", Version: "v1", Kind: "Ticket", Resource: "tickets",
			New:     func() resource.Object { return &Ticket{} },
			NewList: func() resource.ObjectList { return &resource.List[Ticket, *Ticket]{} }},
			`{"type": "object", "properties": {"spec": {"type": "object", "properties": {"for": {"type": "string"}}},
			  "status": {"type": "object", "properties": {"token": {"type": "string"}}}}}`},
	}
	for _, k := range kinds {
		require.NoError(t, sch.Register(k.k))
		require.NoError(t, reg.Register(k.k.GVK(), []byte(k.schema)))
	}
	return sch, reg
}

// fixture is a running custom server. Callers authenticate with "Authorization:
// Bearer <user name>" for the users alice, bob and eve; authz decides, allowing
// everything when nil.
type fixture struct {
	st  *store.Store
	h   *httpapi.Server
	url string

	authz func(user *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error)

	mu      sync.Mutex
	creates []*httpapi.CreateRequest // every CreateRequest of the tickets and resize creates
}

var users = map[string]*store.UserInfo{
	"alice": {Name: "alice", UID: "u-alice", Groups: []string{"admins"}},
	"bob":   {Name: "bob", UID: "u-bob", Groups: []string{"team-a"}},
	"eve":   {Name: "eve", UID: "u-eve"},
}

func newFixture(t testing.TB, mod func(*httpapi.Config)) *fixture {
	t.Helper()
	sch, reg := testScheme(t)
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: sch,
		Validating: []store.ValidatingAdmitter{schema.NewAdmitter(reg)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{st: st}
	cfg := httpapi.Config{
		Store:   st,
		Schemas: reg,
		Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "widgets", ShortNames: []string{"wd"}, Categories: []string{"toys"},
				Subresources: []httpapi.Subresource{{Name: "resize", Description: "resizes a widget", Create: f.resize}}},
			{Group: "tools.example.org", Version: "v1", Resource: "gadgets", ShortNames: []string{"gd"}},
			{Group: "tools.example.org", Version: "v1", Resource: "tickets", Verbs: []string{"create", "get", "list"},
				Create: f.issueTicket},
		},
		Authenticator: httpapi.BearerAuthenticator(func(_ context.Context, tok string) (*store.UserInfo, error) {
			if u, ok := users[tok]; ok {
				return u, nil
			}
			return nil, resource.NewUnauthorized("unknown token")
		}),
		Authorizer: httpapi.AuthorizerFunc(func(_ context.Context, u *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
			if f.authz == nil {
				return httpapi.Decision{}, nil
			}
			return f.authz(u, a)
		}),
	}
	if mod != nil {
		mod(&cfg)
	}
	f.h, err = httpapi.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = f.h.Close() })
	f.url = srv.URL
	return f
}

func (f *fixture) record(req *httpapi.CreateRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, req)
}

func (f *fixture) lastCreate(t testing.TB) *httpapi.CreateRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.creates, "no create reached the CreateFunc")
	return f.creates[len(f.creates)-1]
}

// issueTicket answers creates of tickets: spec.for "forbidden" is 403, "boom" a plain
// error, anything else a ticket with a token.
func (f *fixture) issueTicket(_ context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
	f.record(req)
	in := req.Object.(*Ticket)
	switch in.Spec.For {
	case "forbidden":
		return nil, resource.NewForbidden(req.Kind, in.Name, "no ticket for you")
	case "boom":
		return nil, errors.New("the ticket machine is on fire")
	}
	out := &Ticket{ObjectMeta: resource.ObjectMeta{Name: in.Name}}
	out.Spec = in.Spec
	out.Status.Token = "token-for-" + in.Spec.For
	return out, nil
}

// resize answers creates on widgets/<name>/resize: a negative size is 422.
func (f *fixture) resize(_ context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
	f.record(req)
	in := req.Object.(*WidgetResize)
	if in.Size < 0 {
		return nil, resource.NewInvalid(req.Kind, req.Name, resource.ErrorList{
			resource.Invalid(resource.NewPath("size"), in.Size, "must not be negative")})
	}
	return &WidgetResize{ObjectMeta: resource.ObjectMeta{Name: req.Name, Namespace: req.Namespace}, Size: in.Size}, nil
}

// client bounds every request, so that a request served when it should not be (a
// watch) fails the test instead of hanging it.
var client = &http.Client{Timeout: 20 * time.Second}

type response struct {
	code   int
	body   []byte
	header http.Header
}

// do sends a request as token ("" sends no Authorization header); hdr are more
// header key, value pairs. A body is sent as JSON unless hdr names a Content-Type.
func (f *fixture) do(t testing.TB, method, path, token, body string, hdr ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{code: resp.StatusCode, body: b, header: resp.Header}
}

// status decodes a Status body, checking that it is one.
func status(t testing.TB, r response) resource.Status {
	t.Helper()
	var st resource.Status
	require.NoError(t, json.Unmarshal(r.body, &st), "body %s", r.body)
	require.Equal(t, "Status", st.Kind, "body %s", r.body)
	require.Equal(t, "v1", st.APIVersion)
	require.Equal(t, int32(r.code), st.Code, "the Status code is the HTTP code")
	return st
}

func decode[T any](t testing.TB, r response) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.body, &v), "body %s", r.body)
	return v
}

func (f *fixture) seedWidget(t testing.TB, ns, name string, size int, labels map[string]string) {
	t.Helper()
	w := &Widget{ObjectMeta: resource.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
	w.Spec.Size = size
	require.NoError(t, f.st.Create(context.Background(), w, store.CreateOptions{}))
}

func (f *fixture) seedGadget(t testing.TB, name string) {
	t.Helper()
	g := &Gadget{ObjectMeta: resource.ObjectMeta{Name: name}}
	g.Spec.Color = "red"
	require.NoError(t, f.st.Create(context.Background(), g, store.CreateOptions{}))
}

// widget reads a widget from the store; nil when there is none.
func (f *fixture) widget(t testing.TB, ns, name string) *Widget {
	t.Helper()
	w := &Widget{}
	err := f.st.Get(context.Background(), ns, name, w, store.GetOptions{})
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	require.NoError(t, err)
	return w
}

func widgetBody(ns, name string, size int) string {
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"namespace":%q},"spec":{"size":%d}}`,
		name, ns, size)
}

// TestRouting checks which paths and methods reach a verb: a verb a resource does not
// list is 405, a path that names nothing served is 404, a namespaced kind's object is
// reached only through its namespace, and status only for a kind with HasStatus.
func TestRouting(t *testing.T) {
	f := newFixture(t, nil)
	f.seedWidget(t, "default", "w1", 3, nil)
	f.seedGadget(t, "g1")
	const ok, notFound, notAllowed = http.StatusOK, http.StatusNotFound, http.StatusMethodNotAllowed
	for _, c := range []struct {
		name         string
		method, path string
		body         string
		want         int
	}{
		// Verbs.
		{"an unlisted verb (delete of a ticket) is 405", "DELETE", toolsGV + "/tickets/t1", "", notAllowed},
		{"an unlisted verb (update of a ticket) is 405", "PUT", toolsGV + "/tickets/t1", `{"metadata":{"name":"t1"}}`, notAllowed},
		{"an unlisted verb (patch of a ticket) is 405", "PATCH", toolsGV + "/tickets/t1", `{}`, notAllowed},
		{"an unlisted verb (watch of tickets) is 405", "GET", toolsGV + "/tickets?watch=1&timeoutSeconds=1", "", notAllowed},
		{"an unlisted verb (deletecollection of tickets) is 405", "DELETE", toolsGV + "/tickets", "", notAllowed},
		{"a listed verb (list of tickets) is served", "GET", toolsGV + "/tickets", "", ok},
		{"PUT on a collection is 405", "PUT", widgetsNS, widgetBody("default", "w1", 1), notAllowed},
		{"PATCH on a collection is 405", "PATCH", widgetsNS, `{}`, notAllowed},
		{"POST on one object is 405", "POST", widgetsNS + "/w1", widgetBody("default", "w1", 1), notAllowed},
		{"a method that is no verb is 405", "OPTIONS", widgetsNS, "", notAllowed},
		{"a namespaced kind is created only in a namespace", "POST", widgetsGV + "/widgets", widgetBody("default", "w9", 1), notAllowed},
		{"deletecollection of a namespaced kind only in a namespace", "DELETE", widgetsGV + "/widgets", "", notAllowed},

		// Names that serve nothing.
		{"an unknown resource is 404", "GET", widgetsGV + "/namespaces/default/sprockets", "", notFound},
		{"an unknown cluster-scoped resource is 404", "GET", toolsGV + "/sprockets", "", notFound},
		{"an unknown group is 404", "GET", "/apis/nope.example.com/v1/widgets", "", notFound},
		{"an unknown version of a served group is 404", "GET", "/apis/example.com/v2/namespaces/default/widgets", "", notFound},
		{"a resource of one group is 404 under another", "GET", widgetsGV + "/gadgets", "", notFound},
		{"the core group is not served", "GET", "/api/v1/namespaces/default/widgets", "", notFound},
		{"an unknown top-level path is 404", "GET", "/nothing-here", "", notFound},
		{"an empty namespace is 404", "GET", widgetsGV + "/namespaces//widgets", "", notFound},
		{"the namespaces resource is not served", "GET", widgetsGV + "/namespaces/default", "", notFound},
		{"a path below a subresource is 404", "GET", widgetsNS + "/w1/resize/more", "", notFound},

		// Scope.
		{"a namespaced kind's object via the cluster path is 404 (get)", "GET", widgetsGV + "/widgets/w1", "", notFound},
		{"a namespaced kind's object via the cluster path is 404 (delete)", "DELETE", widgetsGV + "/widgets/w1", "", notFound},
		{"a namespaced kind's object via the cluster path is 404 (put)", "PUT", widgetsGV + "/widgets/w1", widgetBody("default", "w1", 4), notFound},
		{"a namespaced kind is listed across namespaces via the cluster path", "GET", widgetsGV + "/widgets", "", ok},
		{"a namespaced kind's object via its namespace is served", "GET", widgetsNS + "/w1", "", ok},
		{"a cluster-scoped kind via a namespace path is 404 (list)", "GET", toolsGV + "/namespaces/default/gadgets", "", notFound},
		{"a cluster-scoped kind via a namespace path is 404 (get)", "GET", toolsGV + "/namespaces/default/gadgets/g1", "", notFound},
		{"a cluster-scoped kind's object is served", "GET", toolsGV + "/gadgets/g1", "", ok},

		// Subresources.
		{"status of a kind with HasStatus is served", "GET", toolsGV + "/gadgets/g1/status", "", ok},
		{"status of a kind without HasStatus is 404 (get)", "GET", widgetsNS + "/w1/status", "", notFound},
		{"status of a kind without HasStatus is 404 (put)", "PUT", widgetsNS + "/w1/status", widgetBody("default", "w1", 4), notFound},
		{"status verbs beyond StatusVerbs are 405", "DELETE", toolsGV + "/gadgets/g1/status", "", notAllowed},
		{"status has no delete", "DELETE", toolsGV + "/gadgets/g1/status", "", notAllowed},
		{"an unknown subresource is 404", "GET", toolsGV + "/gadgets/g1/scale", "", notFound},
		{"an extra subresource answers only create (get)", "GET", widgetsNS + "/w1/resize", "", notAllowed},
		{"an extra subresource answers only create (put)", "PUT", widgetsNS + "/w1/resize", `{"size":1}`, notAllowed},
		{"an extra subresource is not served on another resource", "POST", toolsGV + "/gadgets/g1/resize", `{"size":1}`, notFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(t, c.method, c.path, "alice", c.body)
			require.Equal(t, c.want, r.code, "%s %s: %s", c.method, c.path, r.body)
			switch c.want {
			case notFound:
				assert.Equal(t, resource.ReasonNotFound, status(t, r).Reason)
			case notAllowed:
				assert.Equal(t, resource.ReasonMethodNotAllowed, status(t, r).Reason)
			}
		})
	}
	// Nothing above changed the objects.
	assert.Equal(t, 3, f.widget(t, "default", "w1").Spec.Size)
	assert.Nil(t, f.widget(t, "default", "w9"))
}

// TestStatusSubresource checks that a PUT on status changes status only and a PUT on
// the object leaves status alone.
func TestStatusSubresource(t *testing.T) {
	f := newFixture(t, nil)
	f.seedGadget(t, "g1")
	body := func(rv, color, phase string) string {
		return fmt.Sprintf(`{"apiVersion":"tools.example.org/v1","kind":"Gadget","metadata":{"name":"g1","resourceVersion":%q},`+
			`"spec":{"color":%q},"status":{"phase":%q}}`, rv, color, phase)
	}
	r := f.do(t, "GET", toolsGV+"/gadgets/g1", "alice", "")
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	g := decode[Gadget](t, r)
	r = f.do(t, "PUT", toolsGV+"/gadgets/g1/status", "alice", body(g.ResourceVersion, "blue", "Ready"))
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	g = decode[Gadget](t, r)
	assert.Equal(t, "Ready", g.Status.Phase, "status is written through the status path")
	assert.Equal(t, "red", g.Spec.Color, "spec is not written through the status path")

	r = f.do(t, "PUT", toolsGV+"/gadgets/g1", "alice", body(g.ResourceVersion, "blue", "Gone"))
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	g = decode[Gadget](t, r)
	assert.Equal(t, "Ready", g.Status.Phase, "status is not written through the main resource")
	assert.Equal(t, "blue", g.Spec.Color)
}

// TestDiscovery checks the discovery documents of two groups served at once.
func TestDiscovery(t *testing.T) {
	f := newFixture(t, nil)
	type groupVersion struct{ GroupVersion, Version string }
	type apiResource struct {
		Name, SingularName, Kind string
		Namespaced               bool
		Verbs                    []string
		ShortNames, Categories   []string
	}
	type resourceList struct {
		Kind, APIVersion, GroupVersion string
		Resources                      []apiResource
	}

	t.Run("/apis lists both groups with their preferred version", func(t *testing.T) {
		r := f.do(t, "GET", "/apis", "alice", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		var list struct {
			Kind   string
			Groups []struct {
				Name             string
				Versions         []groupVersion
				PreferredVersion groupVersion
			}
		}
		require.NoError(t, json.Unmarshal(r.body, &list))
		assert.Equal(t, "APIGroupList", list.Kind)
		var names []string
		for _, g := range list.Groups {
			names = append(names, g.Name)
			want := groupVersion{g.Name + "/v1", "v1"}
			assert.Equal(t, []groupVersion{want}, g.Versions, "group %s", g.Name)
			assert.Equal(t, want, g.PreferredVersion, "group %s", g.Name)
		}
		assert.Equal(t, []string{"example.com", "tools.example.org"}, names)
	})

	t.Run("/apis/<group> is the APIGroup", func(t *testing.T) {
		for _, g := range []string{"example.com", "tools.example.org"} {
			r := f.do(t, "GET", "/apis/"+g, "alice", "")
			require.Equal(t, http.StatusOK, r.code, "%s", r.body)
			var doc struct{ Kind, Name string }
			require.NoError(t, json.Unmarshal(r.body, &doc))
			assert.Equal(t, "APIGroup", doc.Kind)
			assert.Equal(t, g, doc.Name)
		}
	})

	t.Run("/api lists no core version", func(t *testing.T) {
		r := f.do(t, "GET", "/api", "alice", "")
		require.Equal(t, http.StatusOK, r.code)
		var doc struct{ Versions []string }
		require.NoError(t, json.Unmarshal(r.body, &doc))
		assert.Empty(t, doc.Versions)
	})

	t.Run("/api/v1 is served, empty, for clients that read it unasked", func(t *testing.T) {
		r := f.do(t, "GET", "/api/v1", "alice", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		var doc struct {
			Kind, GroupVersion string
			Resources          []any
		}
		require.NoError(t, json.Unmarshal(r.body, &doc))
		assert.Equal(t, "APIResourceList", doc.Kind)
		assert.Equal(t, "v1", doc.GroupVersion)
		assert.NotNil(t, doc.Resources)
		assert.Empty(t, doc.Resources)
	})

	all := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	for _, c := range []struct {
		name, path string
		want       []apiResource
	}{
		{"example.com/v1 lists widgets with short names, categories and the resize subresource", widgetsGV, []apiResource{
			{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true, Verbs: all,
				ShortNames: []string{"wd"}, Categories: []string{"toys"}},
			{Name: "widgets/resize", Kind: "WidgetResize", Namespaced: true, Verbs: []string{"create"}},
		}},
		{"tools.example.org/v1 lists gadgets with status and tickets with their verbs", toolsGV, []apiResource{
			{Name: "gadgets", SingularName: "gadget", Kind: "Gadget", Verbs: all, ShortNames: []string{"gd"}},
			{Name: "gadgets/status", Kind: "Gadget", Verbs: []string{"get", "patch", "update"}},
			{Name: "tickets", SingularName: "ticket", Kind: "Ticket", Verbs: []string{"create", "get", "list"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(t, "GET", c.path, "alice", "")
			require.Equal(t, http.StatusOK, r.code, "%s", r.body)
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			list := decode[resourceList](t, r)
			assert.Equal(t, "APIResourceList", list.Kind)
			assert.Equal(t, strings.TrimPrefix(c.path, "/apis/"), list.GroupVersion)
			for i := range list.Resources {
				slices.Sort(list.Resources[i].Verbs)
			}
			assert.Equal(t, c.want, list.Resources)
		})
	}

	t.Run("discovery needs authentication", func(t *testing.T) {
		for _, p := range []string{"/apis", widgetsGV, "/openapi/v3", "/version"} {
			assert.Equal(t, http.StatusUnauthorized, f.do(t, "GET", p, "", "").code, p)
		}
	})
}

// TestOpenAPI checks the OpenAPI v3 index and the document of each group: the index
// names both, every $ref resolves, and each kind's schema and operation carries
// x-kubernetes-group-version-kind.
func TestOpenAPI(t *testing.T) {
	f := newFixture(t, nil)
	r := f.do(t, "GET", "/openapi/v3", "alice", "")
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &index))
	require.Len(t, index.Paths, 2, "the index names both groups: %s", r.body)

	type gvk struct{ Group, Version, Kind string }
	for _, c := range []struct {
		name   string
		gv     string
		kinds  map[string]gvk // schema name → kind
		paths  []string
		method map[string]string // path → an operation it must have
	}{
		{"example.com/v1", "apis/example.com/v1",
			map[string]gvk{
				"com.example.v1.Widget":       {"example.com", "v1", "Widget"},
				"com.example.v1.WidgetList":   {"example.com", "v1", "WidgetList"},
				"com.example.v1.WidgetResize": {"example.com", "v1", "WidgetResize"},
			},
			[]string{"/apis/example.com/v1/widgets", "/apis/example.com/v1/namespaces/{namespace}/widgets",
				"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
				"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/resize"},
			map[string]string{"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/resize": "post",
				"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}": "patch"}},
		{"tools.example.org/v1", "apis/tools.example.org/v1",
			map[string]gvk{
				"org.example.tools.v1.Gadget": {"tools.example.org", "v1", "Gadget"},
				"org.example.tools.v1.Ticket": {"tools.example.org", "v1", "Ticket"},
			},
			[]string{"/apis/tools.example.org/v1/gadgets/{name}", "/apis/tools.example.org/v1/gadgets/{name}/status",
				"/apis/tools.example.org/v1/tickets"},
			map[string]string{"/apis/tools.example.org/v1/gadgets/{name}/status": "put",
				"/apis/tools.example.org/v1/tickets": "post"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			entry, ok := index.Paths[c.gv]
			require.True(t, ok, "the index lacks %s: %v", c.gv, index.Paths)
			r := f.do(t, "GET", entry.ServerRelativeURL, "alice", "")
			require.Equal(t, http.StatusOK, r.code, "%s: %s", entry.ServerRelativeURL, r.body)
			var doc struct {
				OpenAPI    string
				Paths      map[string]map[string]json.RawMessage
				Components struct{ Schemas map[string]json.RawMessage }
			}
			require.NoError(t, json.Unmarshal(r.body, &doc))
			assert.Equal(t, "3.0.0", doc.OpenAPI)

			t.Run("every $ref resolves", func(t *testing.T) {
				var all any
				require.NoError(t, json.Unmarshal(r.body, &all))
				refs := collectRefs(all, nil)
				require.NotEmpty(t, refs)
				for _, ref := range refs {
					name, ok := strings.CutPrefix(ref, "#/components/schemas/")
					if assert.True(t, ok, "a $ref outside the document: %s", ref) {
						assert.Contains(t, doc.Components.Schemas, name, "unresolved $ref %s", ref)
					}
				}
			})
			t.Run("each kind's schema has x-kubernetes-group-version-kind", func(t *testing.T) {
				for name, want := range c.kinds {
					raw, ok := doc.Components.Schemas[name]
					if !assert.True(t, ok, "no schema %s", name) {
						continue
					}
					var s struct {
						GVK []gvk `json:"x-kubernetes-group-version-kind"`
					}
					require.NoError(t, json.Unmarshal(raw, &s))
					assert.Equal(t, []gvk{want}, s.GVK, "schema %s", name)
				}
			})
			t.Run("the served paths and operations are documented, with their kind", func(t *testing.T) {
				for _, p := range c.paths {
					assert.Contains(t, doc.Paths, p)
				}
				for p, m := range c.method {
					raw, ok := doc.Paths[p][m]
					if !assert.True(t, ok, "no %s %s", m, p) {
						continue
					}
					var op struct {
						GVK gvk `json:"x-kubernetes-group-version-kind"`
					}
					require.NoError(t, json.Unmarshal(raw, &op))
					assert.NotEmpty(t, op.GVK.Kind, "%s %s has no x-kubernetes-group-version-kind", m, p)
					assert.Equal(t, strings.Split(c.name, "/")[0], op.GVK.Group, "%s %s", m, p)
				}
			})
			t.Run("the Etag answers If-None-Match with 304", func(t *testing.T) {
				etag := r.header.Get("Etag")
				require.NotEmpty(t, etag)
				r2 := f.do(t, "GET", entry.ServerRelativeURL, "alice", "", "If-None-Match", etag)
				assert.Equal(t, http.StatusNotModified, r2.code)
			})
		})
	}
}

func collectRefs(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				out = append(out, s)
			} else {
				out = collectRefs(x, out)
			}
		}
	case []any:
		for _, x := range v {
			out = collectRefs(x, out)
		}
	}
	return out
}

// TestAuthenticator checks that an Authenticator's error is the answer, before
// anything is authorized or done, and BearerAuthenticator's header checks.
func TestAuthenticator(t *testing.T) {
	t.Run("the Authenticator's 401 is the answer and nothing runs after it", func(t *testing.T) {
		var authorized atomic.Int32
		f := newFixture(t, func(c *httpapi.Config) {
			c.Authenticator = httpapi.AuthenticatorFunc(func(*http.Request) (*store.UserInfo, error) {
				return nil, resource.NewUnauthorized("go away")
			})
			c.Authorizer = httpapi.AuthorizerFunc(func(context.Context, *store.UserInfo, httpapi.Attributes) (httpapi.Decision, error) {
				authorized.Add(1)
				return httpapi.Decision{}, nil
			})
		})
		for _, c := range []struct{ method, path, body string }{
			{"POST", widgetsNS, widgetBody("default", "w1", 1)},
			{"GET", widgetsNS + "/w1", ""},
			{"POST", toolsGV + "/tickets", `{"metadata":{"name":"t1"},"spec":{"for":"x"}}`},
			{"GET", "/apis", ""},
		} {
			r := f.do(t, c.method, c.path, "alice", c.body)
			require.Equal(t, http.StatusUnauthorized, r.code, "%s %s: %s", c.method, c.path, r.body)
			st := status(t, r)
			assert.Equal(t, resource.ReasonUnauthorized, st.Reason)
			assert.Equal(t, "go away", st.Message)
		}
		assert.Zero(t, authorized.Load(), "the Authorizer ran after a failed authentication")
		assert.Nil(t, f.widget(t, "default", "w1"), "a create ran after a failed authentication")
		assert.Empty(t, f.creates, "a CreateFunc ran after a failed authentication")
	})

	t.Run("a nil caller without error is anonymous", func(t *testing.T) {
		var seen atomic.Pointer[store.UserInfo]
		var calls atomic.Int32
		f := newFixture(t, func(c *httpapi.Config) {
			c.Authenticator = nil
			c.Authorizer = httpapi.AuthorizerFunc(func(_ context.Context, u *store.UserInfo, _ httpapi.Attributes) (httpapi.Decision, error) {
				calls.Add(1)
				seen.Store(u)
				return httpapi.Decision{}, nil
			})
		})
		r := f.do(t, "GET", widgetsNS, "", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		assert.Equal(t, int32(1), calls.Load())
		assert.Nil(t, seen.Load())
	})

	// BearerAuthenticator: a malformed header is 401 before the check runs.
	var checked atomic.Int32
	var lastToken atomic.Value
	f := newFixture(t, func(c *httpapi.Config) {
		c.Authenticator = httpapi.BearerAuthenticator(func(_ context.Context, tok string) (*store.UserInfo, error) {
			checked.Add(1)
			lastToken.Store(tok)
			if u, ok := users[tok]; ok {
				return u, nil
			}
			return nil, resource.NewUnauthorized("the token is not known here")
		})
	})
	for _, c := range []struct {
		name      string
		headers   []string // Authorization values, each its own header line
		wantCode  int
		wantToken string // the token handed to check, "" when it must not run
	}{
		{"no Authorization header is 401", nil, 401, ""},
		{"two Authorization headers are 401", []string{"Bearer alice", "Bearer alice"}, 401, ""},
		{"a header over MaxAuthorizationBytes is 401", []string{"Bearer " + strings.Repeat("a", httpapi.MaxAuthorizationBytes)}, 401, ""},
		{"another scheme is 401", []string{"Basic YWxpY2U6cHc="}, 401, ""},
		{"a scheme without a token is 401", []string{"Bearer"}, 401, ""},
		{"a scheme with a blank token is 401", []string{"Bearer    "}, 401, ""},
		{"a token with a space is 401", []string{"Bearer alice bob"}, 401, ""},
		{"a token with a tab is 401", []string{"Bearer alice\tbob"}, 401, ""},
		{"a scheme glued to the token is 401", []string{"Beareralice"}, 401, ""},
		{"an empty header is 401", []string{""}, 401, ""},
		{"a well-formed header reaches the check", []string{"Bearer alice"}, 200, "alice"},
		{"the scheme is case-insensitive", []string{"bearer alice"}, 200, "alice"},
		{"blanks around the token are trimmed", []string{"  Bearer   alice  "}, 200, "alice"},
		{"the check's error is the answer", []string{"Bearer mallory"}, 401, "mallory"},
	} {
		t.Run("BearerAuthenticator: "+c.name, func(t *testing.T) {
			before := checked.Load()
			req, err := http.NewRequest("GET", f.url+widgetsNS, nil)
			require.NoError(t, err)
			for _, h := range c.headers {
				req.Header.Add("Authorization", h)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := response{code: resp.StatusCode, body: b}
			require.Equal(t, c.wantCode, r.code, "%s", b)
			if c.wantCode == 401 {
				assert.Equal(t, resource.ReasonUnauthorized, status(t, r).Reason)
			}
			if c.wantToken == "" {
				assert.Equal(t, before, checked.Load(), "the check ran for a malformed header")
			} else {
				assert.Equal(t, before+1, checked.Load())
				assert.Equal(t, c.wantToken, lastToken.Load())
			}
		})
	}
	t.Run("BearerAuthenticator: the check's error message is the answer", func(t *testing.T) {
		r := f.do(t, "GET", widgetsNS, "mallory", "")
		assert.Equal(t, "the token is not known here", status(t, r).Message)
	})
}

// TestAuthorizerBeforeExistence checks that a request the Authorizer refuses answers
// the same for an object that exists and for one that does not, and changes nothing.
func TestAuthorizerBeforeExistence(t *testing.T) {
	f := newFixture(t, nil)
	f.seedWidget(t, "default", "present", 3, nil)
	var asked sync.Map // name → Attributes
	f.authz = func(u *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
		if u != nil && u.Name == "eve" {
			asked.Store(a.Name, a)
			return httpapi.Decision{}, resource.NewStatusError(resource.ReasonForbidden, "eve may not "+a.Verb+" widgets")
		}
		return httpapi.Decision{}, nil
	}
	for _, c := range []struct {
		verb, method string
		body         func(name string) string
		hdr          []string
	}{
		{"get", "GET", func(string) string { return "" }, nil},
		{"update", "PUT", func(n string) string { return widgetBody("default", n, 7) }, nil},
		{"patch", "PATCH", func(string) string { return `{"spec":{"size":7}}` }, []string{"Content-Type", "application/merge-patch+json"}},
		{"delete", "DELETE", func(string) string { return "" }, nil},
	} {
		t.Run(c.verb+" of an existing and of a missing object answer alike", func(t *testing.T) {
			present := f.do(t, c.method, widgetsNS+"/present", "eve", c.body("present"), c.hdr...)
			missing := f.do(t, c.method, widgetsNS+"/missing", "eve", c.body("missing"), c.hdr...)
			require.Equal(t, http.StatusForbidden, present.code, "%s", present.body)
			assert.Equal(t, missing.code, present.code)
			assert.Equal(t, string(missing.body), string(present.body))
			assert.Equal(t, "eve may not "+c.verb+" widgets", status(t, present).Message)
			a, ok := asked.Load("present")
			require.True(t, ok)
			assert.Equal(t, httpapi.Attributes{Verb: c.verb, APIGroup: "example.com", APIVersion: "v1",
				Resource: "widgets", Name: "present", Namespace: "default"}, a)
		})
	}
	w := f.widget(t, "default", "present")
	require.NotNil(t, w, "a refused delete deleted")
	assert.Equal(t, 3, w.Spec.Size, "a refused write wrote")
	assert.Nil(t, f.widget(t, "default", "missing"), "a refused update created")
}

// TestVisible checks Decision.Visible: an object the caller may not see answers
// exactly as a missing one, is left out of lists and watches, and deletecollection
// is refused.
func TestVisible(t *testing.T) {
	f := newFixture(t, nil)
	teamA, teamB := map[string]string{"team": "a"}, map[string]string{"team": "b"}
	f.seedWidget(t, "default", "shown", 1, teamA)
	f.seedWidget(t, "default", "hidden", 1, teamB)
	f.seedWidget(t, "other", "shown2", 1, teamA)
	f.seedWidget(t, "other", "hidden2", 1, teamB)
	f.authz = func(u *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
		if u != nil && u.Name == "bob" {
			return httpapi.Decision{Visible: func(o resource.Object) bool {
				return o.GetObjectMeta().Labels["team"] == "a"
			}}, nil
		}
		return httpapi.Decision{}, nil
	}
	// The name of the object is the only difference allowed between the answers.
	norm := func(r response, name string) string {
		return strings.ReplaceAll(string(r.body), name, "NAME")
	}
	patch := []string{"Content-Type", "application/merge-patch+json"}
	for _, c := range []struct {
		verb, method string
		body         func(name string) string
		hdr          []string
	}{
		{"get", "GET", func(string) string { return "" }, nil},
		{"update", "PUT", func(n string) string { return widgetBody("default", n, 7) }, nil},
		{"patch", "PATCH", func(string) string { return `{"spec":{"size":7}}` }, patch},
		{"delete", "DELETE", func(string) string { return "" }, nil},
	} {
		t.Run(c.verb+" of an invisible object answers as for a missing one", func(t *testing.T) {
			hidden := f.do(t, c.method, widgetsNS+"/hidden", "bob", c.body("hidden"), c.hdr...)
			missing := f.do(t, c.method, widgetsNS+"/missing", "bob", c.body("missing"), c.hdr...)
			require.Equal(t, http.StatusNotFound, missing.code, "%s", missing.body)
			assert.Equal(t, missing.code, hidden.code, "%s", hidden.body)
			assert.Equal(t, norm(missing, "missing"), norm(hidden, "hidden"))
			assert.Equal(t, missing.header.Get("Content-Type"), hidden.header.Get("Content-Type"))
		})
	}
	t.Run("the invisible object was not changed", func(t *testing.T) {
		w := f.widget(t, "default", "hidden")
		require.NotNil(t, w, "a delete of an invisible object deleted it")
		assert.Equal(t, 1, w.Spec.Size, "a write of an invisible object wrote")
		assert.Nil(t, f.widget(t, "default", "missing"))
	})
	t.Run("a visible object is served", func(t *testing.T) {
		r := f.do(t, "PATCH", widgetsNS+"/shown", "bob", `{"spec":{"size":2}}`, patch...)
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		assert.Equal(t, 2, f.widget(t, "default", "shown").Spec.Size)
	})

	names := func(t *testing.T, r response) []string {
		t.Helper()
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		list := decode[resource.List[Widget, *Widget]](t, r)
		var out []string
		for _, w := range list.Items {
			out = append(out, w.Namespace+"/"+w.Name)
		}
		return out
	}
	t.Run("a list leaves invisible objects out", func(t *testing.T) {
		assert.Equal(t, []string{"default/shown"}, names(t, f.do(t, "GET", widgetsNS, "bob", "")))
		assert.Equal(t, []string{"default/shown", "other/shown2"}, names(t, f.do(t, "GET", widgetsGV+"/widgets", "bob", "")))
		assert.Empty(t, names(t, f.do(t, "GET", widgetsNS+"?fieldSelector=metadata.name%3Dhidden", "bob", "")))
		// Without Visible, everything is listed.
		assert.Len(t, names(t, f.do(t, "GET", widgetsGV+"/widgets", "alice", "")), 4)
	})

	t.Run("a watch leaves invisible objects out", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		events := f.watch(t, ctx, widgetsGV+"/widgets?watch=1&sendInitialEvents=true&allowWatchBookmarks=true", "bob")
		// The initial events: only the visible objects, then the end bookmark.
		var initial []string
		for {
			ev := next(t, ctx, events)
			if ev.Type == "BOOKMARK" {
				if ev.Object.Annotations["k8s.io/initial-events-end"] == "true" {
					break
				}
				continue
			}
			initial = append(initial, ev.Type+" "+ev.Object.Namespace+"/"+ev.Object.Name)
		}
		assert.Equal(t, []string{"ADDED default/shown", "ADDED other/shown2"}, initial)

		// Changes of invisible objects come first; the first event seen must be of a
		// visible one.
		ctxb := context.Background()
		f.seedWidget(t, "default", "hidden3", 1, teamB)
		h := f.widget(t, "default", "hidden")
		h.Spec.Size = 5
		require.NoError(t, f.st.Update(ctxb, h, store.UpdateOptions{}))
		f.seedWidget(t, "default", "shown3", 1, teamA)
		assert.Equal(t, "ADDED default/shown3", nextChange(t, ctx, events))

		_, err := f.st.Delete(ctxb, &Widget{ObjectMeta: resource.ObjectMeta{Name: "hidden3", Namespace: "default"}}, store.DeleteOptions{})
		require.NoError(t, err)
		s := f.widget(t, "default", "shown3")
		s.Spec.Size = 9
		require.NoError(t, f.st.Update(ctxb, s, store.UpdateOptions{}))
		assert.Equal(t, "MODIFIED default/shown3", nextChange(t, ctx, events))

		h = f.widget(t, "default", "hidden")
		h.Spec.Size = 6
		require.NoError(t, f.st.Update(ctxb, h, store.UpdateOptions{}))
		_, err = f.st.Delete(ctxb, &Widget{ObjectMeta: resource.ObjectMeta{Name: "shown3", Namespace: "default"}}, store.DeleteOptions{})
		require.NoError(t, err)
		assert.Equal(t, "DELETED default/shown3", nextChange(t, ctx, events))
	})

	t.Run("deletecollection with Visible is 403 and deletes nothing", func(t *testing.T) {
		r := f.do(t, "DELETE", widgetsNS, "bob", "")
		require.Equal(t, http.StatusForbidden, r.code, "%s", r.body)
		assert.Equal(t, resource.ReasonForbidden, status(t, r).Reason)
		assert.NotNil(t, f.widget(t, "default", "shown"))
		assert.NotNil(t, f.widget(t, "default", "hidden"))
		// The same request without Visible deletes the namespace's widgets.
		r = f.do(t, "DELETE", widgetsNS, "alice", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		assert.Nil(t, f.widget(t, "default", "hidden"))
	})
}

type watchEvent struct {
	Type   string
	Object Widget
}

// watch opens a watch and streams its events until ctx ends.
func (f *fixture) watch(t testing.TB, ctx context.Context, path, token string) <-chan watchEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", f.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "watch: %s", b)
	}
	ch := make(chan watchEvent)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				ev.Type = "UNDECODABLE " + sc.Text()
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

func next(t testing.TB, ctx context.Context, events <-chan watchEvent) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the watch ended")
		return ev
	case <-ctx.Done():
		require.FailNow(t, "no watch event in time")
	}
	return watchEvent{}
}

// nextChange returns the next event that is not a bookmark, as "TYPE ns/name".
func nextChange(t testing.TB, ctx context.Context, events <-chan watchEvent) string {
	t.Helper()
	for {
		if ev := next(t, ctx, events); ev.Type != "BOOKMARK" {
			return ev.Type + " " + ev.Object.Namespace + "/" + ev.Object.Name
		}
	}
}

// TestCreateFuncs checks that Resource.Create and a Subresource's Create are called
// with the decoded object, the URL's name and namespace, the caller and dry run, and
// that their errors are the answer.
func TestCreateFuncs(t *testing.T) {
	f := newFixture(t, nil)
	f.seedWidget(t, "default", "w1", 3, nil)

	t.Run("Resource.Create gets the decoded object, the caller and dry run", func(t *testing.T) {
		r := f.do(t, "POST", toolsGV+"/tickets?dryRun=All&fieldManager=issuer", "alice",
			`{"apiVersion":"tools.example.org/v1","kind":"Ticket","metadata":{"name":"t1"},"spec":{"for":"lunch"}}`)
		require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
		out := decode[Ticket](t, r)
		assert.Equal(t, "Ticket", out.Kind, "the answer carries its kind")
		assert.Equal(t, "tools.example.org/v1", out.APIVersion)
		assert.Equal(t, "token-for-lunch", out.Status.Token, "the answer is the CreateFunc's object")

		req := f.lastCreate(t)
		assert.Equal(t, "Ticket", req.Kind.Kind)
		in, ok := req.Object.(*Ticket)
		require.True(t, ok, "the object is %T", req.Object)
		assert.Equal(t, "t1", in.Name)
		assert.Equal(t, "lunch", in.Spec.For)
		assert.Empty(t, req.Name, "a create of the resource itself has no URL name")
		assert.Empty(t, req.Namespace)
		assert.Equal(t, users["alice"], req.Write.User, "the caller is the Authenticator's")
		assert.True(t, req.Write.DryRun)
		assert.Equal(t, "issuer", req.Write.FieldManager)

		// Not stored: the store is not asked.
		r = f.do(t, "GET", toolsGV+"/tickets/t1", "alice", "")
		assert.Equal(t, http.StatusNotFound, r.code, "%s", r.body)
	})

	t.Run("without dryRun the CreateFunc is told so", func(t *testing.T) {
		r := f.do(t, "POST", toolsGV+"/tickets", "bob", `{"metadata":{"name":"t2"},"spec":{"for":"tea"}}`)
		require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
		req := f.lastCreate(t)
		assert.False(t, req.Write.DryRun)
		assert.Equal(t, users["bob"], req.Write.User)
	})

	t.Run("Subresource.Create gets the URL name and namespace", func(t *testing.T) {
		r := f.do(t, "POST", widgetsNS+"/w1/resize", "bob",
			`{"apiVersion":"example.com/v1","kind":"WidgetResize","metadata":{"name":"w1"},"size":5}`)
		require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
		out := decode[WidgetResize](t, r)
		assert.Equal(t, "WidgetResize", out.Kind)
		assert.Equal(t, "example.com/v1", out.APIVersion)
		assert.Equal(t, 5, out.Size)

		req := f.lastCreate(t)
		assert.Equal(t, "WidgetResize", req.Kind.Kind)
		in, ok := req.Object.(*WidgetResize)
		require.True(t, ok, "the object is %T", req.Object)
		assert.Equal(t, 5, in.Size)
		assert.Equal(t, "default", in.Namespace, "the body's namespace is the URL's")
		assert.Equal(t, "w1", req.Name)
		assert.Equal(t, "default", req.Namespace)
		assert.Equal(t, users["bob"], req.Write.User)
		assert.False(t, req.Write.DryRun)
	})

	t.Run("Subresource.Create is told dry run", func(t *testing.T) {
		r := f.do(t, "POST", widgetsNS+"/w1/resize?dryRun=All", "alice", `{"size":4}`)
		require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
		req := f.lastCreate(t)
		assert.True(t, req.Write.DryRun)
		assert.Equal(t, users["alice"], req.Write.User)
	})

	for _, c := range []struct {
		name       string
		path, body string
		code       int
		reason     resource.StatusReason
		message    string
	}{
		{"a Status error of Resource.Create is the answer", toolsGV + "/tickets", `{"metadata":{"name":"t3"},"spec":{"for":"forbidden"}}`,
			403, resource.ReasonForbidden, "no ticket for you"},
		{"a plain error of Resource.Create is a 500 Status", toolsGV + "/tickets", `{"metadata":{"name":"t3"},"spec":{"for":"boom"}}`,
			500, resource.ReasonUnknown, "the ticket machine is on fire"},
		{"a Status error of Subresource.Create is the answer", widgetsNS + "/w1/resize", `{"size":-1}`,
			422, resource.ReasonInvalid, "must not be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(t, "POST", c.path, "alice", c.body)
			require.Equal(t, c.code, r.code, "%s", r.body)
			st := status(t, r)
			assert.Equal(t, c.reason, st.Reason)
			assert.Contains(t, st.Message, c.message)
		})
	}

	t.Run("a body the codec refuses does not reach the CreateFunc", func(t *testing.T) {
		n := len(f.creates)
		r := f.do(t, "POST", toolsGV+"/tickets?fieldValidation=Strict", "alice", `{"metadata":{"name":"t4"},"spec":{"for":"x"},"unknown":1}`)
		assert.Equal(t, http.StatusBadRequest, r.code, "%s", r.body)
		assert.Len(t, f.creates, n)
	})
}

// TestPublicAndNonResource checks the extra endpoints: Public ones are served without
// authentication, NonResource ones to authenticated callers the Authorizer allows
// with the path; and the health endpoints, /readyz following Config.Ready.
func TestPublicAndNonResource(t *testing.T) {
	var authn, publicServed, infoServed atomic.Int32
	var ready atomic.Bool
	var asked sync.Map // user name → Attributes
	f := newFixture(t, func(c *httpapi.Config) {
		bearer := c.Authenticator
		c.Authenticator = httpapi.AuthenticatorFunc(func(r *http.Request) (*store.UserInfo, error) {
			authn.Add(1)
			return bearer.Authenticate(r)
		})
		c.Public = map[string]http.Handler{"/openid/v1/jwks": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			publicServed.Add(1)
			_, _ = io.WriteString(w, `{"keys":[]}`)
		})}
		c.NonResource = map[string]http.Handler{"/custom/info": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			infoServed.Add(1)
			_, _ = io.WriteString(w, "info")
		})}
		c.Ready = ready.Load
	})
	f.authz = func(u *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
		if u != nil {
			asked.Store(u.Name, a)
		}
		if u == nil || u.Name == "eve" {
			return httpapi.Decision{}, resource.NewStatusError(resource.ReasonForbidden, "not for you")
		}
		return httpapi.Decision{}, nil
	}

	t.Run("a Public endpoint is served without authentication", func(t *testing.T) {
		before := authn.Load()
		r := f.do(t, "GET", "/openid/v1/jwks", "", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		assert.Equal(t, `{"keys":[]}`, string(r.body))
		assert.Equal(t, before, authn.Load(), "the Authenticator ran for a Public endpoint")
		// A token that does not authenticate does not matter either.
		assert.Equal(t, http.StatusOK, f.do(t, "GET", "/openid/v1/jwks", "mallory", "").code)
	})
	t.Run("a Public endpoint answers GET and HEAD only", func(t *testing.T) {
		n := publicServed.Load()
		assert.Equal(t, http.StatusOK, f.do(t, "HEAD", "/openid/v1/jwks", "", "").code)
		r := f.do(t, "POST", "/openid/v1/jwks", "", `{}`)
		assert.Equal(t, http.StatusMethodNotAllowed, r.code)
		assert.Equal(t, resource.ReasonMethodNotAllowed, status(t, r).Reason)
		assert.Equal(t, n+1, publicServed.Load())
	})
	t.Run("a NonResource endpoint needs authentication", func(t *testing.T) {
		n := infoServed.Load()
		assert.Equal(t, http.StatusUnauthorized, f.do(t, "GET", "/custom/info", "", "").code)
		assert.Equal(t, http.StatusUnauthorized, f.do(t, "GET", "/custom/info", "mallory", "").code)
		assert.Equal(t, n, infoServed.Load())
	})
	t.Run("a NonResource endpoint is authorized with its path", func(t *testing.T) {
		n := infoServed.Load()
		r := f.do(t, "GET", "/custom/info", "eve", "")
		assert.Equal(t, http.StatusForbidden, r.code, "%s", r.body)
		assert.Equal(t, "not for you", status(t, r).Message)
		assert.Equal(t, n, infoServed.Load(), "the handler ran for a refused caller")
		a, _ := asked.Load("eve")
		assert.Equal(t, httpapi.Attributes{Verb: "get", Path: "/custom/info"}, a)

		r = f.do(t, "GET", "/custom/info", "alice", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		assert.Equal(t, "info", string(r.body))
		a, _ = asked.Load("alice")
		assert.Equal(t, httpapi.Attributes{Verb: "get", Path: "/custom/info"}, a)
	})
	t.Run("a NonResource endpoint answers GET and HEAD only", func(t *testing.T) {
		assert.Equal(t, http.StatusOK, f.do(t, "HEAD", "/custom/info", "alice", "").code)
		r := f.do(t, "POST", "/custom/info", "alice", "{}")
		assert.Equal(t, http.StatusMethodNotAllowed, r.code, "%s", r.body)
	})
	t.Run("the built-in non-resource paths are authorized with their path too", func(t *testing.T) {
		assert.Equal(t, http.StatusForbidden, f.do(t, "GET", "/version", "eve", "").code)
		a, _ := asked.Load("eve")
		assert.Equal(t, httpapi.Attributes{Verb: "get", Path: "/version"}, a)
	})
	t.Run("the root lists the extra endpoints", func(t *testing.T) {
		r := f.do(t, "GET", "/", "alice", "")
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		var doc struct{ Paths []string }
		require.NoError(t, json.Unmarshal(r.body, &doc))
		assert.Contains(t, doc.Paths, "/openid/v1/jwks")
		assert.Contains(t, doc.Paths, "/custom/info")
	})
	t.Run("/readyz follows Config.Ready, without authentication", func(t *testing.T) {
		before := authn.Load()
		ready.Store(false)
		r := f.do(t, "GET", "/readyz", "", "")
		assert.Equal(t, http.StatusServiceUnavailable, r.code)
		assert.Equal(t, resource.ReasonServiceUnavailable, status(t, r).Reason)
		assert.NotEmpty(t, r.header.Get("Retry-After"))
		assert.False(t, f.h.Ready())
		ready.Store(true)
		r = f.do(t, "GET", "/readyz", "", "")
		assert.Equal(t, http.StatusOK, r.code)
		assert.Equal(t, "ok", string(r.body))
		assert.True(t, f.h.Ready())
		ready.Store(false)
		assert.Equal(t, http.StatusServiceUnavailable, f.do(t, "GET", "/readyz", "", "").code)
		for _, p := range []string{"/healthz", "/livez"} {
			assert.Equal(t, http.StatusOK, f.do(t, "GET", p, "", "").code, "%s does not follow Ready", p)
		}
		assert.Equal(t, before, authn.Load(), "the Authenticator ran for a health endpoint")
	})
	t.Run("/readyz is ok when Config.Ready is nil", func(t *testing.T) {
		g := newFixture(t, nil)
		assert.Equal(t, http.StatusOK, g.do(t, "GET", "/readyz", "", "").code)
	})
}

// TestNewConfigErrors checks that New refuses a Config it cannot serve, naming why.
func TestNewConfigErrors(t *testing.T) {
	sch, reg := testScheme(t)
	// A second version of the widgets' group.
	require.NoError(t, sch.Register(resource.KindInfo{Group: "example.com", Version: "v2", Kind: "Widget", Resource: "widgets",
		Namespaced: true, New: func() resource.Object { return &widgetV2{} },
		NewList: func() resource.ObjectList { return &resource.List[widgetV2, *widgetV2]{} }}))
	require.NoError(t, reg.Register(resource.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, []byte(widgetSchema)))
	// A kind without a JSON Schema.
	require.NoError(t, sch.Register(resource.KindInfo{Group: "tools.example.org", Version: "v1", Kind: "Sprocket", Resource: "sprockets",
		New: func() resource.Object { return &sprocket{} }, NewList: func() resource.ObjectList { return &resource.List[sprocket, *sprocket]{} }}))
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: sch})
	require.NoError(t, err)
	defer st.Close()
	echo := func(_ context.Context, req *httpapi.CreateRequest) (resource.Object, error) { return req.Object, nil }
	widgets := httpapi.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}
	for _, c := range []struct {
		name string
		cfg  httpapi.Config
		want string
	}{
		{"a missing Store is refused", httpapi.Config{Resources: []httpapi.Resource{widgets}}, "Config.Store and Config.Resources are required"},
		{"missing Resources are refused", httpapi.Config{Store: st}, "Config.Store and Config.Resources are required"},
		{"a resource the scheme does not know is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "sprockets"}}}, "the scheme has no kind for example.com/v1 sprockets"},
		{"a resource listed twice is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{widgets, widgets}},
			"resource example.com/v1/widgets is listed twice"},
		{"a group in two versions is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{widgets,
			{Group: "example.com", Version: "v2", Resource: "widgets"}}}, "group example.com is served in two versions"},
		{"a subresource without Create is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "widgets", Subresources: []httpapi.Subresource{{Name: "resize"}}}}},
			"subresource example.com/v1/widgets/resize has no Create"},
		{"a subresource the scheme does not know is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "widgets", Subresources: []httpapi.Subresource{{Name: "scale", Create: echo}}}}},
			"the scheme has no kind for subresource example.com/v1/widgets/scale"},
		{"a subresource listed twice is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "widgets", Subresources: []httpapi.Subresource{
				{Name: "resize", Create: echo}, {Name: "resize", Create: echo}}}}},
			"subresource example.com/v1/widgets/resize is served twice"},
		{"an unknown verb is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{
			{Group: "example.com", Version: "v1", Resource: "widgets", Verbs: []string{"get", "frobnicate"}}}}, `unknown verb "frobnicate"`},
		{"the core group is refused", httpapi.Config{Store: st, Resources: []httpapi.Resource{{Version: "v1", Resource: "widgets"}}},
			"the core group is not served"},
		{"a kind without a JSON Schema is refused", httpapi.Config{Store: st, Schemas: reg, Resources: []httpapi.Resource{
			{Group: "tools.example.org", Version: "v1", Resource: "sprockets"}}}, "no JSON Schema for Sprocket"},
		{"a BasePath without a leading slash is refused", httpapi.Config{Store: st, Schemas: reg, BasePath: "api",
			Resources: []httpapi.Resource{widgets}}, "must start with /"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := httpapi.New(c.cfg)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("the same resources with their schemas are accepted", func(t *testing.T) {
		s, err := httpapi.New(httpapi.Config{Store: st, Schemas: reg, Resources: []httpapi.Resource{widgets}})
		require.NoError(t, err)
		require.NoError(t, s.Close())
	})
}

type widgetV2 struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Size int `json:"size"`
	} `json:"spec"`
}

type sprocket struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
}
