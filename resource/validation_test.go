package resource_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// wantErr is the expected shape of one field error; an empty wantErr list means valid.
type wantErr struct {
	typ    resource.CauseType
	field  string
	detail string // a substring of the error body; may be empty
}

func assertErrors(t *testing.T, got resource.ErrorList, want []wantErr) {
	t.Helper()
	if len(want) == 0 {
		assert.Empty(t, got)
		return
	}
	require.Len(t, got, len(want), "errors: %v", got.ToAggregate())
	for i, w := range want {
		assert.Equal(t, w.typ, got[i].Type, "error %d: %v", i, got[i])
		assert.Equal(t, w.field, got[i].Field, "error %d: %v", i, got[i])
		if w.detail != "" {
			assert.Contains(t, got[i].ErrorBody(), w.detail, "error %d", i)
		}
	}
}

func invalid(field, detail string) wantErr {
	return wantErr{typ: resource.CauseFieldValueInvalid, field: field, detail: detail}
}

func TestValidateName(t *testing.T) {
	p := resource.NewPath("metadata", "name")
	const f = "metadata.name"
	tests := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{"a lowercase name is valid", "my-name", nil},
		{"a dotted subdomain is valid", "a.b-c.d0", nil},
		{"a single digit is valid", "0", nil},
		{"a name of 253 characters is valid", strings.Repeat("a", 253), nil},
		{"an empty name is required", "", []wantErr{{resource.CauseFieldValueRequired, f, ""}}},
		{"a name of 254 characters is invalid", strings.Repeat("a", 254), []wantErr{invalid(f, "no more than 253 characters")}},
		{"an uppercase name is invalid", "MyName", []wantErr{invalid(f, "RFC 1123 subdomain")}},
		{"an underscore is invalid", "a_b", []wantErr{invalid(f, "RFC 1123 subdomain")}},
		{"a leading dash is invalid", "-a", []wantErr{invalid(f, "RFC 1123 subdomain")}},
		{"a trailing dash is invalid", "a-", []wantErr{invalid(f, "RFC 1123 subdomain")}},
		{"an empty label between dots is invalid", "a..b", []wantErr{invalid(f, "RFC 1123 subdomain")}},
		{"a dot alone is invalid", ".", []wantErr{invalid(f, "may not be '.'"), invalid(f, "RFC 1123")}},
		{"two dots are invalid", "..", []wantErr{invalid(f, "may not be '..'"), invalid(f, "RFC 1123")}},
		{"a slash is invalid", "a/b", []wantErr{invalid(f, "may not contain '/'"), invalid(f, "RFC 1123")}},
		{"a percent escape is invalid", "a%2Fb", []wantErr{invalid(f, "may not contain '%'"), invalid(f, "RFC 1123")}},
		{"a NUL byte is invalid", "a\x00b", []wantErr{invalid(f, "may not contain NUL"), invalid(f, "RFC 1123")}},
		{"a non-ASCII letter is invalid", "é", []wantErr{invalid(f, "RFC 1123")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateName(tc.value, p), tc.want)
		})
	}
}

func TestValidateNamespaceName(t *testing.T) {
	p := resource.NewPath("metadata", "namespace")
	const f = "metadata.namespace"
	tests := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{"a DNS label is valid", "p-project", nil},
		{"a namespace of 63 characters is valid", strings.Repeat("n", 63), nil},
		{"an empty namespace is required", "", []wantErr{{resource.CauseFieldValueRequired, f, ""}}},
		{"a namespace of 64 characters is invalid", strings.Repeat("n", 64), []wantErr{invalid(f, "no more than 63 characters")}},
		{"an uppercase namespace is invalid", "Prod", []wantErr{invalid(f, "RFC 1123 label")}},
		{"a dot in a namespace is invalid", "a.b", []wantErr{invalid(f, "RFC 1123 label")}},
		{"a slash in a namespace is invalid", "a/b", []wantErr{invalid(f, "'/'"), invalid(f, "RFC 1123 label")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateNamespaceName(tc.value, p), tc.want)
		})
	}
}

func TestValidateGenerateName(t *testing.T) {
	p := resource.NewPath("metadata", "generateName")
	const f = "metadata.generateName"
	tests := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{"a prefix ending in a dash is valid", "token-", nil},
		{"a prefix without a dash is valid", "token", nil},
		{"a prefix longer than 58 characters is valid because it is cut", strings.Repeat("a", 100) + "-", nil},
		{"an empty prefix is required", "", []wantErr{{resource.CauseFieldValueRequired, f, ""}}},
		{"a dash alone is invalid", "-", []wantErr{invalid(f, "RFC 1123")}},
		{"a prefix ending in two dashes is valid", "a--", nil},
		{"a prefix ending in a dot is invalid", "a.", []wantErr{invalid(f, "RFC 1123")}},
		{"a prefix ending in dot and dash is invalid", "0.-", []wantErr{invalid(f, "names generated from this prefix would not be valid")}},
		{"an uppercase prefix is invalid", "Token-", []wantErr{invalid(f, "RFC 1123")}},
		{"a slash in a prefix is invalid", "a/-", []wantErr{invalid(f, "'/'"), invalid(f, "RFC 1123")}},
		{"a percent in a prefix is invalid", "a%-", []wantErr{invalid(f, "'%'"), invalid(f, "RFC 1123")}},
		{"a prefix of 254 characters is invalid", strings.Repeat("a", 254), []wantErr{invalid(f, "no more than 253")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateGenerateName(tc.value, p), tc.want)
		})
	}
}

func TestValidateLabelKeyAndValue(t *testing.T) {
	p := resource.NewPath("metadata", "labels")
	const f = "metadata.labels"
	keys := []struct {
		name string
		key  string
		want []wantErr
	}{
		{"a plain key is valid", "app", nil},
		{"a prefixed key is valid", "management.service/project", nil},
		{"a key with upper case, dots and underscores is valid", "My_Key.v1", nil},
		{"a key name of 63 characters is valid", strings.Repeat("k", 63), nil},
		{"an empty key is invalid", "", []wantErr{invalid(f, "name part must be non-empty")}},
		{"a key name of 64 characters is invalid", strings.Repeat("k", 64), []wantErr{invalid(f, "no more than 63")}},
		{"an empty prefix is invalid", "/app", []wantErr{invalid(f, "prefix part must be non-empty")}},
		{"an empty name after the prefix is invalid", "example.com/", []wantErr{invalid(f, "name part must be non-empty")}},
		{"a label key prefix of 254 characters is invalid", strings.Repeat("p", 254) + "/app",
			[]wantErr{invalid(f, "prefix part must be no more than 253")}},
		{"an uppercase prefix is invalid", "Example.com/app", []wantErr{invalid(f, "prefix part a lowercase RFC 1123")}},
		{"two slashes are invalid", "a/b/c", []wantErr{invalid(f, "qualified name")}},
		{"a key ending in a dash is invalid", "app-", []wantErr{invalid(f, "name part must consist")}},
		{"a space in a key is invalid", "my app", []wantErr{invalid(f, "name part must consist")}},
	}
	for _, tc := range keys {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateLabelKey(tc.key, p), tc.want)
		})
	}
	values := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{"an empty label value is valid", "", nil},
		{"a label value with dots, dashes and underscores is valid", "v1.2_3-rc", nil},
		{"a label value of 63 characters is valid", strings.Repeat("v", 63), nil},
		{"a label value longer than 63 is invalid", strings.Repeat("v", 64), []wantErr{invalid(f, "no more than 63")}},
		{"a label value starting with a dash is invalid", "-v", []wantErr{invalid(f, "a valid label must")}},
		{"a label value with a slash is invalid", "a/b", []wantErr{invalid(f, "a valid label must")}},
		{"a label value with a space is invalid", "a b", []wantErr{invalid(f, "a valid label must")}},
	}
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateLabelValue(tc.value, p), tc.want)
		})
	}
}

func TestValidateLabels(t *testing.T) {
	p := resource.NewPath("metadata", "labels")
	tests := []struct {
		name   string
		labels map[string]string
		want   []wantErr
	}{
		{"nil labels are valid", nil, nil},
		{"good labels are valid", map[string]string{"app": "web", "management.service/project": "a", "empty": ""}, nil},
		{"a bad key and a bad value are both reported, in key order", map[string]string{"b": "-bad", "a_b": "ok", "a/b/c": "x"},
			[]wantErr{invalid("metadata.labels", "qualified name"), invalid("metadata.labels", "a valid label")}},
		{"a label value longer than 63 is invalid", map[string]string{"app": strings.Repeat("x", 64)},
			[]wantErr{invalid("metadata.labels", "no more than 63")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateLabels(tc.labels, p), tc.want)
		})
	}
}

func TestValidateAnnotations(t *testing.T) {
	p := resource.NewPath("metadata", "annotations")
	const f = "metadata.annotations"
	tests := []struct {
		name string
		a    map[string]string
		want []wantErr
	}{
		{"free-form values are valid", map[string]string{"note": "any text: {}\n\t!"}, nil},
		{"keys are checked after lowercasing", map[string]string{"Example.COM/Key": "v"}, nil},
		{"a key with a space is invalid", map[string]string{"my note": "v"}, []wantErr{invalid(f, "name part must consist")}},
		{"annotations of exactly 256 KiB are valid", map[string]string{"k": strings.Repeat("v", resource.MaxAnnotationsTotalBytes-1)}, nil},
		{"annotations over 256 KiB in total are too long", map[string]string{
			"a": strings.Repeat("v", resource.MaxAnnotationsTotalBytes/2),
			"b": strings.Repeat("v", resource.MaxAnnotationsTotalBytes/2),
		}, []wantErr{{resource.CauseFieldValueTooLong, f, "262144"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateAnnotations(tc.a, p), tc.want)
		})
	}
}

func TestValidateFinalizers(t *testing.T) {
	p := resource.NewPath("metadata", "finalizers")
	tests := []struct {
		name string
		f    []string
		want []wantErr
	}{
		{"domain-qualified finalizers are valid", []string{"management.service/cleanup", "orphan"}, nil},
		{"a bad finalizer is reported at its index", []string{"ok", "bad name"},
			[]wantErr{invalid("metadata.finalizers[1]", "name part must consist")}},
		{"a duplicate finalizer is reported at the later index", []string{"a/b", "c", "a/b"},
			[]wantErr{{resource.CauseFieldValueDuplicate, "metadata.finalizers[2]", `"a/b"`}}},
		{"orphan and foregroundDeletion together are invalid", []string{resource.FinalizerOrphan, resource.FinalizerForegroundDeletion},
			[]wantErr{invalid("metadata.finalizers", "cannot be both set")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateFinalizers(tc.f, p), tc.want)
		})
	}
}

func TestValidateOwnerReferences(t *testing.T) {
	p := resource.NewPath("metadata", "ownerReferences")
	good := resource.OwnerReference{APIVersion: resource.GroupVersion, Kind: "Project", Name: "a", UID: "u1"}
	ctrl := func(name string) resource.OwnerReference {
		r := good
		r.Name, r.Controller = name, ptr(true)
		return r
	}
	tests := []struct {
		name string
		refs []resource.OwnerReference
		want []wantErr
	}{
		{"a complete reference is valid", []resource.OwnerReference{good}, nil},
		{"a core version without a group is valid", []resource.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "a", UID: "u"}}, nil},
		{"one controller is valid", []resource.OwnerReference{ctrl("a"), good}, nil},
		{"every missing field is required at its path", []resource.OwnerReference{good, {}}, []wantErr{
			{resource.CauseFieldValueRequired, "metadata.ownerReferences[1].apiVersion", ""},
			{resource.CauseFieldValueRequired, "metadata.ownerReferences[1].kind", ""},
			{resource.CauseFieldValueRequired, "metadata.ownerReferences[1].name", ""},
			{resource.CauseFieldValueRequired, "metadata.ownerReferences[1].uid", ""},
		}},
		{"a missing uid is required", []resource.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "a"}},
			[]wantErr{{resource.CauseFieldValueRequired, "metadata.ownerReferences[0].uid", "uid must not be empty"}}},
		{"an apiVersion with two slashes is invalid", []resource.OwnerReference{{APIVersion: "a/b/v1", Kind: "X", Name: "a", UID: "u"}},
			[]wantErr{invalid("metadata.ownerReferences[0].apiVersion", "group/version")}},
		{"an apiVersion without a version is invalid", []resource.OwnerReference{{APIVersion: "group/", Kind: "X", Name: "a", UID: "u"}},
			[]wantErr{invalid("metadata.ownerReferences[0].apiVersion", "version must not be empty")}},
		{"two controllers are invalid", []resource.OwnerReference{ctrl("a"), ctrl("b")},
			[]wantErr{invalid("metadata.ownerReferences", "Only one reference can have Controller set to true")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateOwnerReferences(tc.refs, p), tc.want)
		})
	}
}

func TestValidateManagedFields(t *testing.T) {
	p := resource.NewPath("metadata", "managedFields")
	entry := func(mod func(*resource.ManagedFieldsEntry)) []resource.ManagedFieldsEntry {
		e := resource.ManagedFieldsEntry{
			Manager: "kubectl", Operation: resource.ManagedFieldsOperationUpdate, APIVersion: resource.GroupVersion,
			FieldsType: resource.FieldsTypeV1, FieldsV1: json.RawMessage(`{"f:spec":{}}`),
		}
		if mod != nil {
			mod(&e)
		}
		return []resource.ManagedFieldsEntry{e}
	}
	const f = "metadata.managedFields[0]"
	tests := []struct {
		name string
		m    []resource.ManagedFieldsEntry
		want []wantErr
	}{
		{"an Update entry is valid", entry(nil), nil},
		{"an Apply entry without fields is valid", entry(func(e *resource.ManagedFieldsEntry) {
			e.Operation, e.FieldsType, e.FieldsV1 = resource.ManagedFieldsOperationApply, "", nil
		}), nil},
		{"a null fieldsV1 is valid", entry(func(e *resource.ManagedFieldsEntry) { e.FieldsV1 = json.RawMessage("null") }), nil},
		{"an empty operation is required", entry(func(e *resource.ManagedFieldsEntry) { e.Operation = "" }),
			[]wantErr{{resource.CauseFieldValueRequired, f + ".operation", ""}}},
		{"an unknown operation is not supported", entry(func(e *resource.ManagedFieldsEntry) { e.Operation = "Patch" }),
			[]wantErr{{resource.CauseFieldValueNotSupported, f + ".operation", `"Apply", "Update"`}}},
		{"a fieldsType other than FieldsV1 is not supported", entry(func(e *resource.ManagedFieldsEntry) { e.FieldsType = "FieldsV2" }),
			[]wantErr{{resource.CauseFieldValueNotSupported, f + ".fieldsType", `"FieldsV1"`}}},
		{"a manager of 129 characters is too long", entry(func(e *resource.ManagedFieldsEntry) { e.Manager = strings.Repeat("m", 129) }),
			[]wantErr{{resource.CauseFieldValueTooLong, f + ".manager", "128"}}},
		{"a manager with a control character is invalid", entry(func(e *resource.ManagedFieldsEntry) { e.Manager = "a	b" }),
			[]wantErr{invalid(f+".manager", "printable")}},
		{"a subresource of 257 characters is too long", entry(func(e *resource.ManagedFieldsEntry) { e.Subresource = strings.Repeat("s", 257) }),
			[]wantErr{{resource.CauseFieldValueTooLong, f + ".subresource", "256"}}},
		{"a fieldsV1 that is an array is invalid", entry(func(e *resource.ManagedFieldsEntry) { e.FieldsV1 = json.RawMessage(`[1]`) }),
			[]wantErr{invalid(f+".fieldsV1", "must be a JSON object")}},
		{"a fieldsV1 that is not JSON is invalid", entry(func(e *resource.ManagedFieldsEntry) { e.FieldsV1 = json.RawMessage(`{"a":`) }),
			[]wantErr{invalid(f+".fieldsV1", "must be a JSON object")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateManagedFields(tc.m, p), tc.want)
		})
	}
}

func TestValidateObjectMeta(t *testing.T) {
	p := resource.NewPath("metadata")
	tests := []struct {
		name       string
		meta       resource.ObjectMeta
		namespaced bool
		want       []wantErr
	}{
		{"a name alone is valid for a cluster-scoped kind", resource.ObjectMeta{Name: "a"}, false, nil},
		{"a generateName alone is valid", resource.ObjectMeta{GenerateName: "a-"}, false, nil},
		{"an empty namespace is valid for a namespaced kind", resource.ObjectMeta{Name: "a"}, true, nil},
		{"a namespace is valid for a namespaced kind", resource.ObjectMeta{Name: "a", Namespace: "p-a"}, true, nil},
		{"name or generateName is required", resource.ObjectMeta{}, false,
			[]wantErr{{resource.CauseFieldValueRequired, "metadata.name", "name or generateName is required"}}},
		{"a bad name is invalid at metadata.name", resource.ObjectMeta{Name: "Bad_Name"}, false,
			[]wantErr{invalid("metadata.name", "RFC 1123 subdomain")}},
		{"a bad generateName is invalid at metadata.generateName", resource.ObjectMeta{GenerateName: "Bad-"}, false,
			[]wantErr{invalid("metadata.generateName", "RFC 1123 subdomain")}},
		{"a namespace on a cluster-scoped kind is forbidden", resource.ObjectMeta{Name: "a", Namespace: "ns"}, false,
			[]wantErr{{resource.CauseFieldValueForbidden, "metadata.namespace", "not allowed on this type"}}},
		{"an uppercase namespace is invalid", resource.ObjectMeta{Name: "a", Namespace: "NS"}, true,
			[]wantErr{invalid("metadata.namespace", "RFC 1123 label")}},
		{"a negative generation is invalid", resource.ObjectMeta{Name: "a", Generation: -1}, false,
			[]wantErr{invalid("metadata.generation", "greater than or equal to 0")}},
		{"every section is checked with its path", resource.ObjectMeta{
			Name:            "a",
			Labels:          map[string]string{"app": "-"},
			Annotations:     map[string]string{"bad key": ""},
			Finalizers:      []string{"x", "x"},
			OwnerReferences: []resource.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "n"}},
			ManagedFields:   []resource.ManagedFieldsEntry{{Manager: "m"}},
		}, false, []wantErr{
			invalid("metadata.labels", "a valid label"),
			invalid("metadata.annotations", "name part"),
			{resource.CauseFieldValueDuplicate, "metadata.finalizers[1]", ""},
			{resource.CauseFieldValueRequired, "metadata.ownerReferences[0].uid", ""},
			{resource.CauseFieldValueRequired, "metadata.managedFields[0].operation", ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, resource.ValidateObjectMeta(&tc.meta, tc.namespaced, p), tc.want)
		})
	}
	t.Run("nil metadata is required", func(t *testing.T) {
		assertErrors(t, resource.ValidateObjectMeta(nil, false, p), []wantErr{{resource.CauseFieldValueRequired, "metadata", ""}})
	})
	t.Run("errors become a 422 Invalid status with one cause per error", func(t *testing.T) {
		errs := resource.ValidateObjectMeta(&resource.ObjectMeta{Name: "Bad_Name", Namespace: "x"}, false, p)
		k, ok := resource.NewScheme().KindFor(resource.GroupVersion, resource.KindProject)
		require.True(t, ok)
		st := resource.StatusOf(resource.NewInvalid(k, "Bad_Name", errs))
		assert.Equal(t, int32(422), st.Code)
		assert.Equal(t, resource.ReasonInvalid, st.Reason)
		require.Len(t, st.Details.Causes, 2)
		assert.Equal(t, "metadata.name", st.Details.Causes[0].Field)
		assert.Equal(t, resource.CauseFieldValueInvalid, st.Details.Causes[0].Type)
		assert.Equal(t, "metadata.namespace", st.Details.Causes[1].Field)
		assert.Contains(t, st.Message, `Project.management.service "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": `)
	})
}
