package schema

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func ptr[T any](v T) *T { return &v }

var fullScope = &resource.AccessKeyScope{
	AllowServiceCli: true,
	Projects:        []resource.AccessKeyScopeProject{{Project: "*"}, {Project: "team-a"}},
	Spaces:          []resource.AccessKeyScopeSpace{{Project: "team-a", Space: "*"}},
	VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "team-a", VirtualCluster: "vc-1"}},
	Rules: []resource.AccessKeyScopeRule{{
		Verbs:           []string{"get", "list"},
		Resources:       []resource.GroupResources{{Group: "", Resources: []string{"pods", "pods/log", "*/status", "deployments/*", "*"}}},
		ResourceNames:   []string{"web-0"},
		Namespaces:      []string{"", "p-team-a"},
		NonResourceURLs: []string{"/healthz", "/apis/*"},
		RequestTargets: []resource.RequestTarget{
			resource.RequestTargetManagement, resource.RequestTargetCluster, resource.RequestTargetVirtualCluster,
			resource.RequestTargetProjectSpace, resource.RequestTargetProjectVirtualCluster,
		},
		Cluster:         "cluster-1",
		VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "vc-1", Namespace: "ns-1"}},
	}},
}

// fullObjectMeta sets every field of ObjectMeta, as the store writes them.
func fullObjectMeta(name, namespace string) resource.ObjectMeta {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	return resource.ObjectMeta{
		Name:                       name,
		GenerateName:               name + "-",
		Namespace:                  namespace,
		UID:                        "0b8f7c1e-3d0a-4a55-9a3e-1f0e6c3f8a11",
		ResourceVersion:            "1234",
		Generation:                 2,
		CreationTimestamp:          resource.NewTime(now),
		DeletionTimestamp:          resource.NewTimePtr(now.Add(time.Hour)),
		DeletionGracePeriodSeconds: ptr(int64(30)),
		Labels:                     map[string]string{resource.LabelProject: "team-a", "app": "demo"},
		Annotations:                map[string]string{resource.AnnotationMigratedFrom: "p-old/vc-1", "note": "free text: {}"},
		OwnerReferences: []resource.OwnerReference{
			{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: "team-a", UID: "u-1", Controller: ptr(true), BlockOwnerDeletion: ptr(true)},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u-2", Controller: ptr(false), BlockOwnerDeletion: ptr(false)},
		},
		Finalizers: []string{"foregroundDeletion", "management.service/cleanup"},
		ManagedFields: []resource.ManagedFieldsEntry{{
			Manager:     "kubectl",
			Operation:   resource.ManagedFieldsOperationUpdate,
			APIVersion:  resource.GroupVersion,
			Time:        resource.NewTimePtr(now),
			FieldsType:  resource.FieldsTypeV1,
			FieldsV1:    json.RawMessage(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{}}`),
			Subresource: "status",
		}},
	}
}

// fullObjects returns a value of every built-in kind with every field set.
func fullObjects() map[string]resource.Object {
	tm := func(kind string) resource.TypeMeta {
		return resource.TypeMeta{Kind: kind, APIVersion: resource.GroupVersion}
	}
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	return map[string]resource.Object{
		resource.KindDirectClusterEndpointToken: &resource.DirectClusterEndpointToken{
			TypeMeta:   tm(resource.KindDirectClusterEndpointToken),
			ObjectMeta: fullObjectMeta("tok-1", ""),
			Spec:       resource.DirectClusterEndpointTokenSpec{TTL: 3600, Scope: fullScope},
			Status: resource.DirectClusterEndpointTokenStatus{
				Token:               "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhIn0.c2ln",
				ExpirationTimestamp: resource.NewTimePtr(now.Add(time.Hour)),
			},
		},
		resource.KindProjectMigrateVirtualClusterInstance: &resource.ProjectMigrateVirtualClusterInstance{
			TypeMeta:                     tm(resource.KindProjectMigrateVirtualClusterInstance),
			ObjectMeta:                   fullObjectMeta("move-1", ""),
			SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Name: "vc-1", Namespace: "p-old"},
			Status:                       resource.ProjectMigrateVirtualClusterInstanceStatus{Namespace: "p-team-a", Name: "vc-1", UID: "u-new"},
		},
		resource.KindProject: &resource.Project{
			TypeMeta:   tm(resource.KindProject),
			ObjectMeta: fullObjectMeta("team-a", ""),
			Spec: resource.ProjectSpec{
				DisplayName: "Team A", Description: "d",
				Owner:           &resource.Owner{User: "alice", Team: "a"},
				AllowedClusters: []resource.AllowedCluster{{Name: "*"}, {Name: "cluster-1"}},
			},
		},
		resource.KindVirtualClusterInstance: &resource.VirtualClusterInstance{
			TypeMeta:   tm(resource.KindVirtualClusterInstance),
			ObjectMeta: fullObjectMeta("vc-1", "p-team-a"),
			Spec: resource.VirtualClusterInstanceSpec{
				DisplayName: "VC", Description: "d", Owner: &resource.Owner{User: "bob", Team: "b"},
				ClusterRef:  resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-vc-1", VirtualCluster: "vc-1"},
				TemplateRef: &resource.TemplateRef{Name: "tpl", Version: "1.0.0"},
				Parameters:  "replicas: 1\n",
			},
			Status: resource.VirtualClusterInstanceStatus{
				Phase: resource.InstancePhaseReady, Reason: "Up", Message: "running",
				Conditions: []resource.Condition{{Type: "Ready", Status: "True", LastTransitionTime: resource.NewTimePtr(now), Reason: "Up", Message: "m"}},
			},
		},
		resource.KindAccessKey: &resource.AccessKey{
			TypeMeta:   tm(resource.KindAccessKey),
			ObjectMeta: fullObjectMeta("key-1", ""),
			Spec: resource.AccessKeySpec{
				DisplayName: "K", Description: "d", User: "alice", Team: "a", Subject: "alice",
				Key: "s3cr3t", KeyHash: "sha256:00", Scope: fullScope, TTL: 86400, TokenGeneration: 3,
			},
		},
	}
}

func TestGoValuesOfEveryKindValidate(t *testing.T) {
	reg := NewRegistry()
	for kind, obj := range fullObjects() {
		t.Run(kind+" fully populated", func(t *testing.T) {
			v, ok := reg.Validator(gvkOf(kind))
			require.True(t, ok)
			require.NoError(t, v.Validate(obj))
		})
		t.Run(kind+" zero value with a name", func(t *testing.T) {
			v, _ := reg.Validator(gvkOf(kind))
			zero := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(resource.Object)
			zero.GetObjectMeta().Name = "n"
			if kind == resource.KindProjectMigrateVirtualClusterInstance {
				// both source fields are required and non-empty
				causes := causesOf(t, v.Validate(zero))
				require.ElementsMatch(t, []string{"sourceVirtualClusterInstance.name", "sourceVirtualClusterInstance.namespace"}, fields(causes))
				return
			}
			require.NoError(t, v.Validate(zero), "kind and apiVersion are inferred, everything else is optional")
		})
	}
}

// TestSchemaPropertiesMatchGoFields walks each kind's Go type and its schema side by
// side: every JSON field of the Go type is a property of the schema and vice versa.
func TestSchemaPropertiesMatchGoFields(t *testing.T) {
	set, err := builtins()
	require.NoError(t, err)
	for kind, obj := range fullObjects() {
		t.Run(kind, func(t *testing.T) {
			u := BaseURL + strings.ToLower(kind) + ".json"
			root, ok := set.parsed[u]
			require.True(t, ok, "no document %s", u)
			compareProperties(t, set.parsed, u, root, reflect.TypeOf(obj).Elem(), kind)
		})
	}
}

var (
	timeType = reflect.TypeOf(resource.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// properties returns the properties a schema node declares, following $ref within the
// in-memory documents, and the document each one was declared in.
func properties(t *testing.T, docs map[string]any, docURL string, node any) (map[string]any, map[string]string) {
	t.Helper()
	props := map[string]any{}
	owners := map[string]string{}
	m, _ := node.(map[string]any)
	if m == nil {
		return props, owners
	}
	if ref, ok := m["$ref"].(string); ok {
		base, _ := url.Parse(docURL)
		r, _ := url.Parse(ref)
		abs := base.ResolveReference(r)
		frag := abs.Fragment
		abs.Fragment = ""
		target, ok := lookup(docs[abs.String()], splitPointer(frag))
		require.True(t, ok, "unresolved $ref %s", ref)
		p, o := properties(t, docs, abs.String(), target)
		for k, v := range p {
			props[k], owners[k] = v, o[k]
		}
	}
	if own, ok := m["properties"].(map[string]any); ok {
		for k, v := range own {
			if _, seen := props[k]; !seen {
				props[k], owners[k] = v, docURL
			}
		}
	}
	return props, owners
}

func deref(t *testing.T, docs map[string]any, docURL string, node any) (string, map[string]any) {
	m, _ := node.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok || m["properties"] != nil || m["items"] != nil {
			break
		}
		base, _ := url.Parse(docURL)
		r, _ := url.Parse(ref)
		abs := base.ResolveReference(r)
		frag := abs.Fragment
		abs.Fragment = ""
		docURL = abs.String()
		target, _ := lookup(docs[docURL], splitPointer(frag))
		m, _ = target.(map[string]any)
	}
	return docURL, m
}

func compareProperties(t *testing.T, docs map[string]any, docURL string, node any, typ reflect.Type, path string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == timeType || typ == rawType:
		return
	case typ.Kind() == reflect.Slice:
		docURL, m := deref(t, docs, docURL, node)
		require.NotNil(t, m, "%s: no schema for the list", path)
		compareProperties(t, docs, docURL, m["items"], typ.Elem(), path+"[]")
		return
	case typ.Kind() != reflect.Struct:
		return
	}
	props, owners := properties(t, docs, docURL, node)
	goFields := map[string]reflect.Type{}
	collectJSONFields(typ, goFields)
	var goNames, schemaNames []string
	for n := range goFields {
		goNames = append(goNames, n)
	}
	for n := range props {
		schemaNames = append(schemaNames, n)
	}
	sort.Strings(goNames)
	sort.Strings(schemaNames)
	require.Equal(t, goNames, schemaNames, "%s: Go fields and schema properties differ", path)
	for n, ft := range goFields {
		compareProperties(t, docs, owners[n], props[n], ft, path+"."+n)
	}
}

func collectJSONFields(typ reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct { // inline
			collectJSONFields(f.Type, out)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
}

// TestValidDocumentsDecodeStrictly checks the other direction on the table documents:
// what the schema accepts, the Go types decode with unknown fields disallowed.
func TestValidDocumentsDecodeStrictly(t *testing.T) {
	docs := map[string]string{
		resource.KindDirectClusterEndpointToken:           with(t, tokenFullScope, "metadata", json.RawMessage(fullMeta)),
		resource.KindProjectMigrateVirtualClusterInstance: with(t, migrateMinimal, "status", map[string]any{"namespace": "p", "name": "n", "uid": "u"}),
		resource.KindProject:                              with(t, projectMinimal, "spec", map[string]any{"displayName": "x", "owner": map[string]any{"user": "u"}, "allowedClusters": []any{map[string]any{"name": "*"}}}),
		resource.KindVirtualClusterInstance:               with(t, instanceMinimal, "status.conditions", []any{map[string]any{"type": "Ready", "status": "True"}}),
		resource.KindAccessKey:                            with(t, accessKeyMinimal, "spec.scope", json.RawMessage(`{"rules":[{"verbs":["get"]}]}`)),
	}
	for kind, doc := range docs {
		t.Run(kind, func(t *testing.T) {
			require.NoError(t, validatorOf(t, kind).ValidateJSON([]byte(doc)))
			obj := resource.NewScheme()
			info, ok := obj.KindFor(resource.GroupVersion, kind)
			require.True(t, ok)
			dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(info.New()))
		})
	}
}
