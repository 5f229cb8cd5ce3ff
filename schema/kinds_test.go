package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/management-service/mgmt/resource"
)

// Server-populated metadata, in the forms the store writes.
const fullMeta = `{
  "name": "tok-1",
  "uid": "0b8f7c1e-3d0a-4a55-9a3e-1f0e6c3f8a11",
  "resourceVersion": "42",
  "generation": 3,
  "creationTimestamp": "2024-05-01T10:00:00Z",
  "deletionTimestamp": "2024-05-02T10:00:00Z",
  "deletionGracePeriodSeconds": 30,
  "labels": {"app": "demo", "example.com/tier": "Front_end.1", "empty": ""},
  "annotations": {"example.com/note": "anything at all: {}[]", "n": ""},
  "ownerReferences": [
    {"apiVersion": "management.service/v1", "kind": "Project", "name": "p", "uid": "u1", "controller": true, "blockOwnerDeletion": true},
    {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u2", "controller": false}
  ],
  "finalizers": ["foregroundDeletion", "example.com/cleanup"],
  "managedFields": [
    {"manager": "kubectl", "operation": "Update", "apiVersion": "management.service/v1", "time": "2024-05-01T10:00:00Z",
     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ttl": {}, "f:scope": {".": {}, "f:rules": {}}}}},
    {"manager": "ctl", "operation": "Apply", "fieldsType": "FieldsV1", "subresource": "status",
     "fieldsV1": {"f:metadata": {"f:labels": {"k:{\"name\":\"a\"}": {}, "v:\"x\"": {}, "i:0": {}}}}}
  ]
}`

const tokenMinimal = `{"apiVersion": "management.service/v1", "kind": "DirectClusterEndpointToken", "metadata": {"name": "tok"}}`

const tokenFullScope = `{
  "apiVersion": "management.service/v1",
  "kind": "DirectClusterEndpointToken",
  "metadata": {"name": "tok", "creationTimestamp": null},
  "spec": {
    "ttl": 3600,
    "scope": {
      "allowServiceCli": true,
      "projects": [{"project": "*"}, {"project": "team-a"}],
      "spaces": [{"project": "team-a", "space": "*"}],
      "virtualClusters": [{"project": "team-a", "virtualCluster": "vc-1"}],
      "rules": [{
        "verbs": ["get", "list", "*"],
        "resources": [
          {"group": "", "resources": ["pods", "pods/log", "*", "deployments/*", "*/status"]},
          {"group": "management.service"},
          {"group": "*"}
        ],
        "resourceNames": ["web-0", "system:admin", "..a"],
        "namespaces": ["", "p-team-a", "*"],
        "nonResourceURLs": ["/healthz", "/apis/*", "*", "/"],
        "requestTargets": ["Management", "Cluster", "VirtualCluster", "ProjectSpace", "ProjectVirtualCluster"],
        "cluster": "cluster-1",
        "virtualClusters": [{"name": "vc-1", "namespace": "ns"}, {}, {"name": "*", "namespace": "*"}]
      }, {}]
    }
  },
  "status": {"token": "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl", "expirationTimestamp": "2024-05-02T10:00:00+02:00"}
}`

func TestDirectClusterEndpointTokenSchema(t *testing.T) {
	m := tokenMinimal
	full := with(t, tokenFullScope, "metadata", json.RawMessage(fullMeta))
	runKindTable(t, resource.KindDirectClusterEndpointToken,
		[]validCase{
			{"a minimal token", m},
			{"generateName instead of name", with(t, with(t, m, "metadata.name", remove), "metadata.generateName", "tok-")},
			{"an empty spec", with(t, m, "spec", map[string]any{})},
			{"a scope using every field and wildcard form", tokenFullScope},
			{"every server-populated metadata field", full},
			{"kind and apiVersion inferred when absent", with(t, with(t, m, "kind", remove), "apiVersion", remove)},
			{"ttl 0 (the issuer default)", with(t, m, "spec.ttl", 0)},
			{"the largest int64 ttl", with(t, m, "spec.ttl", json.Number("9223372036854775807"))},
			{"null timestamps", with(t, with(t, m, "metadata.deletionTimestamp", nil), "status.expirationTimestamp", nil)},
			{"a 253-character name", with(t, m, "metadata.name", strings.Repeat("a", 63)+"."+strings.Repeat("b", 63)+"."+strings.Repeat("c", 63)+"."+strings.Repeat("d", 61))},
			{"an empty namespace", with(t, m, "metadata.namespace", "")},
			{"a managedFields entry without fieldsType and a null fieldsV1", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Apply", "fieldsV1": nil}})},
			{"an owner reference in any group/version form", with(t, m, "metadata.ownerReferences", []any{map[string]any{"apiVersion": "Example.COM/V1", "kind": "A", "name": "a", "uid": "1"}})},
		},
		[]invalidCase{
			{"an upper-case name", with(t, m, "metadata.name", "Tok"), "metadata.name", "RFC 1123 subdomain"},
			{"a 254-character name", with(t, m, "metadata.name", strings.Repeat("a", 254)), "metadata.name", "at most 253"},
			{"a name with a slash", with(t, m, "metadata.name", "a/b"), "metadata.name", ""},
			{"the name ..", with(t, m, "metadata.name", ".."), "metadata.name", ""},
			{"a percent-encoded name", with(t, m, "metadata.name", "a%2Fb"), "metadata.name", ""},
			{"a name starting with -", with(t, m, "metadata.name", "-a"), "metadata.name", ""},
			{"an empty name", with(t, m, "metadata.name", ""), "metadata.name", ""},
			{"neither name nor generateName", with(t, m, "metadata.name", remove), "metadata.name", "name or generateName is required"},
			{"a bad generateName", with(t, m, "metadata.generateName", "Tok-"), "metadata.generateName", ""},
			{"a namespace on a cluster-scoped kind", with(t, m, "metadata.namespace", "default"), "metadata.namespace", "cluster-scoped"},
			{"an unknown top-level field", with(t, m, "extra", 1), "extra", "unknown field"},
			{"an unknown metadata field", with(t, m, "metadata.selfLink", "/x"), "metadata.selfLink", "unknown field"},
			{"an unknown spec field", with(t, m, "spec.lifetime", 1), "spec.lifetime", "unknown field"},
			{"an unknown scope field", with(t, m, "spec.scope.clusters", []any{}), "spec.scope.clusters", "unknown field"},
			{"another kind", with(t, m, "kind", "Project"), "kind", `"DirectClusterEndpointToken"`},
			{"another apiVersion", with(t, m, "apiVersion", "management.service/v2"), "apiVersion", "management.service/v1"},
			{"metadata that is not an object", with(t, m, "metadata", "tok"), "metadata", "must be of type object"},
			{"a string ttl", with(t, m, "spec.ttl", "1h"), "spec.ttl", "must be of type integer"},
			{"a fractional ttl", with(t, m, "spec.ttl", 1.5), "spec.ttl", "integer"},
			{"a negative ttl", with(t, m, "spec.ttl", -1), "spec.ttl", "greater than or equal to 0"},
			{"a ttl beyond int64", with(t, m, "spec.ttl", json.Number("9223372036854775808")), "spec.ttl", "less than or equal to"},
			{"a verb with an embedded wildcard", with(t, m, "spec.scope.rules", []any{map[string]any{"verbs": []any{"get", "get*"}}}), "spec.scope.rules[0].verbs[1]", "wildcard only as the whole value"},
			{"an upper-case verb", with(t, m, "spec.scope.rules", []any{map[string]any{"verbs": []any{"GET"}}}), "spec.scope.rules[0].verbs[0]", ""},
			{"a wildcard in the middle of a URL", with(t, m, "spec.scope.rules", []any{map[string]any{"nonResourceURLs": []any{"/apis/*/v1"}}}), "spec.scope.rules[0].nonResourceURLs[0]", "final path step"},
			{"a wildcard that is not a whole path step", with(t, m, "spec.scope.rules", []any{map[string]any{"nonResourceURLs": []any{"/healthz", "/healthz*"}}}), "spec.scope.rules[0].nonResourceURLs[1]", ""},
			{"a URL without a leading slash", with(t, m, "spec.scope.rules", []any{map[string]any{"nonResourceURLs": []any{"apis"}}}), "spec.scope.rules[0].nonResourceURLs[0]", ""},
			{"an unknown request target", with(t, m, "spec.scope.rules", []any{map[string]any{"requestTargets": []any{"Cluster", "Space"}}}), "spec.scope.rules[0].requestTargets[1]", `supported values: "Management"`},
			{"resourceNames without resources", with(t, m, "spec.scope.rules", []any{map[string]any{"resourceNames": []any{"a"}}}), "spec.scope.rules[0].resources", "resources must be specified when resourceNames is"},
			{"resourceNames with empty resources", with(t, m, "spec.scope.rules", []any{map[string]any{"resourceNames": []any{"a"}, "resources": []any{}}}), "spec.scope.rules[0].resources", ""},
			{"a resource name with a slash", with(t, m, "spec.scope.rules", []any{map[string]any{"resources": []any{map[string]any{"resources": []any{"pods"}}}, "resourceNames": []any{"a/b"}}}), "spec.scope.rules[0].resourceNames[0]", ""},
			{"a partial resource wildcard", with(t, m, "spec.scope.rules", []any{map[string]any{"resources": []any{map[string]any{"resources": []any{"pods", "pod*"}}}}}), "spec.scope.rules[0].resources[0].resources[1]", ""},
			{"a */* resource", with(t, m, "spec.scope.rules", []any{map[string]any{"resources": []any{map[string]any{"resources": []any{"*/*"}}}}}), "spec.scope.rules[0].resources[0].resources[0]", ""},
			{"an unknown group-resources field", with(t, m, "spec.scope.rules", []any{map[string]any{"resources": []any{map[string]any{"apiGroups": []any{""}}}}}), "spec.scope.rules[0].resources[0].apiGroups", "unknown field"},
			{"an upper-case rule namespace", with(t, m, "spec.scope.rules", []any{map[string]any{"namespaces": []any{"Team"}}}), "spec.scope.rules[0].namespaces[0]", ""},
			{"a wildcard inside a cluster name", with(t, m, "spec.scope.rules", []any{map[string]any{"cluster": "prod-*"}}), "spec.scope.rules[0].cluster", ""},
			{"a bad rule virtual cluster", with(t, m, "spec.scope.rules", []any{map[string]any{"virtualClusters": []any{map[string]any{"name": "A"}}}}), "spec.scope.rules[0].virtualClusters[0].name", ""},
			{"a project wildcard that is not the whole value", with(t, m, "spec.scope.projects", []any{map[string]any{"project": "team-*"}}), "spec.scope.projects[0].project", "'*' is a wildcard only as the whole value"},
			{"a project entry without project", with(t, m, "spec.scope.projects", []any{map[string]any{}}), "spec.scope.projects[0].project", "Required value"},
			{"a space entry without space", with(t, m, "spec.scope.spaces", []any{map[string]any{"project": "a"}}), "spec.scope.spaces[0].space", "Required value"},
			{"an empty virtual cluster", with(t, m, "spec.scope.virtualClusters", []any{map[string]any{"project": "a", "virtualCluster": ""}}), "spec.scope.virtualClusters[0].virtualCluster", ""},
			{"a non-boolean allowServiceCli", with(t, m, "spec.scope.allowServiceCli", "yes"), "spec.scope.allowServiceCli", "boolean"},
			{"a malformed token", with(t, m, "status.token", "not a token"), "status.token", "JWS compact"},
			{"an unknown status field", with(t, m, "status.phase", "Ready"), "status.phase", "unknown field"},
			{"a malformed expirationTimestamp", with(t, m, "status.expirationTimestamp", "tomorrow"), "status.expirationTimestamp", "RFC 3339"},
			{"an impossible creationTimestamp", with(t, m, "metadata.creationTimestamp", "2024-13-01T00:00:00Z"), "metadata.creationTimestamp", "RFC 3339"},
			{"an empty-string timestamp", with(t, m, "metadata.creationTimestamp", ""), "metadata.creationTimestamp", ""},
			{"a numeric timestamp", with(t, m, "metadata.deletionTimestamp", 1700000000), "metadata.deletionTimestamp", "must be of type string or null"},
			{"a non-decimal resourceVersion", with(t, m, "metadata.resourceVersion", "abc"), "metadata.resourceVersion", "decimal"},
			{"a negative generation", with(t, m, "metadata.generation", -1), "metadata.generation", ""},
			{"a string generation", with(t, m, "metadata.generation", "1"), "metadata.generation", "integer"},
			{"a grace period without deletionTimestamp", with(t, m, "metadata.deletionGracePeriodSeconds", 30), "metadata.deletionTimestamp", "Required value"},
			{"a negative grace period", with(t, with(t, m, "metadata.deletionTimestamp", "2024-05-02T10:00:00Z"), "metadata.deletionGracePeriodSeconds", -5), "metadata.deletionGracePeriodSeconds", ""},
			{"a bad label key", with(t, m, "metadata.labels", map[string]any{"Bad Key": "v"}), "metadata.labels[Bad Key]", `"Bad Key"`},
			{"a label key prefix over 253 characters", with(t, m, "metadata.labels", map[string]any{strings.Repeat("a", 254) + "/x": "v"}), "metadata.labels[" + strings.Repeat("a", 254) + "/x]", "prefix"},
			{"a label name over 63 characters", with(t, m, "metadata.labels", map[string]any{strings.Repeat("a", 64): "v"}), "metadata.labels[" + strings.Repeat("a", 64) + "]", ""},
			{"a 64-character label value", with(t, m, "metadata.labels", map[string]any{"app": strings.Repeat("v", 64)}), "metadata.labels[app]", "at most 63"},
			{"a label value with a space", with(t, m, "metadata.labels", map[string]any{"app": "a b"}), "metadata.labels[app]", "label value"},
			{"a non-string label value", with(t, m, "metadata.labels", map[string]any{"app": true}), "metadata.labels[app]", "string"},
			{"a non-string annotation", with(t, m, "metadata.annotations", map[string]any{"example.com/a": 1}), "metadata.annotations[example.com/a]", "string"},
			{"a bad annotation key", with(t, m, "metadata.annotations", map[string]any{"a/b/c": "x"}), "metadata.annotations[a/b/c]", ""},
			{"a bad finalizer", with(t, m, "metadata.finalizers", []any{"ok", "not ok"}), "metadata.finalizers[1]", ""},
			{"a repeated finalizer", with(t, m, "metadata.finalizers", []any{"a", "b", "a"}), "metadata.finalizers[2]", `Duplicate value: "a"`},
			{"both orphan and foregroundDeletion", with(t, m, "metadata.finalizers", []any{"orphan", "x", "foregroundDeletion"}), "metadata.finalizers", "finalizers orphan and foregroundDeletion cannot be both set"},
			{"a FieldsV1 '.' that is not {}", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsV1": map[string]any{".": map[string]any{"f:a": map[string]any{}}}}}), "metadata.managedFields[0].fieldsV1[.]", "must be {}"},
			{"a FieldsV1 that is not an object", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsV1": []any{}}}), "metadata.managedFields[0].fieldsV1", "must be of type object or null"},
			{"a nested FieldsV1 null", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsV1": map[string]any{"f:a": nil}}}), "metadata.managedFields[0].fieldsV1[f:a]", "must be of type object"},
			{"a managedFields subresource over 256 characters", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "subresource": strings.Repeat("s", 257)}}), "metadata.managedFields[0].subresource", "at most 256"},
			{"a managedFields manager over 128 characters", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "manager": strings.Repeat("m", 129)}}), "metadata.managedFields[0].manager", "at most 128"},
			{"two controller owner references", with(t, m, "metadata.ownerReferences", []any{
				map[string]any{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": true},
				map[string]any{"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": true},
			}), "metadata.ownerReferences", "at most one ownerReference may have controller: true"},
			{"an owner reference without uid", with(t, m, "metadata.ownerReferences", []any{map[string]any{"apiVersion": "v1", "kind": "A", "name": "a"}}), "metadata.ownerReferences[0].uid", "Required value"},
			{"an owner reference with an empty name", with(t, m, "metadata.ownerReferences", []any{map[string]any{"apiVersion": "v1", "kind": "A", "name": "", "uid": "1"}}), "metadata.ownerReferences[0].name", "Required value"},
			{"an owner reference with a bad apiVersion", with(t, m, "metadata.ownerReferences", []any{map[string]any{"apiVersion": "a/b/c", "kind": "A", "name": "a", "uid": "1"}}), "metadata.ownerReferences[0].apiVersion", ""},
			{"an owner reference with an unknown field", with(t, m, "metadata.ownerReferences", []any{map[string]any{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "namespace": "x"}}), "metadata.ownerReferences[0].namespace", "unknown field"},
			{"a managedFields operation other than Apply or Update", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Delete", "fieldsType": "FieldsV1"}}), "metadata.managedFields[0].operation", `supported values: "Apply", "Update"`},
			{"a managedFields fieldsType other than FieldsV1", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsType": "FieldsV2"}}), "metadata.managedFields[0].fieldsType", `"FieldsV1"`},
			{"a managedFields entry without operation", with(t, m, "metadata.managedFields", []any{map[string]any{"fieldsType": "FieldsV1"}}), "metadata.managedFields[0].operation", "Required value"},
			{"a managedFields time that is not a timestamp", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsType": "FieldsV1", "time": "now"}}), "metadata.managedFields[0].time", ""},
			{"a FieldsV1 key of no known form", with(t, m, "metadata.managedFields", []any{map[string]any{"operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"ttl": map[string]any{}}}}}), "metadata.managedFields[0].fieldsV1[f:spec][ttl]", "FieldsV1 key"},
			{"eleven Update managedFields entries", with(t, m, "metadata.managedFields", func() []any {
				var out []any
				for i := 0; i < 11; i++ {
					out = append(out, map[string]any{"manager": "m" + strings.Repeat("x", i), "operation": "Update", "fieldsType": "FieldsV1"})
				}
				return out
			}()), "metadata.managedFields", "at most 10"},
		})
}

const migrateMinimal = `{
  "apiVersion": "management.service/v1",
  "kind": "ProjectMigrateVirtualClusterInstance",
  "metadata": {},
  "sourceVirtualClusterInstance": {"name": "vc-1", "namespace": "p-team-a"}
}`

func TestProjectMigrateVirtualClusterInstanceSchema(t *testing.T) {
	m := migrateMinimal
	runKindTable(t, resource.KindProjectMigrateVirtualClusterInstance,
		[]validCase{
			{"a request without a name", m},
			{"a named (idempotent) request", with(t, m, "metadata.name", "move-1")},
			{"every server-populated metadata field", with(t, with(t, m, "metadata", json.RawMessage(fullMeta)), "metadata.name", "move-1")},
			{"the recorded result", with(t, m, "status", map[string]any{"namespace": "p-team-b", "name": "vc-1", "uid": "u-new"})},
		},
		[]invalidCase{
			{"a missing source", with(t, m, "sourceVirtualClusterInstance", remove), "sourceVirtualClusterInstance", "Required value"},
			{"a source without name", with(t, m, "sourceVirtualClusterInstance.name", remove), "sourceVirtualClusterInstance.name", "Required value"},
			{"a source without namespace", with(t, m, "sourceVirtualClusterInstance.namespace", remove), "sourceVirtualClusterInstance.namespace", "Required value"},
			{"a source with an empty name", with(t, m, "sourceVirtualClusterInstance.name", ""), "sourceVirtualClusterInstance.name", ""},
			{"a source namespace that is not a DNS label", with(t, m, "sourceVirtualClusterInstance.namespace", "p.team"), "sourceVirtualClusterInstance.namespace", "RFC 1123 label"},
			{"a source with an unknown field", with(t, m, "sourceVirtualClusterInstance.project", "a"), "sourceVirtualClusterInstance.project", "unknown field"},
			{"a namespace on the request", with(t, m, "metadata.namespace", "p-a"), "metadata.namespace", "cluster-scoped"},
			{"a spec, which the kind does not have", with(t, m, "spec", map[string]any{}), "spec", "unknown field"},
			{"a status namespace that is not a DNS label", with(t, m, "status", map[string]any{"namespace": "P"}), "status.namespace", ""},
			{"another kind", with(t, m, "kind", "VirtualClusterInstance"), "kind", ""},
		})
}

const projectMinimal = `{"apiVersion": "management.service/v1", "kind": "Project", "metadata": {"name": "team-a"}}`

func TestProjectSchema(t *testing.T) {
	m := projectMinimal
	runKindTable(t, resource.KindProject,
		[]validCase{
			{"a minimal project", m},
			{"a full spec", with(t, m, "spec", map[string]any{
				"displayName": "Team A", "description": "the A team",
				"owner":           map[string]any{"user": "alice", "team": "a"},
				"allowedClusters": []any{map[string]any{"name": "*"}, map[string]any{"name": "cluster-1"}},
			})},
			{"every server-populated metadata field", with(t, with(t, m, "metadata", json.RawMessage(fullMeta)), "metadata.name", "team-a")},
		},
		[]invalidCase{
			{"an allowed cluster wildcard that is not the whole value", with(t, m, "spec.allowedClusters", []any{map[string]any{"name": "prod-*"}}), "spec.allowedClusters[0].name", ""},
			{"an allowed cluster without name", with(t, m, "spec.allowedClusters", []any{map[string]any{}}), "spec.allowedClusters[0].name", "Required value"},
			{"an unknown owner field", with(t, m, "spec.owner.group", "g"), "spec.owner.group", "unknown field"},
			{"a numeric displayName", with(t, m, "spec.displayName", 5), "spec.displayName", "must be of type string"},
			{"a status field the kind does not have", with(t, m, "status.phase", "Ready"), "status.phase", "unknown field"},
			{"a namespace", with(t, m, "metadata.namespace", "x"), "metadata.namespace", ""},
			{"an upper-case name", with(t, m, "metadata.name", "Team"), "metadata.name", ""},
		})
}

const instanceMinimal = `{"apiVersion": "management.service/v1", "kind": "VirtualClusterInstance", "metadata": {"name": "vc-1", "namespace": "p-team-a"}}`

func TestVirtualClusterInstanceSchema(t *testing.T) {
	m := instanceMinimal
	runKindTable(t, resource.KindVirtualClusterInstance,
		[]validCase{
			{"a minimal instance", m},
			{"an instance without namespace (the default one)", with(t, m, "metadata.namespace", remove)},
			{"an empty namespace (the default one)", with(t, m, "metadata.namespace", "")},
			{"a full spec and status", with(t, with(t, m, "spec", map[string]any{
				"displayName": "VC", "description": "d", "owner": map[string]any{"user": "u"},
				"clusterRef":  map[string]any{"cluster": "c-1", "namespace": "vcluster-vc-1", "virtualCluster": "vc-1"},
				"templateRef": map[string]any{"name": "tpl", "version": "1.2.3"},
				"parameters":  "replicas: 2\n",
			}), "status", map[string]any{
				"phase": "Ready", "reason": "Running", "message": "ok",
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z", "reason": "Up", "message": "m"}},
			})},
			{"every server-populated metadata field", with(t, with(t, m, "metadata", json.RawMessage(fullMeta)), "metadata.namespace", "p-team-a")},
			{"every phase", with(t, m, "status.phase", "Sleeping")},
		},
		[]invalidCase{
			{"an upper-case namespace", with(t, m, "metadata.namespace", "P-Team"), "metadata.namespace", "RFC 1123 label"},
			{"a namespace with an underscore", with(t, m, "metadata.namespace", "p_a"), "metadata.namespace", ""},
			{"a 64-character namespace", with(t, m, "metadata.namespace", strings.Repeat("n", 64)), "metadata.namespace", "at most 63"},
			{"a namespace with a dot", with(t, m, "metadata.namespace", "p.a"), "metadata.namespace", ""},
			{"an unknown phase", with(t, m, "status.phase", "Running"), "status.phase", `supported values: "Pending", "Ready", "Sleeping", "Failed"`},
			{"a condition status other than True, False or Unknown", with(t, m, "status.conditions", []any{map[string]any{"type": "Ready", "status": "Yes"}}), "status.conditions[0].status", ""},
			{"a condition without type", with(t, m, "status.conditions", []any{map[string]any{"status": "True"}}), "status.conditions[0].type", "Required value"},
			{"a template without name", with(t, m, "spec.templateRef", map[string]any{"version": "1"}), "spec.templateRef.name", "Required value"},
			{"a cluster namespace that is not a DNS label", with(t, m, "spec.clusterRef.namespace", "A_B"), "spec.clusterRef.namespace", ""},
			{"non-string parameters", with(t, m, "spec.parameters", map[string]any{"replicas": 2}), "spec.parameters", "must be of type string"},
			{"an unknown spec field", with(t, m, "spec.replicas", 2), "spec.replicas", "unknown field"},
		})
}

const accessKeyMinimal = `{"apiVersion": "management.service/v1", "kind": "AccessKey", "metadata": {"name": "key-1"}}`

func TestAccessKeySchema(t *testing.T) {
	m := accessKeyMinimal
	runKindTable(t, resource.KindAccessKey,
		[]validCase{
			{"a minimal key", m},
			{"a full spec", with(t, m, "spec", map[string]any{
				"displayName": "K", "description": "d", "user": "alice", "team": "a", "subject": "alice",
				"key": "s3cr3t", "keyHash": "sha256:abc", "ttl": 86400, "tokenGeneration": 2,
				"scope": map[string]any{"projects": []any{map[string]any{"project": "*"}}},
			})},
			{"every server-populated metadata field", with(t, with(t, m, "metadata", json.RawMessage(fullMeta)), "metadata.name", "key-1")},
		},
		[]invalidCase{
			{"a negative ttl", with(t, m, "spec.ttl", -5), "spec.ttl", ""},
			{"a string tokenGeneration", with(t, m, "spec.tokenGeneration", "2"), "spec.tokenGeneration", "integer"},
			{"a bad scope rule namespace", with(t, m, "spec.scope.rules", []any{map[string]any{"namespaces": []any{"ok", "Team-A"}}}), "spec.scope.rules[0].namespaces[1]", ""},
			{"a non-string key", with(t, m, "spec.key", 12345), "spec.key", "must be of type string"},
			{"a status, which the kind does not have", with(t, m, "status", map[string]any{}), "status", "unknown field"},
		})
}
