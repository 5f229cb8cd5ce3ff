package resource_test

import (
	"encoding/json"
	"time"

	"github.com/management-service/mgmt/resource"
)

func ptr[T any](v T) *T { return &v }

var fixtureTime = resource.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))

// fullMeta returns metadata with every field set.
func fullMeta(namespace string) resource.ObjectMeta {
	return resource.ObjectMeta{
		Name:                       "full",
		GenerateName:               "full-",
		Namespace:                  namespace,
		UID:                        "6f1c7d52-2a4e-4c8e-9f0a-1b2c3d4e5f60",
		ResourceVersion:            "42",
		Generation:                 3,
		CreationTimestamp:          fixtureTime,
		DeletionTimestamp:          resource.NewTimePtr(fixtureTime.Add(time.Hour)),
		DeletionGracePeriodSeconds: ptr(int64(30)),
		Labels:                     map[string]string{"app": "web", "management.service/project": "a"},
		Annotations:                map[string]string{"note": "free <form> & text: yes"},
		OwnerReferences: []resource.OwnerReference{{
			APIVersion: resource.GroupVersion, Kind: "Project", Name: "a", UID: "u-1",
			Controller: ptr(true), BlockOwnerDeletion: ptr(false),
		}},
		Finalizers: []string{"management.service/cleanup"},
		ManagedFields: []resource.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: resource.ManagedFieldsOperationUpdate,
			APIVersion: resource.GroupVersion, Time: resource.NewTimePtr(fixtureTime.Time),
			FieldsType: resource.FieldsTypeV1,
			FieldsV1:   json.RawMessage(`{"f:metadata":{"f:labels":{"f:app":{}}}}`),
		}},
	}
}

func fullScope() *resource.AccessKeyScope {
	return &resource.AccessKeyScope{
		AllowServiceCli: true,
		Projects:        []resource.AccessKeyScopeProject{{Project: "*"}},
		Spaces:          []resource.AccessKeyScopeSpace{{Project: "a", Space: "s"}},
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "*"}},
		Rules: []resource.AccessKeyScopeRule{{
			Verbs:           []string{"get", "list"},
			Resources:       []resource.GroupResources{{Group: "", Resources: []string{"pods", "pods/log"}}},
			ResourceNames:   []string{"p1"},
			Namespaces:      []string{"default", ""},
			NonResourceURLs: []string{"/healthz", "/api/*"},
			RequestTargets:  []resource.RequestTarget{resource.RequestTargetCluster},
			Cluster:         "c1",
			VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "v", Namespace: "n"}},
		}},
	}
}

// fullObjects returns one object of every built-in kind with every field set and its
// TypeMeta filled in, as Decode returns them.
func fullObjects() []resource.Object {
	tm := func(kind string) resource.TypeMeta {
		return resource.TypeMeta{Kind: kind, APIVersion: resource.GroupVersion}
	}
	return []resource.Object{
		&resource.DirectClusterEndpointToken{
			TypeMeta:   tm(resource.KindDirectClusterEndpointToken),
			ObjectMeta: fullMeta(""),
			Spec:       resource.DirectClusterEndpointTokenSpec{TTL: 3600, Scope: fullScope()},
			Status: resource.DirectClusterEndpointTokenStatus{
				Token: "eyJhbGciOiJFZERTQSJ9.e30.c2ln", ExpirationTimestamp: resource.NewTimePtr(fixtureTime.Add(time.Hour)),
			},
		},
		&resource.ProjectMigrateVirtualClusterInstance{
			TypeMeta:                     tm(resource.KindProjectMigrateVirtualClusterInstance),
			ObjectMeta:                   fullMeta(""),
			SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Name: "vci", Namespace: "p-old"},
			Status:                       resource.ProjectMigrateVirtualClusterInstanceStatus{Namespace: "p-new", Name: "vci", UID: "u-2"},
		},
		&resource.Project{
			TypeMeta:   tm(resource.KindProject),
			ObjectMeta: fullMeta(""),
			Spec: resource.ProjectSpec{
				DisplayName: "Project A", Description: "the first",
				Owner:           &resource.Owner{User: "alice", Team: "core"},
				AllowedClusters: []resource.AllowedCluster{{Name: "*"}, {Name: "c1"}},
			},
		},
		&resource.VirtualClusterInstance{
			TypeMeta:   tm(resource.KindVirtualClusterInstance),
			ObjectMeta: fullMeta("p-a"),
			Spec: resource.VirtualClusterInstanceSpec{
				DisplayName: "VCI", Description: "an instance",
				Owner:       &resource.Owner{User: "bob"},
				ClusterRef:  resource.ClusterRef{Cluster: "c1", Namespace: "vc-ns", VirtualCluster: "vc"},
				TemplateRef: &resource.TemplateRef{Name: "t", Version: "1.10"},
				Parameters:  "replicas: 2\nenabled: no\n",
			},
			Status: resource.VirtualClusterInstanceStatus{
				Phase: resource.InstancePhaseReady, Reason: "Up", Message: "running",
				Conditions: []resource.Condition{{
					Type: "Ready", Status: "True", LastTransitionTime: resource.NewTimePtr(fixtureTime.Time),
					Reason: "Up", Message: "ok",
				}},
			},
		},
		&resource.AccessKey{
			TypeMeta:   tm(resource.KindAccessKey),
			ObjectMeta: fullMeta(""),
			Spec: resource.AccessKeySpec{
				DisplayName: "key", Description: "a key", User: "alice", Team: "core",
				Subject: "user:alice", Key: "s3cr3t", KeyHash: "sha256:abc", Scope: fullScope(),
				TTL: 86400, TokenGeneration: 2,
			},
		},
	}
}

// Seed bodies for decode tests and fuzzing.
var (
	seedProjectJSON = `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a","labels":{"app":"web"}},"spec":{"displayName":"A"}}`
	seedProjectYAML = "apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: a\n  labels:\n    app: web\nspec:\n  displayName: A\n"
	seedMigrateYAML = "apiVersion: management.service/v1\nkind: ProjectMigrateVirtualClusterInstance\n" +
		"metadata:\n  name: move\nsourceVirtualClusterInstance:\n  name: vci\n  namespace: p-old\n"
	seedTokenJSON = `{"apiVersion":"management.service/v1","kind":"DirectClusterEndpointToken","metadata":{"generateName":"t-"},` +
		`"spec":{"ttl":600,"scope":{"projects":[{"project":"*"}],"rules":[{"verbs":["get"],"resources":[{"group":"","resources":["pods/*"]}]}]}}}`
)
