package schema

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// typicalToken is a DirectClusterEndpointToken as the store writes it on create,
// with a ten-rule scope.
func typicalToken() *resource.DirectClusterEndpointToken {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	rules := make([]resource.AccessKeyScopeRule, 10)
	for i := range rules {
		rules[i] = resource.AccessKeyScopeRule{
			Verbs:         []string{"get", "list", "watch"},
			Resources:     []resource.GroupResources{{Group: "", Resources: []string{"pods", "pods/log", "configmaps"}}, {Group: "apps", Resources: []string{"deployments/*"}}},
			ResourceNames: []string{fmt.Sprintf("web-%d", i)},
			Namespaces:    []string{fmt.Sprintf("p-team-%d", i)},
			RequestTargets: []resource.RequestTarget{
				resource.RequestTargetCluster, resource.RequestTargetVirtualCluster,
			},
			Cluster:         "cluster-1",
			VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "vc-1", Namespace: "vcluster-vc-1"}},
		}
	}
	rules[9].NonResourceURLs = []string{"/version", "/apis/*"}
	tok := &resource.DirectClusterEndpointToken{
		TypeMeta: resource.TypeMeta{Kind: resource.KindDirectClusterEndpointToken, APIVersion: resource.GroupVersion},
		ObjectMeta: resource.ObjectMeta{
			Name: "ci-token-x7k2p", GenerateName: "ci-token-", UID: "0b8f7c1e-3d0a-4a55-9a3e-1f0e6c3f8a11",
			ResourceVersion: "1042", Generation: 1, CreationTimestamp: resource.NewTime(now),
			Labels: map[string]string{"app": "ci"},
			ManagedFields: []resource.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: "Update", APIVersion: resource.GroupVersion,
				Time: resource.NewTimePtr(now), FieldsType: "FieldsV1",
				FieldsV1: json.RawMessage(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:rules":{}},"f:ttl":{}}}`),
			}},
		},
		Spec: resource.DirectClusterEndpointTokenSpec{TTL: 3600, Scope: &resource.AccessKeyScope{Rules: rules}},
	}
	return tok
}

func BenchmarkValidateDirectClusterEndpointToken(b *testing.B) {
	v := validatorOf(b, resource.KindDirectClusterEndpointToken)
	tok := typicalToken()
	require.NoError(b, v.Validate(tok))
	b.Run("object", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(tok); err != nil {
				require.NoError(b, err) // only on failure: b.Helper is not free in the timed loop
			}
		}
	})
	data, err := json.Marshal(tok)
	require.NoError(b, err)
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := v.ValidateJSON(data); err != nil {
				require.NoError(b, err)
			}
		}
	})
	bad := typicalToken()
	bad.Spec.Scope.Rules[3].Verbs = append(bad.Spec.Scope.Rules[3].Verbs, "get*")
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(bad); err == nil {
				require.Error(b, err, "want an error")
			}
		}
	})
}
