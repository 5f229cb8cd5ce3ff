package resource_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// billionLaughs is the classic alias bomb: 9 levels, each a list of 9 aliases to the
// level below (about 430 bytes).
const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

const mib = 1 << 20

// projectYAML is a valid Project body with extra metadata lines (indented two spaces).
func projectYAML(metadata string) string {
	return "apiVersion: management.service/v1\nkind: Project\nmetadata:\n" + metadata
}

func projectJSON(metadata string) string {
	return `{"apiVersion":"management.service/v1","kind":"Project","metadata":` + metadata + `}`
}

// decodeAndValidate is what a create handler does with a body: decode it, then
// validate its metadata; a validation failure is 422 Invalid.
func decodeAndValidate(c *resource.Codec, body, ct string, expected *resource.KindInfo) error {
	obj, err := c.Decode([]byte(body), ct, expected)
	if err != nil {
		return err
	}
	k, err := c.Scheme().KindOf(obj)
	if err != nil {
		return err
	}
	meta := obj.GetObjectMeta()
	if errs := resource.ValidateObjectMeta(meta, k.Namespaced, resource.NewPath("metadata")); len(errs) > 0 {
		return resource.NewInvalid(k, meta.Name, errs)
	}
	return nil
}

// TestBadInputCorpus covers every row of reliability-security §4.8 that reaches the
// decoder or the validators, each with the Status reason it must get.
func TestBadInputCorpus(t *testing.T) {
	c := newCodec()
	vci := kindOf(t, c, resource.KindVirtualClusterInstance)
	project := kindOf(t, c, resource.KindProject)
	// A 3 MiB + 1 body for the size rows.
	oversize := projectJSON(`{"name":"a","annotations":{"x":"` + strings.Repeat("x", 3*mib) + `"}}`)

	tests := []struct {
		name      string
		run       func() error
		reason    resource.StatusReason
		fragments []string
	}{
		// Size.
		{"a body over 3 MiB is too large when read", func() error {
			_, err := c.ReadBody(strings.NewReader(oversize))
			return err
		}, resource.ReasonRequestEntityTooLarge, []string{"limit is 3145728 bytes"}},
		{"a chunked body over 3 MiB without a length is too large", func() error {
			_, err := c.ReadBody(io.MultiReader(strings.NewReader(oversize[:mib]), strings.NewReader(oversize[mib:])))
			return err
		}, resource.ReasonRequestEntityTooLarge, nil},
		{"a body cut off by http.MaxBytesReader is too large", func() error {
			r := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(oversize)), 3*mib)
			_, err := c.ReadBody(r)
			return err
		}, resource.ReasonRequestEntityTooLarge, nil},
		{"a body over 3 MiB is too large when decoded", func() error {
			_, err := c.Decode([]byte(oversize), "application/json", nil)
			return err
		}, resource.ReasonRequestEntityTooLarge, nil},
		{"YAML aliases that expand past 3 MiB are too large", func() error {
			big := strings.Repeat("x", mib)
			body := projectYAML("  annotations:\n    a: &x " + big + "\n    b: *x\n    c: *x\n    d: *x\n")
			_, err := c.Decode([]byte(body), "application/yaml", nil)
			return err
		}, resource.ReasonRequestEntityTooLarge, []string{"JSON form exceeds"}},

		// Malformed input.
		{"truncated JSON is a bad request", func() error {
			_, err := c.Decode([]byte(seedProjectJSON[:len(seedProjectJSON)-5]), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"not valid JSON", "unexpected EOF"}},
		{"truncated YAML is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels: {a: b\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"not valid YAML"}},
		{"invalid JSON syntax is a bad request", func() error {
			_, err := c.Decode([]byte(`{"apiVersion" "v1"}`), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"not valid JSON", "at byte"}},
		{"trailing data after the JSON object is a bad request", func() error {
			_, err := c.Decode([]byte(seedProjectJSON+`{}`), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"after the top-level object"}},
		{"an empty body is a bad request", func() error {
			_, err := c.Decode(nil, "application/json", project)
			return err
		}, resource.ReasonBadRequest, []string{"empty"}},
		{"an empty YAML body is a bad request", func() error {
			_, err := c.Decode([]byte("# nothing\n"), "application/yaml", project)
			return err
		}, resource.ReasonBadRequest, []string{"empty"}},
		{"a body that is not an object is a bad request", func() error {
			_, err := c.Decode([]byte("- a\n- b\n"), "", project)
			return err
		}, resource.ReasonBadRequest, []string{"must be an object, got a sequence"}},
		{"a JSON array body is a bad request", func() error {
			_, err := c.Decode([]byte(`[]`), "application/json", project)
			return err
		}, resource.ReasonBadRequest, []string{"must be an object, got an array"}},
		{"tabs in YAML indentation are a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("\tname: a\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"not valid YAML"}},
		{"invalid UTF-8 in JSON is a bad request", func() error {
			_, err := c.Decode([]byte(projectJSON("{\"name\":\"a\xff\"}")), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"UTF-8"}},
		{"invalid UTF-8 in YAML is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: a\xc3\x28\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"UTF-8"}},

		// Decoder bombs.
		{"billion-laughs YAML is a bad request", func() error {
			_, err := c.Decode([]byte(billionLaughs), "application/yaml", project)
			return err
		}, resource.ReasonBadRequest, []string{"excessive aliasing"}},
		{"1 MiB of [ in JSON is a bad request", func() error {
			_, err := c.Decode([]byte(`{"a":`+strings.Repeat("[", mib)), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"max depth of 100"}},
		{"1 MiB of { in JSON is a bad request", func() error {
			_, err := c.Decode([]byte(strings.Repeat(`{"a":`, mib/5)), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"max depth of 100"}},
		{"1 MiB of [ in YAML is a bad request", func() error {
			_, err := c.Decode([]byte("a: "+strings.Repeat("[", mib)), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"exceeded max depth"}},
		{"1 MiB of { in YAML is a bad request", func() error {
			_, err := c.Decode([]byte("a: "+strings.Repeat("{", mib)), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"exceeded max depth"}},
		{"1 MiB of '- ' in YAML is a bad request", func() error {
			_, err := c.Decode([]byte(strings.Repeat("- ", mib/2)), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"exceeded max depth"}},
		{"YAML nested past the codec's depth is a bad request", func() error {
			_, err := c.Decode([]byte("a: "+strings.Repeat("[", 200)+strings.Repeat("]", 200)), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"max depth of 100"}},

		// Strictness.
		{"a multi-document YAML body is a bad request", func() error {
			_, err := c.Decode([]byte(seedProjectYAML+"---\n"+seedProjectYAML), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"more than one YAML document"}},
		{"an empty second YAML document is a bad request", func() error {
			_, err := c.Decode([]byte(seedProjectYAML+"---\n"), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"more than one YAML document"}},
		{"an invalid second YAML document is a bad request", func() error {
			_, err := c.Decode([]byte(seedProjectYAML+"---\n[\n"), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"more than one YAML document"}},
		{"a duplicate JSON key is a bad request", func() error {
			_, err := c.Decode([]byte(projectJSON(`{"name":"a","name":"b"}`)), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{`duplicate field "metadata.name"`}},
		{"a duplicate YAML key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: a\n  name: b\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{`"name" already set`}},
		{"an unknown JSON field is a bad request", func() error {
			_, err := c.Decode([]byte(projectJSON(`{"name":"a","nmae":"b"}`)), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{`unknown field "metadata.nmae"`}},
		{"an unknown YAML field is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: a\nspec:\n  displayname: x\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{`unknown field "spec.displayname"`}},
		{"an integer YAML map key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    1: a\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"metadata.labels: map key 1 is a number"}},
		{"a boolean YAML map key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    yes: a\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"is a boolean"}},
		{"a null YAML map key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    ~: a\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"is null"}},
		{"a complex YAML map key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    ? [a]\n    : b\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, nil},
		{"a !!binary YAML tag is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: !!binary aGk=\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"YAML tag !!binary is not allowed"}},
		{"a custom YAML tag is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: !vault secret/a\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"YAML tag !vault is not allowed"}},
		{"a YAML tag on a scalar inside a sequence is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  finalizers:\n  - a\n  - !!python/str b\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"!!python/str"}},
		{"a YAML tag on a map key is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    !k a: b\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"!k"}},
		{"unquoted no in a label is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    enabled: no\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"cannot use bool as string"}},
		{"unquoted on in a label is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    power: on\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"cannot use bool as string"}},
		{"unquoted 1.10 in a label is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  labels:\n    ver: 1.10\n")), "application/yaml", nil)
			return err
		}, resource.ReasonBadRequest, []string{"cannot use number as string"}},
		{".nan in YAML is a bad request", func() error {
			_, err := c.Decode([]byte(projectYAML("  name: a\nspec:\n  ttl: .nan\n")), "application/yaml", kindOf(t, c, resource.KindAccessKey))
			return err
		}, resource.ReasonBadRequest, []string{"no JSON form"}},

		{"a JSON number out of the float64 range is a bad request", func() error {
			_, err := c.Decode([]byte(projectJSON(`{"managedFields":[{"fieldsV1":{"f:a":1e400}}]}`)), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"metadata.managedFields[0].fieldsV1.f:a: the number 1e400 is out of range"}},

		// Kinds.
		{"a body without apiVersion and kind and no endpoint is a bad request", func() error {
			_, err := c.Decode([]byte(`{"metadata":{"name":"a"}}`), "application/json", nil)
			return err
		}, resource.ReasonBadRequest, []string{"no apiVersion and kind"}},
		{"an unknown apiVersion is a bad request", func() error {
			_, err := c.Decode([]byte(`{"apiVersion":"management.service/v9","kind":"Project"}`), "", nil)
			return err
		}, resource.ReasonBadRequest, []string{"is registered"}},
		{"a body apiVersion other than the endpoint's is a bad request", func() error {
			_, err := c.Decode([]byte(`{"apiVersion":"other/v1","kind":"Project"}`), "", project)
			return err
		}, resource.ReasonBadRequest, []string{"does not match"}},
		{"an unsupported content type is unsupported", func() error {
			_, err := c.Decode([]byte(seedProjectJSON), "application/xml", nil)
			return err
		}, resource.ReasonUnsupportedMediaType, []string{"application/xml"}},

		// Names and metadata: decoded fine, then refused by validation.
		{"an empty name is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":""}`), "", nil)
		}, resource.ReasonInvalid, []string{"name or generateName is required"}},
		{"a name of 254 characters is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"`+strings.Repeat("a", 254)+`"}`), "", nil)
		}, resource.ReasonInvalid, []string{"no more than 253"}},
		{"an uppercase name is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"Bad_Name"}`), "", nil)
		}, resource.ReasonInvalid, []string{"metadata.name"}},
		{"a name with a slash is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"a/b"}`), "", nil)
		}, resource.ReasonInvalid, []string{"may not contain '/'"}},
		{"the name .. is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":".."}`), "", nil)
		}, resource.ReasonInvalid, []string{"may not be '..'"}},
		{"a name with %2F is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"a%2Fb"}`), "", nil)
		}, resource.ReasonInvalid, []string{"may not contain '%'"}},
		{"a name with NUL is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"a\u0000b"}`), "", nil)
		}, resource.ReasonInvalid, []string{"may not contain NUL"}},
		{"a name with a leading dash is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"-a"}`), "", nil)
		}, resource.ReasonInvalid, []string{"RFC 1123 subdomain"}},
		{"a namespace of 64 characters is invalid", func() error {
			return decodeAndValidate(c, `{"metadata":{"name":"a","namespace":"`+strings.Repeat("n", 64)+`"}}`, "", vci)
		}, resource.ReasonInvalid, []string{"metadata.namespace", "no more than 63"}},
		{"an uppercase namespace is invalid", func() error {
			return decodeAndValidate(c, `{"metadata":{"name":"a","namespace":"Prod"}}`, "", vci)
		}, resource.ReasonInvalid, []string{"metadata.namespace"}},
		{"a label value of 64 characters is invalid", func() error {
			return decodeAndValidate(c, projectYAML("  name: a\n  labels:\n    app: "+strings.Repeat("v", 64)+"\n"), "", nil)
		}, resource.ReasonInvalid, []string{"metadata.labels", "no more than 63"}},
		{"a label key prefix of 254 characters is invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"a","labels":{"`+strings.Repeat("p", 254)+`/app":"x"}}`), "", nil)
		}, resource.ReasonInvalid, []string{"prefix part must be no more than 253"}},
		{"annotations over 256 KiB are invalid", func() error {
			return decodeAndValidate(c, projectJSON(`{"name":"a","annotations":{"a":"`+strings.Repeat("x", 256*1024)+`"}}`), "", nil)
		}, resource.ReasonInvalid, []string{"metadata.annotations", "Too long"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.run()
			elapsed := time.Since(start)
			requireReason(t, err, tc.reason, tc.fragments...)
			assert.Less(t, elapsed, 5*time.Second, "took %v", elapsed)
		})
	}
}

func TestBillionLaughsIsFast(t *testing.T) {
	c := newCodec()
	require.Less(t, len(billionLaughs), 450)
	start := time.Now()
	_, err := c.Decode([]byte(billionLaughs), "application/yaml", nil)
	elapsed := time.Since(start)
	requireReason(t, err, resource.ReasonBadRequest, "excessive aliasing")
	t.Logf("billion laughs rejected in %v", elapsed)
	// The anchor is < 10 ms; allow for a loaded machine and the race detector.
	assert.Less(t, elapsed, time.Second)
}
