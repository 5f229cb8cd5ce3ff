package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
)

// Widget is a user-defined kind: TypeMeta inline, ObjectMeta as metadata, a spec.
type Widget struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Size int `json:"size"`
	} `json:"spec"`
}

// widgetSchema is the JSON Schema every write of a Widget is validated against.
const widgetSchema = `{"type": "object", "properties": {"spec": {"type": "object",
  "properties": {"size": {"type": "integer", "minimum": 1}}, "required": ["size"]}}}`

// A custom API server for a user-defined kind: a Go type, a JSON Schema, a store and
// the handler. kubectl, client-go's dynamic client and its informers work against it.
func Example() {
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	scheme, schemas := resource.NewScheme(), schema.NewRegistry()
	if err := scheme.Register(resource.KindInfo{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: "widgets", Namespaced: true,
		New: func() resource.Object { return &Widget{} }, NewList: func() resource.ObjectList { return &resource.List[Widget, *Widget]{} },
	}); err != nil {
		panic(err)
	}
	if err := schemas.Register(gvk, []byte(widgetSchema)); err != nil {
		panic(err)
	}
	st, err := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: scheme,
		Validating: []store.ValidatingAdmitter{schema.NewAdmitter(schemas)}})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	h, err := httpapi.New(httpapi.Config{Store: st, Schemas: schemas,
		Resources: []httpapi.Resource{{Group: "example.com", Version: "v1", Resource: "widgets", ShortNames: []string{"wd"}}}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h) // or http.ListenAndServe(addr, h); kubectl --server <url>
	defer srv.Close()

	url := srv.URL + "/apis/example.com/v1/namespaces/default/widgets"
	for _, body := range []string{`{"metadata":{"name":"w1"},"spec":{"size":3}}`, `{"metadata":{"name":"w2"},"spec":{"size":0}}`} {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.Contains(string(b), `"uid"`))
	}
	// Output:
	// 201 true
	// 422 false
}

// Columns make "kubectl get" print a resource's fields: a Table answers
// "Accept: application/json;as=Table;v=v1;g=meta.k8s.io".
func ExampleColumn() {
	scheme, schemas := resource.NewScheme(), schema.NewRegistry()
	st, _ := store.New(memdb.New(memdb.Options{}), store.Options{Scheme: scheme})
	defer st.Close()
	h, _ := httpapi.New(httpapi.Config{Store: st, Schemas: schemas, Resources: []httpapi.Resource{{
		Group: resource.Group, Version: resource.Version, Resource: "projects",
		Columns: []httpapi.Column{
			{Name: "Display Name", Type: "string", JSONPath: ".spec.displayName"},
			httpapi.AgeColumn,
		}}}})
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}}
	p.Spec.DisplayName = "Web"
	_ = st.Create(context.Background(), p, store.CreateOptions{})

	req := httptest.NewRequest("GET", "/apis/management.service/v1/projects", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var table struct {
		ColumnDefinitions []struct{ Name string }
		Rows              []struct{ Cells []any }
	}
	_ = json.Unmarshal(w.Body.Bytes(), &table)
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	fmt.Println(strings.Join(names, ", "))
	fmt.Println(table.Rows[0].Cells[:2])
	// Output:
	// Name, Display Name, Age
	// [web Web]
}
