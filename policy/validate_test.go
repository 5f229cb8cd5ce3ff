package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

var root = resource.NewPath("spec", "scope")

func rules(rs ...resource.AccessKeyScopeRule) *resource.AccessKeyScope {
	return &resource.AccessKeyScope{Rules: rs}
}

func TestValidateAcceptsWhatTheSpecAllows(t *testing.T) {
	for name, scope := range map[string]*resource.AccessKeyScope{
		"nil":   nil,
		"empty": {},
		"every entry kind": {
			AllowServiceCli: true,
			Projects:        projects("a", "*"),
			Spaces:          []resource.AccessKeyScopeSpace{{Project: "a", Space: "s1"}, {Project: "a", Space: "*"}},
			VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "vc.1"}, {Project: "b", VirtualCluster: "*"}},
		},
		"every resource form": rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{
			gr("", "pods", "pods/log", "nodes/*"), gr("apps", "*"), gr("batch", "*/status", "jobs"), {Group: "x.io"},
		}}),
		"name and name/* do not overlap": rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "pods/*")}}),
		"duplicates without wildcards":   rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "pods")}}),
		"same resource in two groups":    rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*"), gr("apps", "*")}}),
		"urls":                           rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"*", "/", "/*", "/healthz", "/apis/*", "/a/b/*"}}),
		"namespaces with cluster scope": rules(resource.AccessKeyScopeRule{Namespaces: []string{"", "default", "p-a"},
			Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"a", "B:c"}}),
		"targets cluster and virtual clusters": rules(
			resource.AccessKeyScopeRule{RequestTargets: targets(tMgmt, tCluster, tVC, tSpace, tPVC)},
			resource.AccessKeyScopeRule{Cluster: "c1", RequestTargets: targets(tCluster)},
			resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{}, {Name: "v"}, {Namespace: "n"}}, RequestTargets: targets(tPVC)},
		),
		"empty rule": rules(resource.AccessKeyScopeRule{}),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, Validate(scope, root))
			_, err := Compile(scope)
			assert.NoError(t, err)
		})
	}
}

func TestValidateRejectsWithFieldPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope *resource.AccessKeyScope
		want  map[string]resource.CauseType // field path -> cause
	}{
		{"empty project name", &resource.AccessKeyScope{Projects: projects("a", "")},
			map[string]resource.CauseType{"spec.scope.projects[1].project": resource.CauseFieldValueRequired}},
		{"project name not DNS", &resource.AccessKeyScope{Projects: projects("A")},
			map[string]resource.CauseType{"spec.scope.projects[0].project": resource.CauseFieldValueInvalid}},
		{"space entry without project or space", &resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{}}},
			map[string]resource.CauseType{"spec.scope.spaces[0].project": resource.CauseFieldValueRequired, "spec.scope.spaces[0].space": resource.CauseFieldValueRequired}},
		{"star project in a spaces entry", &resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{Project: "*", Space: "s"}}},
			map[string]resource.CauseType{"spec.scope.spaces[0].project": resource.CauseFieldValueInvalid}},
		{"star project in a virtualClusters entry", &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "*", VirtualCluster: "*"}}},
			map[string]resource.CauseType{"spec.scope.virtualClusters[0].project": resource.CauseFieldValueInvalid}},
		{"empty virtual cluster name", &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a"}}},
			map[string]resource.CauseType{"spec.scope.virtualClusters[0].virtualCluster": resource.CauseFieldValueRequired}},
		{"bad virtual cluster name", &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "a/b"}}},
			map[string]resource.CauseType{"spec.scope.virtualClusters[0].virtualCluster": resource.CauseFieldValueInvalid}},
		{"unknown request target", rules(resource.AccessKeyScopeRule{}, resource.AccessKeyScopeRule{RequestTargets: targets(tMgmt, "management", "")}),
			map[string]resource.CauseType{"spec.scope.rules[1].requestTargets[1]": resource.CauseFieldValueNotSupported, "spec.scope.rules[1].requestTargets[2]": resource.CauseFieldValueNotSupported}},
		{"star in a URL other than the whole last step", rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/ok", "/healthz*", "/*/v1", "/a/*/b", "**", "/a/**"}}),
			map[string]resource.CauseType{
				"spec.scope.rules[0].nonResourceURLs[1]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].nonResourceURLs[2]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].nonResourceURLs[3]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].nonResourceURLs[4]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].nonResourceURLs[5]": resource.CauseFieldValueInvalid}},
		{"URLs that are not clean absolute paths", rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"healthz", "/a/", "/a//b", "/a/../b", "", "//*", "/a%2Fb"}}),
			map[string]resource.CauseType{
				"spec.scope.rules[0].nonResourceURLs[0]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].nonResourceURLs[1]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].nonResourceURLs[2]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].nonResourceURLs[3]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].nonResourceURLs[4]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].nonResourceURLs[5]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].nonResourceURLs[6]": resource.CauseFieldValueInvalid}},
		{"URLs together with resources", rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/x"}, Namespaces: []string{"a"}}),
			map[string]resource.CauseType{"spec.scope.rules[0].nonResourceURLs": resource.CauseFieldValueInvalid}},
		{"resourceNames without resources", rules(resource.AccessKeyScopeRule{ResourceNames: []string{"a"}, Namespaces: []string{"default"}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resourceNames": resource.CauseFieldValueInvalid}},
		{"empty or star resource names", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"", "*"}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resourceNames[0]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].resourceNames[1]": resource.CauseFieldValueInvalid}},
		{"empty and star verbs", rules(resource.AccessKeyScopeRule{Verbs: []string{"get", "", "*", "g t"}}),
			map[string]resource.CauseType{"spec.scope.rules[0].verbs[1]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].verbs[2]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].verbs[3]": resource.CauseFieldValueInvalid}},
		{"star group", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("*", "pods")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[0].group": resource.CauseFieldValueInvalid}},
		{"resource strings of no known form", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "", "*/*", "a/b/c", "po*", "/x", "x/", "p*/log")}}),
			map[string]resource.CauseType{
				"spec.scope.rules[0].resources[0].resources[0]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].resources[0].resources[1]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].resources[0].resources[2]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].resources[0].resources[3]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].resources[0].resources[4]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].resources[0].resources[5]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].resources[0].resources[6]": resource.CauseFieldValueInvalid}},
		{"star overlaps anything", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "*")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[0].resources[1]": resource.CauseFieldValueInvalid}},
		{"name/* overlaps name/sub", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*", "pods/log")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[0].resources[1]": resource.CauseFieldValueInvalid}},
		{"*/sub overlaps name/sub", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/status", "*/status")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[0].resources[1]": resource.CauseFieldValueInvalid}},
		{"name/* overlaps */sub", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*", "*/status")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[0].resources[1]": resource.CauseFieldValueInvalid}},
		{"overlap across entries of one group", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "deployments"), gr("apps", "*")}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[1].resources[0]": resource.CauseFieldValueInvalid}},
		{"an empty resources list overlaps the group's other entries", rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "deployments"), {Group: "apps"}}}),
			map[string]resource.CauseType{"spec.scope.rules[0].resources[1].resources": resource.CauseFieldValueInvalid}},
		{"star namespace and bad namespace", rules(resource.AccessKeyScopeRule{Namespaces: []string{"*", "Default", "a.b"}}),
			map[string]resource.CauseType{"spec.scope.rules[0].namespaces[0]": resource.CauseFieldValueInvalid, "spec.scope.rules[0].namespaces[1]": resource.CauseFieldValueInvalid,
				"spec.scope.rules[0].namespaces[2]": resource.CauseFieldValueInvalid}},
		{"star cluster", rules(resource.AccessKeyScopeRule{Cluster: "*"}),
			map[string]resource.CauseType{"spec.scope.rules[0].cluster": resource.CauseFieldValueInvalid}},
		{"cluster with targets that exclude Cluster", rules(resource.AccessKeyScopeRule{Cluster: "c1", RequestTargets: targets(tMgmt)}),
			map[string]resource.CauseType{"spec.scope.rules[0].cluster": resource.CauseFieldValueInvalid}},
		{"virtualClusters with cluster", rules(resource.AccessKeyScopeRule{Cluster: "c1", VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "v"}}}),
			map[string]resource.CauseType{"spec.scope.rules[0].virtualClusters": resource.CauseFieldValueInvalid}},
		{"virtualClusters with targets that exclude them", rules(resource.AccessKeyScopeRule{RequestTargets: targets(tMgmt), VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "v"}}}),
			map[string]resource.CauseType{"spec.scope.rules[0].virtualClusters": resource.CauseFieldValueInvalid}},
		{"star virtual cluster selectors", rules(resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "*", Namespace: "*"}}}),
			map[string]resource.CauseType{"spec.scope.rules[0].virtualClusters[0].name": resource.CauseFieldValueInvalid, "spec.scope.rules[0].virtualClusters[0].namespace": resource.CauseFieldValueInvalid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Validate(tc.scope, root)
			got := map[string]resource.CauseType{}
			for _, e := range errs {
				_, dup := got[e.Field]
				require.False(t, dup, "two errors at %s: %v", e.Field, errs.ToAggregate())
				got[e.Field] = e.Type
			}
			assert.Equal(t, tc.want, got, "%v", errs.ToAggregate())
			_, err := Compile(tc.scope)
			assert.Error(t, err)
		})
	}
}

func TestValidateUsesTheGivenPath(t *testing.T) {
	errs := Validate(&resource.AccessKeyScope{Projects: projects("")}, resource.NewPath("spec"))
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.projects[0].project", errs[0].Field)
	// The errors are the resource package's, ready for a 422.
	status := resource.NewInvalid(nil, "key", errs)
	assert.Equal(t, int32(422), status.Status().Code)
}

func TestValidateMessagesSayWhatToWriteInstead(t *testing.T) {
	errs := Validate(rules(resource.AccessKeyScopeRule{Verbs: []string{"*"}, Resources: []resource.GroupResources{gr("", "pods/*", "pods/log")}}), root)
	require.Len(t, errs, 2)
	assert.Equal(t, `spec.scope.rules[0].verbs[0]: Invalid value: "*": "*" is not a wildcard here: an empty verbs list means every verb`, errs[0].Error())
	assert.Equal(t, `spec.scope.rules[0].resources[0].resources[1]: Invalid value: "pods/log": overlaps spec.scope.rules[0].resources[0].resources[0] ("pods/*"): when wildcards are present, entries must not overlap`, errs[1].Error())
}
