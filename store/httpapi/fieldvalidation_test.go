package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/httpapi"
)

// TestFieldValidation checks the fieldValidation parameter as kube-apiserver answers
// it for a custom resource: Strict refuses unknown and duplicate fields (400 on a body,
// 422 on a patch), Warn (also when the parameter is absent) drops them with one Warning
// header each, Ignore drops them silently, any other value is 422.
func TestFieldValidation(t *testing.T) {
	f := newFixture(t, nil)
	f.seedWidget(t, "default", "w0", 1, nil)
	unknown := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"%s"},"spec":{"size":2,"foo":1},"bar":true}`
	dup := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"%s"},"spec":{"size":2,"size":3}}`
	warnUnknown := []string{`299 - "unknown field \"bar\""`, `299 - "unknown field \"spec.foo\""`}
	tests := []struct {
		name, method, path, ct, body string
		code                         int
		reason                       resource.StatusReason
		message                      string   // in the Status, for a failure
		warnings                     []string // the Warning headers, for a success
		size                         int      // spec.size of the stored widget, for a success
	}{
		{"create, Strict, unknown fields", "POST", "?fieldValidation=Strict", "", unknown, 400, resource.ReasonBadRequest,
			`strict decoding error: unknown field "bar", unknown field "spec.foo"`, nil, 0},
		{"create, Strict, duplicate field", "POST", "?fieldValidation=Strict", "", dup, 400, resource.ReasonBadRequest,
			`strict decoding error: duplicate field "spec.size"`, nil, 0},
		{"create, Warn", "POST", "?fieldValidation=Warn", "", unknown, 201, "", "", warnUnknown, 2},
		{"create, no parameter is Warn", "POST", "", "", unknown, 201, "", "", warnUnknown, 2},
		{"create, Warn, duplicate field: the last wins", "POST", "", "", dup, 201, "", "",
			[]string{`299 - "duplicate field \"spec.size\""`}, 3},
		{"create, Warn, YAML", "POST", "", "application/yaml",
			"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: %s\nspec:\n  size: 2\n  foo: 1\n", 201, "", "",
			[]string{`299 - "unknown field \"spec.foo\""`}, 2},
		{"create, Ignore", "POST", "?fieldValidation=Ignore", "", unknown, 201, "", "", nil, 2},
		{"create, a bogus value is 422", "POST", "?fieldValidation=Loose", "", unknown, 422, resource.ReasonInvalid,
			`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"`, nil, 0},
		{"update, Strict", "PUT", "/w0?fieldValidation=Strict", "", unknown, 400, resource.ReasonBadRequest,
			`strict decoding error: unknown field "bar", unknown field "spec.foo"`, nil, 0},
		{"update, Warn", "PUT", "/w0", "", unknown, 200, "", "", warnUnknown, 2},
		{"update, a bogus value is 422", "PUT", "/w0?fieldValidation=strict", "", unknown, 422, resource.ReasonInvalid,
			`UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict"`, nil, 0},
		{"merge patch, Strict", "PATCH", "/w0?fieldValidation=Strict", "application/merge-patch+json",
			`{"spec":{"size":5,"foo":1}}`, 422, resource.ReasonInvalid, `strict decoding error: unknown field "spec.foo"`, nil, 0},
		{"JSON patch, Strict", "PATCH", "/w0?fieldValidation=Strict", "application/json-patch+json",
			`[{"op":"add","path":"/spec/foo","value":1}]`, 422, resource.ReasonInvalid, `strict decoding error: unknown field "spec.foo"`, nil, 0},
		{"merge patch, Warn", "PATCH", "/w0", "application/merge-patch+json",
			`{"spec":{"size":6,"foo":1}}`, 200, "", "", []string{`299 - "unknown field \"spec.foo\""`}, 6},
		{"merge patch, Strict, a duplicate key", "PATCH", "/w0?fieldValidation=Strict", "application/merge-patch+json",
			`{"spec":{"size":5,"size":6}}`, 422, resource.ReasonInvalid, `strict decoding error: duplicate field "spec.size"`, nil, 0},
		{"merge patch, Warn, a duplicate key and an unknown field", "PATCH", "/w0", "application/merge-patch+json",
			`{"spec":{"size":4,"size":5,"foo":1}}`, 200, "", "",
			[]string{`299 - "duplicate field \"spec.size\""`, `299 - "unknown field \"spec.foo\""`}, 5},
		{"merge patch, Ignore", "PATCH", "/w0?fieldValidation=Ignore", "application/merge-patch+json",
			`{"spec":{"size":7,"foo":1}}`, 200, "", "", nil, 7},
		{"patch, a bogus value is 422", "PATCH", "/w0?fieldValidation=x", "application/merge-patch+json",
			`{}`, 422, resource.ReasonInvalid, `PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "x"`, nil, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "w0"
			path := widgetsNS + tt.path
			if tt.method == "POST" {
				name = "fv" + string(rune('a'+i))
			}
			body := tt.body
			if tt.method != "PATCH" {
				body = fmt.Sprintf(tt.body, name)
			}
			if tt.method == "PUT" {
				rv := f.widget(t, "default", name).ResourceVersion
				body = strings.Replace(body, `"name":"w0"`, `"name":"w0","resourceVersion":"`+rv+`"`, 1)
			}
			var hdr []string
			if tt.ct != "" {
				hdr = []string{"Content-Type", tt.ct}
			}
			r := f.do(t, tt.method, path, "alice", body, hdr...)
			require.Equal(t, tt.code, r.code, "%s", r.body)
			if tt.code >= 300 {
				st := status(t, r)
				assert.Equal(t, tt.reason, st.Reason)
				assert.Contains(t, st.Message, tt.message)
				if tt.code == 422 && tt.method == "PATCH" && tt.path != "/w0?fieldValidation=x" {
					require.NotNil(t, st.Details)
					require.Len(t, st.Details.Causes, 1)
					assert.Equal(t, "patch", st.Details.Causes[0].Field)
					assert.Equal(t, resource.CauseFieldValueInvalid, st.Details.Causes[0].Type)
				}
				return
			}
			assert.ElementsMatch(t, tt.warnings, r.header.Values("Warning"))
			w := f.widget(t, "default", name)
			require.NotNil(t, w)
			assert.Equal(t, tt.size, w.Spec.Size)
		})
	}
}

// TestKubectlFieldValidation runs kubectl's --validate modes against the server:
// strict (kubectl's default) refuses an unknown field, warn prints the server's
// warning and creates, false (Ignore) creates silently.
func TestKubectlFieldValidation(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.Authenticator = nil })
	kubectl := kubectlAgainst(t, f.url)
	dir := t.TempDir()
	file := func(name string) string {
		p := filepath.Join(dir, name+".yaml")
		require.NoError(t, os.WriteFile(p, []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: "+name+
			"\nspec:\n  size: 2\n  color: red\n"), 0o600))
		return p
	}
	out := kubectl(true, "create", "-f", file("strict"))
	assert.Contains(t, out, `unknown field "spec.color"`)
	assert.Nil(t, f.widget(t, "default", "strict"))

	out = kubectl(false, "create", "--validate=warn", "-f", file("warn"))
	assert.Contains(t, out, `Warning: unknown field "spec.color"`)
	assert.Contains(t, out, "widget.example.com/warn created")

	out = kubectl(false, "create", "--validate=false", "-f", file("ignore"))
	assert.NotContains(t, out, "Warning")
	assert.Contains(t, out, "widget.example.com/ignore created")
	assert.NotNil(t, f.widget(t, "default", "ignore"))
}
