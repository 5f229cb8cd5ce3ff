package resource_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func newCodec() *resource.Codec { return resource.NewCodec(nil, resource.CodecOptions{}) }

func kindOf(t *testing.T, c *resource.Codec, kind string) *resource.KindInfo {
	t.Helper()
	k, ok := c.Scheme().KindFor(resource.GroupVersion, kind)
	require.True(t, ok, kind)
	return k
}

// requireReason asserts err is a *StatusError with the reason, and that its message
// contains every fragment.
func requireReason(t *testing.T, err error, reason resource.StatusReason, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	var se *resource.StatusError
	require.True(t, errors.As(err, &se), "not a *StatusError: %T %v", err, err)
	assert.Equal(t, reason, se.ErrStatus.Reason, "message: %s", se.ErrStatus.Message)
	assert.Equal(t, reason.Code(), se.ErrStatus.Code)
	for _, f := range fragments {
		assert.Contains(t, se.ErrStatus.Message, f)
	}
}

func TestCodecOptionsDefaults(t *testing.T) {
	c := newCodec()
	assert.Equal(t, int64(3<<20), c.MaxBytes())
	assert.Equal(t, resource.DefaultMaxDepth, c.MaxDepth())
	assert.NotNil(t, c.Scheme())
	big := resource.NewCodec(resource.NewScheme(), resource.CodecOptions{MaxBytes: 10, MaxDepth: 1 << 20})
	assert.Equal(t, int64(10), big.MaxBytes())
	assert.Equal(t, resource.MaxDepthLimit, big.MaxDepth())
}

func TestDecodeContentTypes(t *testing.T) {
	c := newCodec()
	tests := []struct {
		name string
		body string
		ct   string
	}{
		{"JSON is read as application/json", seedProjectJSON, "application/json"},
		{"a charset parameter is allowed", seedProjectJSON, "application/json; charset=utf-8"},
		{"media types are case-insensitive", seedProjectJSON, "Application/JSON"},
		{"YAML is read as application/yaml", seedProjectYAML, "application/yaml"},
		{"YAML is read as text/yaml", seedProjectYAML, "text/yaml"},
		{"YAML is read as application/x-yaml", seedProjectYAML, "application/x-yaml; charset=UTF-8"},
		{"JSON is also YAML", seedProjectJSON, "application/yaml"},
		{"an empty content type sniffs JSON", "  \n" + seedProjectJSON, ""},
		{"an empty content type sniffs YAML", seedProjectYAML, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := c.Decode([]byte(tc.body), tc.ct, nil)
			require.NoError(t, err)
			p, ok := obj.(*resource.Project)
			require.True(t, ok, "%T", obj)
			assert.Equal(t, resource.TypeMeta{Kind: "Project", APIVersion: resource.GroupVersion}, p.TypeMeta)
			assert.Equal(t, "a", p.Name)
			assert.Equal(t, map[string]string{"app": "web"}, p.Labels)
			assert.Equal(t, "A", p.Spec.DisplayName)
		})
	}
	for _, ct := range []string{"text/plain", "application/xml", "application/json; charset=latin1", "application/vnd.kubernetes.protobuf", "json", ";;"} {
		t.Run("content type "+ct+" is unsupported", func(t *testing.T) {
			_, err := c.Decode([]byte(seedProjectJSON), ct, nil)
			requireReason(t, err, resource.ReasonUnsupportedMediaType)
		})
	}
}

func TestDecodeKindResolution(t *testing.T) {
	c := newCodec()
	project := kindOf(t, c, resource.KindProject)
	migrate := kindOf(t, c, resource.KindProjectMigrateVirtualClusterInstance)
	t.Run("a body without apiVersion and kind takes them from the endpoint", func(t *testing.T) {
		obj, err := c.Decode([]byte("sourceVirtualClusterInstance: {name: vci, namespace: p-old}\n"), "application/yaml", migrate)
		require.NoError(t, err)
		m := obj.(*resource.ProjectMigrateVirtualClusterInstance)
		assert.Equal(t, resource.KindProjectMigrateVirtualClusterInstance, m.Kind)
		assert.Equal(t, resource.GroupVersion, m.APIVersion)
		assert.Equal(t, resource.SourceVirtualClusterInstance{Name: "vci", Namespace: "p-old"}, m.SourceVirtualClusterInstance)
	})
	t.Run("a body with only a kind takes the apiVersion from the endpoint", func(t *testing.T) {
		obj, err := c.Decode([]byte(`{"kind":"Project","metadata":{"name":"a"}}`), "", project)
		require.NoError(t, err)
		assert.Equal(t, resource.GroupVersion, obj.GetTypeMeta().APIVersion)
	})
	t.Run("a matching body is accepted with an endpoint", func(t *testing.T) {
		_, err := c.Decode([]byte(seedProjectJSON), "", project)
		require.NoError(t, err)
	})
	t.Run("an apiVersion that does not match the endpoint is rejected", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v2","kind":"Project"}`), "", project)
		requireReason(t, err, resource.ReasonBadRequest, "management.service/v2", "does not match the expected API version")
	})
	t.Run("a kind that does not match the endpoint is rejected", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v1","kind":"AccessKey"}`), "", project)
		requireReason(t, err, resource.ReasonBadRequest, "AccessKey", "does not match the expected kind (Project)")
	})
	t.Run("a body without apiVersion or kind and no endpoint is rejected", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"metadata":{"name":"a"}}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, "no apiVersion and kind")
	})
	t.Run("a body without a kind and no endpoint is rejected", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v1"}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, "no kind")
	})
	t.Run("an unknown kind is rejected, never guessed", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v1","kind":"Projects"}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, `no kind "Projects" is registered for version "management.service/v1"`)
	})
	t.Run("an unknown apiVersion is rejected, never guessed", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"v1","kind":"Project"}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, `no kind "Project" is registered for version "v1"`)
	})
	t.Run("a kind that is not a string is rejected", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v1","kind":7}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, "kind must be a string")
	})
	t.Run("a list kind is not an object kind", func(t *testing.T) {
		_, err := c.Decode([]byte(`{"apiVersion":"management.service/v1","kind":"ProjectList","items":[]}`), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, "ProjectList")
	})
}

func TestDecodeLenient(t *testing.T) {
	c := newCodec()
	tests := []struct {
		name    string
		body    string
		ct      string
		warned  []string
		display string
	}{
		{"a duplicate JSON key: the last wins, named with its path",
			`{"apiVersion":"management.service/v1","kind":"Project","spec":{"displayName":"a","displayName":"b"}}`, "",
			[]string{`duplicate field "spec.displayName"`}, "b"},
		{"a duplicate YAML key: the last wins, in the YAML library's words",
			"apiVersion: management.service/v1\nkind: Project\nspec:\n  displayName: a\n  displayName: b\n", "application/yaml",
			[]string{`line 5: key "displayName" already set in map`}, "b"},
		{"YAML duplicates come first, then the unknown fields",
			"apiVersion: management.service/v1\nkind: Project\nspec:\n  zz: 1\n  displayName: a\n  displayName: b\n  displayName: c\n",
			"application/yaml",
			[]string{`line 6: key "displayName" already set in map`, `line 7: key "displayName" already set in map`, `unknown field "spec.zz"`}, "c"},
		{"a YAML body without duplicates reports nothing",
			"apiVersion: management.service/v1\nkind: Project\nspec:\n  displayName: a\n", "application/yaml", nil, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, warned, err := c.DecodeLenient([]byte(tc.body), tc.ct, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.warned, warned)
			assert.Equal(t, tc.display, obj.(*resource.Project).Spec.DisplayName)
		})
	}
	t.Run("strict decoding refuses the same YAML body with the same words", func(t *testing.T) {
		_, err := c.Decode([]byte(tests[2].body), tests[2].ct, nil)
		requireReason(t, err, resource.ReasonBadRequest, "strict decoding error: "+strings.Join(tests[2].warned, ", "))
	})
	t.Run("a flood of YAML duplicates is cut short at 20", func(t *testing.T) {
		body := "apiVersion: management.service/v1\nkind: Project\nspec:\n" + strings.Repeat("  displayName: a\n", 50) + "  zz: 1\n"
		_, warned, err := c.DecodeLenient([]byte(body), "application/yaml", nil)
		require.NoError(t, err)
		assert.Len(t, warned, 20)
		assert.Equal(t, `line 5: key "displayName" already set in map`, warned[0])
	})
}

func TestDecodeStrict(t *testing.T) {
	c := newCodec()
	tests := []struct {
		name      string
		body      string
		ct        string
		fragments []string
	}{
		{"an unknown top-level field is named", `{"apiVersion":"management.service/v1","kind":"Project","extra":1}`, "",
			[]string{`strict decoding error: unknown field "extra"`}},
		{"an unknown nested field is named with its path",
			`{"apiVersion":"management.service/v1","kind":"AccessKey","spec":{"scope":{"rules":[{"verbs":[],"verb":"get"}]}}}`, "",
			[]string{`unknown field "spec.scope.rules[0].verb"`}},
		{"field names are case-sensitive", `{"apiVersion":"management.service/v1","kind":"Project","Metadata":{}}`, "",
			[]string{`unknown field "Metadata"`}},
		{"a duplicate JSON key is named with its path", `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a","name":"b"}}`,
			"", []string{`duplicate field "metadata.name"`}},
		{"a duplicate key inside a map is named", `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"labels":{"a":"1","a":"2"}}}`,
			"", []string{`duplicate field "metadata.labels.a"`}},
		{"an escaped duplicate key is still a duplicate", `{"apiVersion":"management.service/v1","kind":"Project","kind":"Project"}`,
			"", []string{`duplicate field "kind"`}},
		{"duplicate and unknown fields are reported together",
			`{"apiVersion":"management.service/v1","kind":"Project","spec":{"x":1,"displayName":"a","displayName":"b"}}`, "",
			[]string{`duplicate field "spec.displayName"`, `unknown field "spec.x"`}},
		{"an unknown YAML field is named with its path", "apiVersion: management.service/v1\nkind: Project\nspec:\n  owner:\n    usr: a\n",
			"application/yaml", []string{`unknown field "spec.owner.usr"`}},
		{"a duplicate YAML key is named", "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: a\n  name: b\n",
			"application/yaml", []string{`key "name" already set`}},
		{"a value of the wrong type is named", `{"apiVersion":"management.service/v1","kind":"AccessKey","spec":{"ttl":"10"}}`, "",
			[]string{"spec.ttl", "cannot use string as int64"}},
		{"an unquoted YAML boolean in a label is rejected with a hint",
			"apiVersion: management.service/v1\nkind: Project\nmetadata:\n  labels:\n    enabled: no\n", "application/yaml",
			[]string{"metadata.labels", "quote the value"}},
		{"a bad timestamp is rejected", `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"creationTimestamp":"yesterday"}}`, "",
			[]string{"RFC 3339"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode([]byte(tc.body), tc.ct, nil)
			requireReason(t, err, resource.ReasonBadRequest, tc.fragments...)
		})
	}
	t.Run("a flood of duplicate fields is cut short at 20", func(t *testing.T) {
		body := `{"apiVersion":"management.service/v1","kind":"Project"` + strings.Repeat(`,"x":1`, 100) + `}`
		_, err := c.Decode([]byte(body), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, `duplicate field "x"`)
		assert.Equal(t, 20, strings.Count(err.Error(), "duplicate field"))
	})
	t.Run("a flood of unknown fields is cut short at 20", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"apiVersion":"management.service/v1","kind":"Project"`)
		for i := range 100 {
			fmt.Fprintf(&b, `,"x%d":1`, i)
		}
		b.WriteString("}")
		_, err := c.Decode([]byte(b.String()), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, `unknown field "x0"`)
		assert.Equal(t, 20, strings.Count(err.Error(), "unknown field"))
	})
	t.Run("quoted YAML scalars stay strings", func(t *testing.T) {
		obj, err := c.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  labels:\n    enabled: \"no\"\n    ver: '1.10'\n"),
			"application/yaml", nil)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"enabled": "no", "ver": "1.10"}, obj.GetObjectMeta().Labels)
	})
	t.Run("benign YAML anchors and aliases are accepted", func(t *testing.T) {
		obj, err := c.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  labels: &l {a: b}\n  annotations: *l\n"),
			"application/yaml", nil)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"a": "b"}, obj.GetObjectMeta().Annotations)
	})
	t.Run("a YAML document end marker is allowed", func(t *testing.T) {
		_, err := c.Decode([]byte("---\n"+seedProjectYAML+"...\n"), "application/yaml", nil)
		require.NoError(t, err)
	})
	t.Run("explicit core YAML tags are accepted", func(t *testing.T) {
		obj, err := c.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  labels:\n    a: !!str 1.10\n"),
			"application/yaml", nil)
		require.NoError(t, err)
		assert.Equal(t, "1.10", obj.GetObjectMeta().Labels["a"])
	})
	t.Run("a YAML tag on a mapping has no effect (the YAML library ignores it)", func(t *testing.T) {
		obj, err := c.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata: !!omap\n  name: a\n"),
			"application/yaml", nil)
		require.NoError(t, err)
		assert.Equal(t, "a", obj.GetObjectMeta().Name)
	})
	t.Run("a nesting depth at the limit is accepted and one more is rejected", func(t *testing.T) {
		small := resource.NewCodec(nil, resource.CodecOptions{MaxDepth: 5})
		// depth: object 1, metadata 2, managedFields 3, entry 4, fieldsV1 5, then 6.
		ok := `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"managedFields":[{"fieldsV1":{}}]}}`
		_, err := small.Decode([]byte(ok), "", nil)
		require.NoError(t, err)
		deep := `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}]}}`
		_, err = small.Decode([]byte(deep), "", nil)
		requireReason(t, err, resource.ReasonBadRequest, "max depth of 5")
		_, err = small.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  managedFields:\n  - fieldsV1:\n      f:a: {}\n"),
			"application/yaml", nil)
		requireReason(t, err, resource.ReasonBadRequest, "max depth of 5")
	})
}

func TestDecodeInto(t *testing.T) {
	c := newCodec()
	t.Run("the Go type names the kind", func(t *testing.T) {
		var p resource.Project
		require.NoError(t, c.DecodeInto([]byte(`{"metadata":{"name":"a"}}`), "application/json", &p))
		assert.Equal(t, "Project", p.Kind)
		assert.Equal(t, "a", p.Name)
	})
	t.Run("the object is replaced, not merged", func(t *testing.T) {
		p := resource.Project{Spec: resource.ProjectSpec{DisplayName: "old"}}
		require.NoError(t, c.DecodeInto([]byte(`{"metadata":{"name":"a"}}`), "", &p))
		assert.Empty(t, p.Spec.DisplayName)
	})
	t.Run("the object is untouched on error", func(t *testing.T) {
		p := resource.Project{Spec: resource.ProjectSpec{DisplayName: "old"}}
		err := c.DecodeInto([]byte(`{"kind":"AccessKey"}`), "", &p)
		requireReason(t, err, resource.ReasonBadRequest)
		assert.Equal(t, "old", p.Spec.DisplayName)
	})
	t.Run("an unregistered Go type is an internal error", func(t *testing.T) {
		type other struct{ resource.Project }
		err := c.DecodeInto([]byte(`{}`), "", &other{})
		requireReason(t, err, resource.ReasonInternalError)
	})
	t.Run("a nil object is an internal error", func(t *testing.T) {
		requireReason(t, c.DecodeInto([]byte(`{}`), "", (*resource.Project)(nil)), resource.ReasonInternalError)
		requireReason(t, c.DecodeInto([]byte(`{}`), "", nil), resource.ReasonInternalError)
	})
}

func TestEncode(t *testing.T) {
	c := newCodec()
	p := &resource.Project{
		TypeMeta:   resource.TypeMeta{Kind: "Project", APIVersion: resource.GroupVersion},
		ObjectMeta: resource.ObjectMeta{Name: "a", Annotations: map[string]string{"n": "<b> & c"}, Labels: map[string]string{"v": "no"}},
	}
	t.Run("JSON is compact and not HTML-escaped", func(t *testing.T) {
		b, err := c.Encode(p, resource.MediaTypeJSON)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"Project","apiVersion":"management.service/v1","metadata":{"name":"a","creationTimestamp":null,`+
			`"labels":{"v":"no"},"annotations":{"n":"<b> & c"}}}`, string(b))
	})
	t.Run("an empty media type is JSON", func(t *testing.T) {
		b, err := c.Encode(p, "")
		require.NoError(t, err)
		assert.True(t, json.Valid(b))
	})
	t.Run("YAML quotes strings YAML would read as something else", func(t *testing.T) {
		b, err := c.Encode(p, "application/yaml; charset=utf-8")
		require.NoError(t, err)
		assert.Equal(t, "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  annotations:\n    \"n\": <b> & c\n"+
			"  creationTimestamp: null\n  labels:\n    v: \"no\"\n  name: a\n", string(b))
	})
	t.Run("an unknown media type is not acceptable", func(t *testing.T) {
		_, err := c.Encode(p, "text/html")
		requireReason(t, err, resource.ReasonNotAcceptable)
	})
	t.Run("a value JSON cannot write is an internal error", func(t *testing.T) {
		_, err := c.Encode(map[string]any{"f": func() {}}, "")
		requireReason(t, err, resource.ReasonInternalError)
	})
	t.Run("a Status encodes as the wire body", func(t *testing.T) {
		b, err := c.Encode(resource.StatusOf(resource.NewBadRequest("x")), "")
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"x","reason":"BadRequest","code":400}`, string(b))
	})
}

func TestRoundTripEveryKind(t *testing.T) {
	c := newCodec()
	for _, obj := range fullObjects() {
		kind := obj.GetTypeMeta().Kind
		for _, mt := range []string{resource.MediaTypeJSON, resource.MediaTypeYAML} {
			t.Run(kind+" round-trips losslessly through "+mt, func(t *testing.T) {
				b, err := c.Encode(obj, mt)
				require.NoError(t, err)
				back, err := c.Decode(b, mt, nil)
				require.NoError(t, err, "%s", b)
				assert.Equal(t, obj, back)
				again, err := c.Encode(back, mt)
				require.NoError(t, err)
				assert.Equal(t, string(b), string(again), "the encoded form is a fixed point")
			})
		}
		t.Run(kind+" round-trips from YAML to JSON", func(t *testing.T) {
			y, err := c.Encode(obj, resource.MediaTypeYAML)
			require.NoError(t, err)
			back, err := c.Decode(y, "", nil)
			require.NoError(t, err)
			j1, err := c.Encode(obj, "")
			require.NoError(t, err)
			j2, err := c.Encode(back, "")
			require.NoError(t, err)
			assert.Equal(t, string(j1), string(j2))
		})
	}
	t.Run("every registered kind has a fixture", func(t *testing.T) {
		have := map[string]bool{}
		for _, o := range fullObjects() {
			have[o.GetTypeMeta().Kind] = true
		}
		for _, k := range c.Scheme().Kinds() {
			assert.True(t, have[k.Kind], k.Kind)
		}
	})
}

func TestReadBody(t *testing.T) {
	c := resource.NewCodec(nil, resource.CodecOptions{MaxBytes: 10})
	t.Run("a body at the limit is read", func(t *testing.T) {
		b, err := c.ReadBody(strings.NewReader("0123456789"))
		require.NoError(t, err)
		assert.Equal(t, "0123456789", string(b))
	})
	t.Run("a body one byte over the limit is too large", func(t *testing.T) {
		_, err := c.ReadBody(strings.NewReader("0123456789a"))
		requireReason(t, err, resource.ReasonRequestEntityTooLarge, "limit is 10 bytes")
	})
	t.Run("no more than limit+1 bytes are read", func(t *testing.T) {
		r := &countingReader{r: strings.NewReader(strings.Repeat("x", 1000))}
		_, err := c.ReadBody(r)
		requireReason(t, err, resource.ReasonRequestEntityTooLarge)
		assert.LessOrEqual(t, r.n, 11)
	})
	t.Run("an http.MaxBytesReader limit is too large", func(t *testing.T) {
		rec := httptest.NewRecorder()
		r := http.MaxBytesReader(rec, io.NopCloser(strings.NewReader("0123456789")), 5)
		_, err := c.ReadBody(r)
		requireReason(t, err, resource.ReasonRequestEntityTooLarge)
	})
	t.Run("a read error is a bad request", func(t *testing.T) {
		_, err := c.ReadBody(iotest.ErrReader(io.ErrUnexpectedEOF))
		requireReason(t, err, resource.ReasonBadRequest)
		assert.True(t, errors.Is(err, io.ErrUnexpectedEOF))
	})
	t.Run("a nil reader is an empty body", func(t *testing.T) {
		b, err := c.ReadBody(nil)
		require.NoError(t, err)
		assert.Empty(t, b)
	})
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestDecodeErrorsWrapTheirCause(t *testing.T) {
	c := newCodec()
	_, err := c.Decode([]byte(`{"apiVersion":`), "application/json", nil)
	requireReason(t, err, resource.ReasonBadRequest)
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
	_, err = c.Decode([]byte(`{"apiVersion":"management.service/v1","kind":"AccessKey","spec":{"ttl":true}}`), "", nil)
	var ute *json.UnmarshalTypeError
	assert.True(t, errors.As(err, &ute), "%v", err)
}

func TestYAMLRoundTripOfAwkwardStrings(t *testing.T) {
	c := newCodec()
	awkward := []string{
		"", " ", " lead", "trail ", "\t", "a\tb\n", "\r\n", "\n\n", "a\n b", strings.Repeat("word ", 100),
		"\x00", "\x01", "\x1b[31m", "\x7f", "\u0085", "\u009f", "\u00a0", "\u200b", "\u2028", "a\u2029b", "\ufeff",
		"\ufffe", "\uffff", "\U0001F600", "\U0010FFFF",
		"null", "~", "yes", "no", "y", "n", "on", "0x1F", "0o17", "1e3", "+1", ".5", "1.10", ".nan", "2024-01-01",
		"=", "<<", "*a", "&a", "!a", "!!binary aGk=", "%a", "@a", "`a", "'", `"`, `a\b`, "{", "}", "[", "]", ",",
		"?", "? a", "- a", "a: b", "#x", "a #b", "|", ">", "---", "...",
	}
	for _, s := range awkward {
		t.Run(fmt.Sprintf("the string %q survives YAML", s), func(t *testing.T) {
			p := &resource.Project{
				TypeMeta:   resource.TypeMeta{Kind: "Project", APIVersion: resource.GroupVersion},
				ObjectMeta: resource.ObjectMeta{Name: "a", Annotations: map[string]string{"k": s, s + "x": "v"}},
				Spec:       resource.ProjectSpec{DisplayName: s},
			}
			y, err := c.Encode(p, resource.MediaTypeYAML)
			require.NoError(t, err)
			back, err := c.Decode(y, resource.MediaTypeYAML, nil)
			require.NoError(t, err, "%s", y)
			assert.Equal(t, p, back)
		})
	}
	t.Run("quoted null and tilde in a YAML body are strings", func(t *testing.T) {
		obj, err := c.Decode([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  annotations:\n    a: \"null\"\n    '~': '~'\n"),
			resource.MediaTypeYAML, nil)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"a": "null", "~": "~"}, obj.GetObjectMeta().Annotations)
	})
}

func TestDecodeJSONSyntax(t *testing.T) {
	c := newCodec()
	wrap := func(v string) string {
		return `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"managedFields":[{"fieldsV1":` + v + `}]}}`
	}
	valid := []string{
		`{}`, `{"a":{}}`, `{"a":[]}`, `{"a":[[],[{}]]}`, `{"a":null,"b":true,"c":false}`,
		`{"n":[0,-0,1,-1,0.5,-0.5,1e3,1E+3,1e-3,12.5e10,123456789012345678901234567890]}`,
		`{"s":["","\"","\\","\/","\b\f\n\r\t","\u00e9\u00E9","é","\ud83d\ude00"]}`,
		" \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
	}
	for _, v := range valid {
		t.Run("valid JSON "+v+" is accepted", func(t *testing.T) {
			_, err := c.Decode([]byte(wrap(v)), "application/json", nil)
			require.NoError(t, err)
		})
	}
	invalid := []string{
		`{"a":tru}`, `{"a":nul}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":+1}`,
		`{"a":"\x"}`, `{"a":"\u12G4"}`, "{\"a\":\"\x01\"}", `{"a" 1}`, `{a:1}`, `{"a":1,}`, `{"a":[1,]}`,
		`{"a":[1 2]}`, `{"a":}`, `{"a":'x'}`, `{"a":NaN}`, `{"a":Infinity}`,
	}
	for _, v := range invalid {
		t.Run("invalid JSON "+v+" is a bad request", func(t *testing.T) {
			require.False(t, json.Valid([]byte(wrap(v))))
			_, err := c.Decode([]byte(wrap(v)), "application/json", nil)
			requireReason(t, err, resource.ReasonBadRequest, "not valid JSON")
		})
	}
	body := []byte(wrap(`{"a":[1,2,{"b":"c"}]}`))
	for i := 1; i < len(body); i++ {
		_, err := c.Decode(body[:i], "application/json", nil)
		if !assert.Error(t, err, "prefix of %d bytes", i) {
			continue
		}
		assert.Equal(t, resource.ReasonBadRequest, resource.ReasonOf(err), "prefix of %d bytes: %v", i, err)
	}
}

func TestCodecIsSafeForConcurrentUse(t *testing.T) {
	c := newCodec()
	objs := fullObjects()
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			var err error
			for i := 0; i < 20 && err == nil; i++ {
				o := objs[(g+i)%len(objs)]
				var b []byte
				if b, err = c.Encode(o, resource.MediaTypeYAML); err == nil {
					_, err = c.Decode(b, "", nil)
				}
			}
			done <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}
