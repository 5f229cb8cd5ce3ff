package policy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func rule(r resource.AccessKeyScopeRule) *resource.AccessKeyScope { return rules(r) }

func vcs(pairs ...string) []resource.AccessKeyScopeVirtualCluster {
	var out []resource.AccessKeyScopeVirtualCluster
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, resource.AccessKeyScopeVirtualCluster{Project: pairs[i], VirtualCluster: pairs[i+1]})
	}
	return out
}

func spaces(pairs ...string) []resource.AccessKeyScopeSpace {
	var out []resource.AccessKeyScopeSpace
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, resource.AccessKeyScopeSpace{Project: pairs[i], Space: pairs[i+1]})
	}
	return out
}

// SEC-AUTHZ-COVERS: the TestCovers* family of Kubernetes' policy comparator, for our
// scopes: what covers what, and the escalation attempts a token request could make.
func TestCoversTable(t *testing.T) {
	allVerbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	for _, tc := range []struct {
		name         string
		outer, inner *resource.AccessKeyScope
		want         bool
		gaps         []string // the inner entries reported as not covered
	}{
		// what covers
		{name: "nil outer covers a nil inner", outer: nil, inner: nil, want: true},
		{name: "nil outer covers any inner", outer: nil, inner: rule(resource.AccessKeyScopeRule{}), want: true},
		{name: "a rule with no fields covers a nil inner", outer: rule(resource.AccessKeyScopeRule{}), inner: nil, want: true},
		{name: "a rule with no fields covers every entry kind", outer: rule(resource.AccessKeyScopeRule{}),
			inner: &resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("*"), Spaces: spaces("a", "*"), VirtualClusters: vcs("b", "*"),
				Rules: []resource.AccessKeyScopeRule{{NonResourceURLs: []string{"*"}}}}, want: true},
		{name: "an empty inner is covered by an empty outer", outer: &resource.AccessKeyScope{}, inner: &resource.AccessKeyScope{}, want: true},
		{name: "projects star covers named projects", outer: &resource.AccessKeyScope{Projects: projects("*")},
			inner: &resource.AccessKeyScope{Projects: projects("a", "b")}, want: true},
		{name: "a project covers its spaces and virtual clusters", outer: &resource.AccessKeyScope{Projects: projects("a")},
			inner: &resource.AccessKeyScope{Spaces: spaces("a", "*", "a", "s1"), VirtualClusters: vcs("a", "*", "a", "vc1")}, want: true},
		{name: "a virtual cluster star covers one virtual cluster", outer: &resource.AccessKeyScope{VirtualClusters: vcs("a", "*")},
			inner: &resource.AccessKeyScope{VirtualClusters: vcs("a", "vc1")}, want: true},
		{name: "a space star covers one space", outer: &resource.AccessKeyScope{Spaces: spaces("a", "*")},
			inner: &resource.AccessKeyScope{Spaces: spaces("a", "s1")}, want: true},
		{name: "more verbs cover fewer", outer: rule(resource.AccessKeyScopeRule{Verbs: []string{"get", "list"}}),
			inner: rule(resource.AccessKeyScopeRule{Verbs: []string{"list"}}), want: true},
		{name: "name/* covers name/sub", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/log", "pods/exec")}}), want: true},
		{name: "star covers every form of its group", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "nodes/*", "pods/log")}}), want: true},
		{name: "star covers */sub", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*/status")}}), want: true},
		{name: "an empty group list covers the group's resources", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{{Group: "apps"}}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "*")}}), want: true},
		{name: "*/sub covers name/sub", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "*/scale")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "deployments/scale")}}), want: true},
		{name: "every name covers some names", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"a"}}), want: true},
		{name: "more namespaces cover fewer", outer: rule(resource.AccessKeyScopeRule{Namespaces: []string{"a", "b"}}),
			inner: rule(resource.AccessKeyScopeRule{Namespaces: []string{"b"}, Resources: []resource.GroupResources{gr("", "pods")}}), want: true},
		{name: "a URL prefix covers longer prefixes and paths below", outer: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/apis/*"}}),
			inner: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/apis/apps", "/apis/apps/*"}}), want: true},
		{name: "a star URL covers every URL", outer: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"*"}}),
			inner: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/", "/x/*"}}), want: true},
		{name: "more targets cover fewer", outer: rule(resource.AccessKeyScopeRule{RequestTargets: targets(tCluster, tMgmt)}),
			inner: rule(resource.AccessKeyScopeRule{RequestTargets: targets(tCluster), Verbs: []string{"get"}}), want: true},
		{name: "a cluster covers a narrower rule on it", outer: rule(resource.AccessKeyScopeRule{Cluster: "c1"}),
			inner: rule(resource.AccessKeyScopeRule{Cluster: "c1", Namespaces: []string{"a"}}), want: true},
		{name: "a virtual cluster namespace covers a virtual cluster in it", outer: rule(resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Namespace: "host"}}}),
			inner: rule(resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "v", Namespace: "host"}}}), want: true},
		{name: "rules together cover what each alone does not (split by verb)",
			outer: rules(resource.AccessKeyScopeRule{Verbs: []string{"get"}}, resource.AccessKeyScopeRule{Verbs: []string{"list"}}),
			inner: rule(resource.AccessKeyScopeRule{Verbs: []string{"get", "list"}, Namespaces: []string{"x"}}), want: true},
		{name: "rules together cover what each alone does not (split by namespace and kind)",
			outer: rules(resource.AccessKeyScopeRule{Namespaces: []string{"a"}}, resource.AccessKeyScopeRule{Namespaces: []string{"b"}},
				resource.AccessKeyScopeRule{NonResourceURLs: []string{"*"}}),
			inner: rule(resource.AccessKeyScopeRule{Verbs: []string{"get"}, Namespaces: []string{"a", "b"}}), want: true},
		{name: "the service CLI with the same projects covers itself through a wider project",
			outer: &resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("*")},
			inner: &resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("a"), VirtualClusters: vcs("b", "vc1")}, want: true},
		{name: "the service CLI of a virtual cluster is covered by the service CLI of its project",
			outer: &resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("a")},
			inner: &resource.AccessKeyScope{AllowServiceCli: true, VirtualClusters: vcs("a", "vc1")}, want: true},

		// escalation attempts
		{name: "an enumeration of projects never covers star", outer: &resource.AccessKeyScope{Projects: projects("a", "b")},
			inner: &resource.AccessKeyScope{Projects: projects("*")}, gaps: []string{"spec.scope.projects[0]"}},
		{name: "an enumeration of spaces never covers star", outer: &resource.AccessKeyScope{Spaces: spaces("a", "s1", "a", "s2")},
			inner: &resource.AccessKeyScope{Spaces: spaces("a", "*")}, gaps: []string{"spec.scope.spaces[0]"}},
		{name: "an enumeration of virtual clusters never covers star", outer: &resource.AccessKeyScope{VirtualClusters: vcs("a", "vc1")},
			inner: &resource.AccessKeyScope{VirtualClusters: vcs("a", "*")}, gaps: []string{"spec.scope.virtualClusters[0]"}},
		{name: "another project", outer: &resource.AccessKeyScope{Projects: projects("a")},
			inner: &resource.AccessKeyScope{Projects: projects("a", "b")}, gaps: []string{"spec.scope.projects[1]"}},
		{name: "a whole project from one of its virtual clusters", outer: &resource.AccessKeyScope{VirtualClusters: vcs("a", "vc1")},
			inner: &resource.AccessKeyScope{Projects: projects("a")}, gaps: []string{"spec.scope.projects[0]"}},
		{name: "a whole project from all its spaces and virtual clusters", outer: &resource.AccessKeyScope{Spaces: spaces("a", "*"), VirtualClusters: vcs("a", "*")},
			inner: &resource.AccessKeyScope{Projects: projects("a")}, gaps: []string{"spec.scope.projects[0]"}},
		{name: "a virtual cluster of another project", outer: &resource.AccessKeyScope{VirtualClusters: vcs("a", "*")},
			inner: &resource.AccessKeyScope{VirtualClusters: vcs("b", "vc1")}, gaps: []string{"spec.scope.virtualClusters[0]"}},
		{name: "a space as a virtual cluster", outer: &resource.AccessKeyScope{Spaces: spaces("a", "x")},
			inner: &resource.AccessKeyScope{VirtualClusters: vcs("a", "x")}, gaps: []string{"spec.scope.virtualClusters[0]"}},
		{name: "an enumeration of verbs never covers every verb", outer: rule(resource.AccessKeyScopeRule{Verbs: allVerbs}),
			inner: rule(resource.AccessKeyScopeRule{}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an extra verb", outer: rule(resource.AccessKeyScopeRule{Verbs: []string{"get"}}),
			inner: rule(resource.AccessKeyScopeRule{Verbs: []string{"get", "delete"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an enumeration of resources never covers star", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "pods/*", "secrets")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an enumeration of groups never covers every resource", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*"), gr("apps", "*")}}),
			inner: rule(resource.AccessKeyScopeRule{Namespaces: []string{"a"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "another group", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "deployments")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an extra subresource", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "pods/exec")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every subresource from one", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/log")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "the resource from its subresources", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*")}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an enumeration of names never covers every name", outer: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"a", "b"}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "another namespace", outer: rule(resource.AccessKeyScopeRule{Namespaces: []string{"a"}}),
			inner: rule(resource.AccessKeyScopeRule{Namespaces: []string{"a", "b"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "cluster scope from a namespace", outer: rule(resource.AccessKeyScopeRule{Namespaces: []string{"a"}}),
			inner: rule(resource.AccessKeyScopeRule{Namespaces: []string{""}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "an enumeration of namespaces never covers every namespace", outer: rule(resource.AccessKeyScopeRule{Namespaces: []string{"", "a"}}),
			inner: rule(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "a URL prefix from an exact URL", outer: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz"}}),
			inner: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz/*"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "the parent from a URL prefix", outer: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api/*"}}),
			inner: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every URL from a prefix", outer: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api/*", "/apis/*"}}),
			inner: rule(resource.AccessKeyScopeRule{NonResourceURLs: []string{"*"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "non-resource URLs from resources", outer: rule(resource.AccessKeyScopeRule{Namespaces: []string{"", "a"}}),
			inner: rule(resource.AccessKeyScopeRule{Verbs: []string{"get"}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every target from some", outer: rule(resource.AccessKeyScopeRule{RequestTargets: targets(tMgmt, tCluster, tVC, tSpace)}),
			inner: rule(resource.AccessKeyScopeRule{}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every cluster from one", outer: rule(resource.AccessKeyScopeRule{Cluster: "c1"}),
			inner: rule(resource.AccessKeyScopeRule{RequestTargets: targets(tCluster)}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "another cluster", outer: rule(resource.AccessKeyScopeRule{Cluster: "c1"}),
			inner: rule(resource.AccessKeyScopeRule{Cluster: "c2"}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every virtual cluster from one", outer: rule(resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "v1"}}}),
			inner: rule(resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{}}}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "every request from every project", outer: &resource.AccessKeyScope{Projects: projects("*")},
			inner: rule(resource.AccessKeyScopeRule{}), gaps: []string{"spec.scope.rules[0]"}},
		{name: "the service CLI from a project", outer: &resource.AccessKeyScope{Projects: projects("a")},
			inner: &resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("a")}, gaps: []string{"spec.scope.allowServiceCli"}},
		{name: "the service CLI of another project", outer: &resource.AccessKeyScope{AllowServiceCli: true, VirtualClusters: vcs("a", "v")},
			inner: &resource.AccessKeyScope{AllowServiceCli: true, VirtualClusters: vcs("b", "v")},
			gaps:  []string{"spec.scope.virtualClusters[0]", "spec.scope.allowServiceCli"}},
		{name: "no scope from a scope", outer: &resource.AccessKeyScope{Projects: projects("*")}, inner: nil, gaps: []string{"spec.scope"}},
		{name: "no scope from an empty scope", outer: &resource.AccessKeyScope{}, inner: nil, gaps: []string{"spec.scope"}},
		{name: "an invalid inner is not covered", outer: nil, inner: &resource.AccessKeyScope{Projects: projects("")}, want: true},
		{name: "an invalid inner under a real outer", outer: &resource.AccessKeyScope{Projects: projects("*")},
			inner: &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"*"}}}}, gaps: []string{"spec.scope.rules[0].verbs[0]"}},
		{name: "an invalid outer allows nothing", outer: &resource.AccessKeyScope{Projects: projects("")},
			inner: &resource.AccessKeyScope{Projects: projects("a")}, gaps: []string{"spec.scope"}},
		{name: "an invalid outer covers an empty inner", outer: &resource.AccessKeyScope{Projects: projects("")},
			inner: &resource.AccessKeyScope{}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gaps := Covers(tc.outer, tc.inner)
			var fields []string
			for _, g := range gaps {
				fields = append(fields, g.Field)
				assert.NotEmpty(t, g.Detail)
				assert.Equal(t, g.Field+": "+g.Detail, g.String())
			}
			assert.Equal(t, tc.want, got, "%v", gaps)
			assert.Equal(t, tc.gaps, fields, "%v", gaps)
			if got {
				assertAllowedSetIncluded(t, tc.outer, tc.inner)
			}
		})
	}
}

// assertAllowedSetIncluded checks Covers' promise on every generated request.
func assertAllowedSetIncluded(t *testing.T, outer, inner *resource.AccessKeyScope) {
	t.Helper()
	ci, err := Compile(inner)
	if err != nil {
		return // an invalid inner allows nothing
	}
	co, err := Compile(outer)
	if err != nil {
		co = MustCompile(&resource.AccessKeyScope{}) // an invalid outer allows nothing
	}
	for _, req := range allRequests() {
		if ci.Evaluate(req).Allowed {
			require.True(t, co.Evaluate(req).Allowed, "covered, yet %s is allowed by the inner scope only", req)
		}
	}
}

func TestCoversGapNamesWhatIsNotCovered(t *testing.T) {
	ok, gaps := Covers(
		rule(resource.AccessKeyScopeRule{Verbs: []string{"get", "list"}, Resources: []resource.GroupResources{gr("", "pods")}, Cluster: "c1"}),
		rule(resource.AccessKeyScopeRule{Verbs: []string{"get", "delete"}, Resources: []resource.GroupResources{gr("", "pods")}, Cluster: "c1"}),
	)
	require.False(t, ok)
	require.Len(t, gaps, 1)
	assert.Equal(t, `spec.scope.rules[0]: allows verbs ["delete"] on resources [pods] in Cluster requests to cluster "c1", which the outer scope does not allow`,
		gaps[0].String())
}

// Every scope covers itself, and whenever Covers says yes for two of the truth-table
// scopes, the allowed sets on every generated request agree with it.
func TestCoversIsReflexiveAndSoundOnTheTruthTableScopes(t *testing.T) {
	scopes := truthTableScopes()
	reqs := allRequests()
	allowed := make([][]bool, len(scopes))
	for i, s := range scopes {
		ok, gaps := Covers(s, s)
		require.True(t, ok, "scope %d does not cover itself: %v", i, gaps)
		c := MustCompile(s)
		allowed[i] = make([]bool, len(reqs))
		for j, r := range reqs {
			allowed[i][j] = c.Evaluate(r).Allowed
		}
	}
	covered := 0
	for a := range scopes {
		for b := range scopes {
			ok, _ := Covers(scopes[a], scopes[b])
			if !ok {
				continue
			}
			covered++
			for j := range reqs {
				if allowed[b][j] && !allowed[a][j] {
					require.FailNow(t, fmt.Sprintf("Covers(%d, %d) but %s is allowed by %d only", a, b, reqs[j], b))
				}
			}
		}
	}
	t.Logf("%d of %d ordered pairs covered", covered, len(scopes)*len(scopes))
}
