package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

const (
	tableAccept   = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	partialAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	partialList   = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)

type tableDoc struct {
	Kind              string `json:"kind"`
	APIVersion        string `json:"apiVersion"`
	Metadata          resource.ListMeta
	ColumnDefinitions []struct {
		Name, Type, Format, Description string
		Priority                        int32
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any           `json:"cells"`
		Object json.RawMessage `json:"object"`
	} `json:"rows"`
}

func gadgetColumns() []httpapi.Column {
	return []httpapi.Column{
		{Name: "Color", Type: "string", JSONPath: ".spec.color", Description: "the color"},
		{Name: "Phase", Type: "string", JSONPath: "{.status.phase}", Priority: 1},
		{Name: "Name Length", Type: "integer", Value: func(o resource.Object) any { return len(o.GetObjectMeta().Name) }},
		httpapi.AgeColumn,
	}
}

// TestTable checks the Table, PartialObjectMetadata and PartialObjectMetadataList
// forms of get, list and watch that Accept asks for, as kube-apiserver serves them for
// a custom resource: a Name column, the resource's columns (Age by default), the row's
// object as metadata (includeObject Metadata, the default), the whole object or none.
func TestTable(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) {
		c.Resources[1].Columns = gadgetColumns()
	})
	f.seedWidget(t, "default", "w1", 1, nil)
	f.seedGadget(t, "g1")
	g := &Gadget{}
	require.NoError(t, f.st.Get(context.Background(), "", "g1", g, store.GetOptions{}))

	type colCheck struct {
		names []string
		cells []any // nil entries are not compared (times)
	}
	tests := []struct {
		name, path, accept string
		code               int
		kind               string
		cols               *colCheck
		object             string // kind of the row's object, "" for none
	}{
		{"list of widgets: Name and Age", widgetsNS, tableAccept, 200, "Table",
			&colCheck{[]string{"Name", "Age"}, []any{"w1", nil}}, "PartialObjectMetadata"},
		{"get of a widget", widgetsNS + "/w1", tableAccept, 200, "Table",
			&colCheck{[]string{"Name", "Age"}, []any{"w1", nil}}, "PartialObjectMetadata"},
		{"includeObject=Object", widgetsNS + "?includeObject=Object", tableAccept, 200, "Table",
			&colCheck{[]string{"Name", "Age"}, []any{"w1", nil}}, "Widget"},
		{"includeObject=None", widgetsNS + "?includeObject=None", tableAccept, 200, "Table",
			&colCheck{[]string{"Name", "Age"}, []any{"w1", nil}}, ""},
		{"a bogus includeObject is 400", widgetsNS + "?includeObject=All", tableAccept, 400, "Status", nil, ""},
		{"configured columns", toolsGV + "/gadgets", tableAccept, 200, "Table",
			&colCheck{[]string{"Name", "Color", "Phase", "Name Length", "Age"}, []any{"g1", "red", nil, float64(2), nil}}, "PartialObjectMetadata"},
		{"PartialObjectMetadata of a get", widgetsNS + "/w1", partialAccept, 200, "PartialObjectMetadata", nil, ""},
		{"PartialObjectMetadataList of a list", widgetsNS, partialList, 200, "PartialObjectMetadataList", nil, ""},
		{"PartialObjectMetadata of a list is 406", widgetsNS, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", 406, "Status", nil, ""},
		{"PartialObjectMetadataList of a get is 406", widgetsNS + "/w1", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 406, "Status", nil, ""},
		{"a Table of another group is 406", widgetsNS, "application/json;as=Table;g=example.com;v=v1", 406, "Status", nil, ""},
		{"an unknown conversion falls back to the next range", widgetsNS, "application/json;as=Graph;g=meta.k8s.io;v=v1,application/json", 200, "WidgetList", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, "GET", tt.path, "alice", "", "Accept", tt.accept)
			require.Equal(t, tt.code, r.code, "%s", r.body)
			var doc tableDoc
			require.NoError(t, json.Unmarshal(r.body, &doc))
			assert.Equal(t, tt.kind, doc.Kind)
			if tt.cols == nil {
				return
			}
			assert.Equal(t, "meta.k8s.io/v1", doc.APIVersion)
			var names []string
			for _, c := range doc.ColumnDefinitions {
				names = append(names, c.Name)
			}
			assert.Equal(t, tt.cols.names, names)
			require.Len(t, doc.Rows, 1)
			require.Len(t, doc.Rows[0].Cells, len(tt.cols.cells))
			for i, want := range tt.cols.cells {
				if want != nil {
					assert.Equal(t, want, doc.Rows[0].Cells[i], "cell %d", i)
				}
			}
			age := doc.Rows[0].Cells[len(tt.cols.cells)-1].(string)
			assert.Regexp(t, `^[0-9]+s$`, age)
			if tt.object == "" {
				assert.Equal(t, "null", string(doc.Rows[0].Object))
				return
			}
			var obj struct {
				Kind     string
				Metadata resource.ObjectMeta
				Spec     map[string]any
			}
			require.NoError(t, json.Unmarshal(doc.Rows[0].Object, &obj))
			assert.Equal(t, tt.object, obj.Kind)
			assert.Equal(t, tt.cols.cells[0], obj.Metadata.Name)
			assert.NotEmpty(t, obj.Metadata.UID)
			assert.Equal(t, tt.object == "Widget", obj.Spec != nil, "the whole object only with includeObject=Object")
		})
	}

	t.Run("a Table column's description and priority", func(t *testing.T) {
		r := f.do(t, "GET", toolsGV+"/gadgets/g1", "alice", "", "Accept", tableAccept)
		doc := decode[tableDoc](t, r)
		require.Len(t, doc.ColumnDefinitions, 5)
		assert.Equal(t, "name", doc.ColumnDefinitions[0].Format)
		assert.Equal(t, "the color", doc.ColumnDefinitions[1].Description)
		assert.Equal(t, int32(1), doc.ColumnDefinitions[2].Priority)
		assert.Equal(t, "date", doc.ColumnDefinitions[4].Type)
		assert.Equal(t, g.ResourceVersion, doc.Metadata.ResourceVersion)
	})

	t.Run("watch: a Table per event, columns in the first only", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", f.url+widgetsNS+"?watch=1&resourceVersion=0", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Accept", tableAccept)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		f.seedWidget(t, "default", "w2", 1, nil)
		dec := json.NewDecoder(resp.Body)
		for i, name := range []string{"w1", "w2"} {
			var ev struct {
				Type   string
				Object tableDoc
			}
			require.NoError(t, dec.Decode(&ev))
			assert.Equal(t, "ADDED", ev.Type)
			assert.Equal(t, "Table", ev.Object.Kind)
			assert.Equal(t, i == 0, len(ev.Object.ColumnDefinitions) > 0, "column definitions in event %d", i)
			require.Len(t, ev.Object.Rows, 1)
			assert.Equal(t, name, ev.Object.Rows[0].Cells[0])
		}
	})

	t.Run("watch: PartialObjectMetadata", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", f.url+widgetsNS+"?watch=1&resourceVersion=0", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Accept", partialAccept)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var ev struct {
			Type   string
			Object map[string]any
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ev))
		assert.Equal(t, "PartialObjectMetadata", ev.Object["kind"])
		assert.NotContains(t, ev.Object, "spec")
	})
}

// TestKubectlColumns checks that kubectl get prints a resource's columns, -o wide the
// ones of a higher priority too.
func TestKubectlColumns(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) {
		c.Resources[1].Columns = gadgetColumns()
		c.Authenticator = nil
	})
	kubectl := kubectlAgainst(t, f.url)
	f.seedGadget(t, "g1")
	out := kubectl(false, "get", "gadgets")
	assert.Regexp(t, `NAME\s+COLOR\s+NAME LENGTH\s+AGE`, out)
	assert.Regexp(t, `g1\s+red\s+2\s+[0-9]+s`, out)
	assert.NotContains(t, out, "PHASE")
	wide := kubectl(false, "get", "gadgets", "-o", "wide")
	assert.Regexp(t, `NAME\s+COLOR\s+PHASE\s+NAME LENGTH\s+AGE`, wide)
	assert.Regexp(t, `g1\s+red\s+2\s+[0-9]+s`, wide, "an empty cell prints as nothing")
	assert.True(t, strings.Contains(kubectl(false, "get", "widgets"), "No resources found"))
}

// TestAcceptQValues checks that the response's media type follows the q-values of
// Accept, as kube-apiserver's negotiation orders them: highest q first, the more
// specific range first among equals, header order otherwise.
func TestAcceptQValues(t *testing.T) {
	f := newFixture(t, nil)
	f.seedWidget(t, "default", "w1", 1, nil)
	tests := []struct{ accept, want string }{
		{"application/json;q=0.1, application/yaml;q=0.9", "application/yaml"},
		{"application/yaml;q=0.9, application/json;q=0.1", "application/yaml"},
		{"application/yaml;q=0.5, application/json", "application/json"},
		{"application/yaml, application/json", "application/yaml"},
		{"*/*;q=0.8, application/yaml", "application/yaml"},
		{"*/*, application/yaml", "application/yaml"},
		{"application/vnd.kubernetes.protobuf, application/yaml;q=0.2", "application/yaml"},
		{"application/json;as=Table;g=meta.k8s.io;v=v1;q=0.1, application/yaml;q=0.5", "application/yaml"},
		{"text/html", ""},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			r := f.do(t, "GET", widgetsNS+"/w1", "alice", "", "Accept", tt.accept)
			if tt.want == "" {
				assert.Equal(t, http.StatusNotAcceptable, r.code)
				return
			}
			require.Equal(t, http.StatusOK, r.code, "%s", r.body)
			assert.Equal(t, tt.want, r.header.Get("Content-Type"))
		})
	}
}

// TestHumanDuration checks the ages a Table prints, as kubectl prints them.
func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-time.Second + time.Millisecond, "0s"},
		{0, "0s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{9*time.Minute + 59*time.Second, "9m59s"},
		{10*time.Minute + 30*time.Second, "10m"},
		{179 * time.Minute, "179m"},
		{3 * time.Hour, "3h"},
		{7*time.Hour + 59*time.Minute, "7h59m"},
		{8*time.Hour + 30*time.Minute, "8h"},
		{47 * time.Hour, "47h"},
		{48 * time.Hour, "2d"},
		{7*24*time.Hour + 23*time.Hour, "7d23h"},
		{8 * 24 * time.Hour, "8d"},
		{729 * 24 * time.Hour, "729d"},
		{730 * 24 * time.Hour, "2y"},
		{(3*365 + 10) * 24 * time.Hour, "3y10d"},
		{8 * 365 * 24 * time.Hour, "8y"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, httpapi.HumanDuration(tt.d))
		})
	}
}
