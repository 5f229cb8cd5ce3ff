package resource_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// fuzzContentTypes are the content types FuzzDecode picks from with its selector byte.
var fuzzContentTypes = []string{
	"", "application/json", "application/yaml", "text/yaml", "application/x-yaml",
	"application/json; charset=utf-8", "application/yaml;charset=UTF-8", "text/plain",
}

// semanticJSON decodes JSON into plain Go values for comparisons that ignore key order.
func semanticJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func FuzzDecode(f *testing.F) {
	for _, o := range fullObjects() {
		b, err := json.Marshal(o)
		require.NoError(f, err)
		f.Add(b, uint8(1))
		f.Add(b, uint8(0))
	}
	for _, s := range []string{seedProjectJSON, seedTokenJSON} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(2))
	}
	for _, s := range []string{seedProjectYAML, seedMigrateYAML} {
		f.Add([]byte(s), uint8(2))
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte("kind: Project\nmetadata:\n  name: a\n  labels: {a: b}\n"), uint8(2|1<<4))
	f.Add([]byte("a: &x [1, *x]\n"), uint8(2))
	f.Add([]byte("metadata: {name: !!binary aGk=}\n"), uint8(2|3<<4))
	f.Add([]byte(`{"metadata":{"name":"a","name":"b"}}`), uint8(1|3<<4))
	f.Add([]byte("a: 1\n---\nb: 2\n"), uint8(2))
	// Strings YAML reads differently from JSON: raw DEL and NEL, and quoted "null".
	f.Add([]byte("{\"apiVersion\":\"management.service/v1\",\"kind\":\"Project\",\"metadata\":{\"annotations\":{\"a\":\"\x7f\u0085\",\"b\":\"null\"}}}"), uint8(1))
	f.Add([]byte("apiVersion: management.service/v1\nkind: Project\nmetadata:\n  annotations: {a: \"null\", '~': '~'}\n"), uint8(2))
	f.Add([]byte(`{"kind":"Project","metadata":{"managedFields":[{"fieldsV1":{"a":1e400,"b":-0,"c":1.0}}]}}`), uint8(1|3<<4))

	codec := resource.NewCodec(nil, resource.CodecOptions{MaxBytes: 1 << 16})
	kinds := codec.Scheme().Kinds()
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		ct := fuzzContentTypes[int(sel&0x0f)%len(fuzzContentTypes)]
		var expected *resource.KindInfo
		if k := int(sel >> 4); k > 0 && k <= len(kinds) {
			expected = kinds[k-1]
		}
		obj, err := codec.Decode(data, ct, expected)
		// The lenient decoder accepts what the strict one does, reporting nothing, and
		// refuses only what it refuses for a reason other than unknown or duplicate
		// fields.
		lobj, unknown, lerr := codec.DecodeLenient(data, ct, expected)
		switch {
		case err == nil:
			require.NoError(t, lerr)
			require.Empty(t, unknown)
			require.Equal(t, obj, lobj)
		case strings.HasPrefix(err.Error(), "strict decoding error: ") && lerr == nil:
			require.NotEmpty(t, unknown)
			require.True(t, strings.HasPrefix(err.Error(), "strict decoding error: "+strings.Join(unknown, ", ")) ||
				len(unknown) >= 20, "strict %q, lenient %q", err, unknown)
		case lerr == nil:
			require.Failf(t, "lenient decoding accepted what strict decoding refuses", "%v", err)
		}
		if err != nil {
			var se *resource.StatusError
			require.True(t, errors.As(err, &se), "error is not a *StatusError: %T %v", err, err)
			if strings.Contains(se.ErrStatus.Message, "not valid JSON") && len(data) <= 1<<16 {
				// The byte scanner must not be stricter than encoding/json.
				require.False(t, json.Valid(data), "valid JSON refused: %v", err)
			}
			switch se.ErrStatus.Reason {
			case resource.ReasonBadRequest, resource.ReasonRequestEntityTooLarge, resource.ReasonUnsupportedMediaType:
			default:
				require.Failf(t, "unexpected reason", "%q: %v", se.ErrStatus.Reason, err)
			}
			return
		}
		tm := obj.GetTypeMeta()
		k, ok := codec.Scheme().KindFor(tm.APIVersion, tm.Kind)
		require.True(t, ok, "decoded kind %s %s is not registered", tm.APIVersion, tm.Kind)
		if expected != nil {
			require.Same(t, expected, k)
		}

		// JSON: the encoded form is a fixed point.
		j1, err := codec.Encode(obj, resource.MediaTypeJSON)
		require.NoError(t, err)
		obj2, err := codec.Decode(j1, resource.MediaTypeJSON, nil)
		require.NoError(t, err, "re-decoding %s", j1)
		j2, err := codec.Encode(obj2, resource.MediaTypeJSON)
		require.NoError(t, err)
		require.Equal(t, string(j1), string(j2))

		// YAML: encoding and decoding again gives the same object.
		y1, err := codec.Encode(obj, resource.MediaTypeYAML)
		require.NoError(t, err)
		obj3, err := codec.Decode(y1, resource.MediaTypeYAML, nil)
		require.NoError(t, err, "re-decoding YAML:\n%s", y1)
		j3, err := codec.Encode(obj3, resource.MediaTypeJSON)
		require.NoError(t, err)
		require.Equal(t, semanticJSON(t, j1), semanticJSON(t, j3), "YAML round trip changed the object:\n%s", y1)
	})
}

// referenceSubdomain is the DNS-1123 subdomain regex the name validator must agree with.
var (
	referenceSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	referenceLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{
		"a", "my-name", "a.b.c", "0", "-a", "a-", ".", "..", "a/b", "a%2Fb", "a\x00b", "A",
		"a..b", strings.Repeat("a", 253), strings.Repeat("a", 254), "p-" + strings.Repeat("x", 61), "é",
	} {
		f.Add(s)
	}
	p := resource.NewPath("metadata", "name")
	f.Fuzz(func(t *testing.T, s string) {
		nameOK := len(resource.ValidateName(s, p)) == 0
		refOK := len(s) <= resource.MaxNameLength && referenceSubdomain.MatchString(s)
		assert.Equal(t, refOK, nameOK, "ValidateName(%q)", s)
		if nameOK {
			assert.False(t, s == "." || s == ".." || strings.ContainsAny(s, "/%\x00"), "accepted %q", s)
		}

		nsOK := len(resource.ValidateNamespaceName(s, p)) == 0
		assert.Equal(t, len(s) <= resource.MaxNamespaceLength && referenceLabel.MatchString(s), nsOK,
			"ValidateNamespaceName(%q)", s)

		genOK := len(resource.ValidateGenerateName(s, p)) == 0
		if genOK {
			assert.False(t, strings.ContainsAny(s, "/%\x00"), "generateName accepted %q", s)
			// The store cuts the prefix and appends 5 characters: that name must be valid.
			prefix := s
			if len(prefix) > resource.MaxGeneratedNamePrefixLength {
				prefix = prefix[:resource.MaxGeneratedNamePrefixLength]
			}
			assert.Empty(t, resource.ValidateName(prefix+"x2b4z", p), "prefix %q", prefix)
		}
		if nameOK {
			assert.True(t, genOK, "a valid name %q must be a valid generateName", s)
		}
	})
}

func FuzzParseLabelSelector(f *testing.F) {
	for _, s := range []string{
		"", "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x, y)", "a", "!a", "a,b=c,!d",
		"x/y=z", "example.com/key in ()", "a in (,b)", " a = b , c ", "in", "in in (in)",
		"a=b,", "a in (b", "!a=b", "a=b c", "a=" + strings.Repeat("v", 64), "a>1", "b < -2", "a>x", "a<",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := resource.ParseLabelSelector(s)
		if err != nil {
			var se *resource.StatusError
			require.True(t, errors.As(err, &se), "error is not a *StatusError: %T", err)
			require.Equal(t, resource.ReasonBadRequest, se.ErrStatus.Reason)
			return
		}
		canonical := sel.String()
		again, err := resource.ParseLabelSelector(canonical)
		require.NoError(t, err, "String() %q of %q does not parse", canonical, s)
		require.True(t, sel.Equal(again), "%q -> %q -> %q", s, canonical, again.String())
		require.Equal(t, canonical, again.String())
		require.Equal(t, sel.Empty(), canonical == "")
	})
}
