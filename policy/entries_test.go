package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

type entryCase struct {
	req   Request
	want  bool
	entry string // the entry that must allow it, when want
}

func runEntryCases(t *testing.T, scope *resource.AccessKeyScope, cases []entryCase) {
	t.Helper()
	c := MustCompile(scope)
	for _, tc := range cases {
		require.NoError(t, tc.req.Validate(), "%s", tc.req)
		d := c.Evaluate(tc.req)
		if !assert.Equal(t, tc.want, d.Allowed, "%s: %s", tc.req, c.Explain(tc.req).Reason) {
			continue
		}
		assert.Equal(t, tc.want, refAllows(scope, tc.req), "reference disagrees on %s", tc.req)
		if tc.want && tc.entry != "" {
			assert.Equal(t, tc.entry, d.Entry, "%s", tc.req)
			assert.Contains(t, d.Reason, tc.entry)
		}
	}
}

func TestProjectsEntryAllowsEverythingAboutItsProjectAndNothingElse(t *testing.T) {
	scope := &resource.AccessKeyScope{Projects: projects("a")}
	const e = "spec.scope.projects[0]"
	runEntryCases(t, scope, []entryCase{
		// the Project object itself, any verb and subresource
		{mgmtReq("get", "projects", "", "", "a"), true, e},
		{mgmtReq("update", "projects", "", "", "a"), true, e},
		{mgmtReq("delete", "projects", "", "", "a"), true, e},
		{mgmtReq("create", "projects", "migratevirtualclusterinstance", "", "a"), true, e},
		{mgmtReq("list", "projects", "", "", "a"), true, e}, // list with a metadata.name field selector
		// objects in its namespace, collections included
		{mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc1"), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("create", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("delete", "virtualclusterinstances", "status", "p-a", "vc1"), true, e},
		// its spaces and virtual clusters
		{inSpace("a", "s1", "delete", "pods", "default"), true, e},
		{inPVC("a", "vc9", "create", "secrets", "kube-system"), true, e},
		// nothing else
		{mgmtReq("get", "projects", "", "", "b"), false, ""},
		{mgmtReq("list", "projects", "", "", ""), false, ""},
		{mgmtReq("list", "virtualclusterinstances", "", "", ""), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "", "p-b", "vc1"), false, ""},
		{mgmtReq("create", "directclusterendpointtokens", "", "", ""), false, ""},
		{mgmtReq("get", "accesskeys", "", "", "a"), false, ""},
		{mgmtPath("get", "/version"), false, ""},
		{inSpace("b", "s1", "get", "pods", "default"), false, ""},
		{inPVC("b", "vc1", "get", "pods", "default"), false, ""},
		{onCluster("get", "", "pods", "", "p-a", "x"), false, ""},
		{inVC("vc1", "p-a", "get", "pods", "default"), false, ""},
		{mgmtReq("get", "projects", "", "", "A"), false, ""},
	})
}

func TestProjectsEntryStarAllowsEveryProjectAndTheCollections(t *testing.T) {
	scope := &resource.AccessKeyScope{Projects: projects("*")}
	const e = "spec.scope.projects[0]"
	runEntryCases(t, scope, []entryCase{
		{mgmtReq("get", "projects", "", "", "a"), true, e},
		{mgmtReq("delete", "projects", "", "", "zzz"), true, e},
		{mgmtReq("list", "projects", "", "", ""), true, e},
		{mgmtReq("watch", "projects", "", "", ""), true, e},
		{mgmtReq("create", "projects", "", "", ""), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "", ""), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "p-q", ""), true, e},
		{inSpace("b", "s1", "get", "pods", "default"), true, e},
		{inPVC("b", "vc1", "get", "pods", "default"), true, e},
		// still nothing outside projects
		{mgmtReq("list", "accesskeys", "", "", ""), false, ""},
		{mgmtReq("create", "directclusterendpointtokens", "", "", ""), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "", "default", "vc1"), false, ""},
		{mgmtPath("get", "/version"), false, ""},
		{onCluster("get", "", "pods", "", "default", "x"), false, ""},
		{inVC("vc1", "host", "get", "pods", "default"), false, ""},
	})
}

func TestVirtualClustersEntryAllowsTheVirtualClusterAndItsInstanceOnly(t *testing.T) {
	scope := &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "vc1"}}}
	const e = "spec.scope.virtualClusters[0]"
	runEntryCases(t, scope, []entryCase{
		{inPVC("a", "vc1", "create", "pods", "default"), true, e},
		{mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc1"), true, e},
		{mgmtReq("update", "virtualclusterinstances", "", "p-a", "vc1"), true, e},
		{mgmtReq("delete", "virtualclusterinstances", "", "p-a", "vc1"), true, e},
		{mgmtReq("get", "virtualclusterinstances", "status", "p-a", "vc1"), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "p-a", ""), false, ""},
		{mgmtReq("create", "virtualclusterinstances", "", "p-a", ""), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc2"), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "", "p-b", "vc1"), false, ""},
		{mgmtReq("get", "projects", "", "", "a"), false, ""},
		{mgmtReq("get", "spaceinstances", "", "p-a", "vc1"), false, ""},
		{inPVC("a", "vc2", "get", "pods", "default"), false, ""},
		{inPVC("b", "vc1", "get", "pods", "default"), false, ""},
		{inSpace("a", "vc1", "get", "pods", "default"), false, ""},
		{inVC("vc1", "p-a", "get", "pods", "default"), false, ""},
	})
}

func TestVirtualClustersEntryStarAllowsEveryVirtualClusterOfTheProject(t *testing.T) {
	scope := &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "*"}}}
	const e = "spec.scope.virtualClusters[0]"
	runEntryCases(t, scope, []entryCase{
		{inPVC("a", "vc1", "get", "pods", "default"), true, e},
		{inPVC("a", "anything", "get", "pods", "default"), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("create", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("delete", "virtualclusterinstances", "", "p-a", "x"), true, e},
		{inPVC("b", "vc1", "get", "pods", "default"), false, ""},
		{mgmtReq("list", "virtualclusterinstances", "", "p-b", ""), false, ""},
		{mgmtReq("list", "virtualclusterinstances", "", "", ""), false, ""},
		{mgmtReq("get", "projects", "", "", "a"), false, ""},
		{inSpace("a", "s1", "get", "pods", "default"), false, ""},
	})
}

func TestSpacesEntryAllowsTheSpaceAndItsInstanceOnly(t *testing.T) {
	scope := &resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{Project: "a", Space: "s1"}, {Project: "b", Space: "*"}}}
	runEntryCases(t, scope, []entryCase{
		{inSpace("a", "s1", "delete", "pods", "default"), true, "spec.scope.spaces[0]"},
		{mgmtReq("get", "spaceinstances", "", "p-a", "s1"), true, "spec.scope.spaces[0]"},
		{inSpace("b", "anything", "get", "pods", "default"), true, "spec.scope.spaces[1]"},
		{mgmtReq("list", "spaceinstances", "", "p-b", ""), true, "spec.scope.spaces[1]"},
		{inSpace("a", "s2", "get", "pods", "default"), false, ""},
		{mgmtReq("get", "spaceinstances", "", "p-a", "s2"), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "", "p-a", "s1"), false, ""},
		{inPVC("a", "s1", "get", "pods", "default"), false, ""},
		{mgmtReq("get", "projects", "", "", "b"), false, ""},
	})
}

func TestAllowServiceCliAllowsExactlyTheReadOnlyList(t *testing.T) {
	scope := &resource.AccessKeyScope{AllowServiceCli: true,
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "vc1"}}}
	const e = "spec.scope.allowServiceCli"
	runEntryCases(t, scope, []entryCase{
		{mgmtPath("get", "/version"), true, e},
		{mgmtPath("get", "/api"), true, e},
		{mgmtPath("get", "/api/v1"), true, e},
		{mgmtPath("get", "/apis"), true, e},
		{mgmtPath("get", "/apis/management.service"), true, e},
		{mgmtPath("get", "/apis/management.service/v1"), true, e},
		{mgmtReq("create", "directclusterendpointtokens", "", "", ""), true, e},
		{mgmtReq("get", "projects", "", "", "a"), true, e},
		{mgmtReq("list", "projects", "", "", "a"), true, e},
		{mgmtReq("watch", "projects", "", "", "a"), true, e},
		{mgmtReq("list", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("watch", "virtualclusterinstances", "", "p-a", ""), true, e},
		{mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc2"), true, e},
		// not below discovery, not other verbs, not other paths
		{mgmtPath("get", "/apis/management.service/v1/projects"), false, ""},
		{mgmtPath("get", "/api/v1/namespaces"), false, ""},
		{mgmtPath("post", "/version"), false, ""},
		{mgmtPath("head", "/version"), false, ""},
		{mgmtPath("get", "/versionx"), false, ""},
		{mgmtPath("get", "/openapi/v3"), false, ""},
		{mgmtPath("get", "/metrics"), false, ""},
		// nothing that writes, other than the token
		{mgmtReq("update", "projects", "", "", "a"), false, ""},
		{mgmtReq("patch", "projects", "", "", "a"), false, ""},
		{mgmtReq("delete", "projects", "", "", "a"), false, ""},
		{mgmtReq("create", "projects", "migratevirtualclusterinstance", "", "a"), false, ""},
		{mgmtReq("create", "virtualclusterinstances", "", "p-a", ""), false, ""},
		{mgmtReq("update", "virtualclusterinstances", "", "p-a", "vc2"), false, ""},
		{mgmtReq("deletecollection", "virtualclusterinstances", "", "p-a", ""), false, ""},
		{mgmtReq("delete", "directclusterendpointtokens", "", "", "t"), false, ""},
		{mgmtReq("get", "directclusterendpointtokens", "", "", "t"), false, ""},
		{mgmtReq("create", "accesskeys", "", "", ""), false, ""},
		// only projects the scope names, no subresources, and no unfiltered project list
		{mgmtReq("get", "projects", "", "", "b"), false, ""},
		{mgmtReq("list", "projects", "", "", ""), false, ""},
		{mgmtReq("list", "virtualclusterinstances", "", "p-b", ""), false, ""},
		{mgmtReq("list", "virtualclusterinstances", "", "", ""), false, ""},
		{mgmtReq("get", "virtualclusterinstances", "status", "p-a", "vc2"), false, ""},
		{mgmtReq("get", "accesskeys", "", "", "k"), false, ""},
		// only the management API
		{Request{Verb: "get", Path: "/version", Target: tCluster, Cluster: "c1"}, false, ""},
		{inSpace("a", "s1", "get", "pods", "default"), false, ""},
	})
}

func TestAllowServiceCliNeverAllowsAWrite(t *testing.T) {
	scope := &resource.AccessKeyScope{AllowServiceCli: true, Spaces: []resource.AccessKeyScopeSpace{{Project: "a", Space: "s1"}}}
	c := MustCompile(scope)
	readOnly := map[string]bool{"get": true, "list": true, "watch": true}
	for _, req := range allRequests() {
		d := c.Evaluate(req)
		if !d.Allowed || d.Entry != "spec.scope.allowServiceCli" {
			continue
		}
		if req.Resource == resourceDirectClusterEndpointTokens && req.Verb == "create" {
			continue // the one write of the list
		}
		assert.True(t, readOnly[req.Verb], "allowServiceCli allowed %s", req)
	}
}

func TestNilScopeAllowsEveryWellFormedRequest(t *testing.T) {
	c := MustCompile(nil)
	assert.True(t, c.Unrestricted())
	for _, req := range allRequests() {
		d := c.Evaluate(req)
		assert.Equal(t, req.Validate() == nil, d.Allowed, "%s", req)
		assert.Equal(t, d.Allowed, Evaluate(nil, req).Allowed)
		if d.Allowed {
			assert.Empty(t, d.Entry)
		}
	}
}

func TestEmptyScopeAllowsNothing(t *testing.T) {
	scope := &resource.AccessKeyScope{}
	c := MustCompile(scope)
	for _, req := range allRequests() {
		require.False(t, c.Evaluate(req).Allowed, "%s", req)
	}
	d := Evaluate(scope, mgmtPath("get", "/version"))
	assert.Contains(t, d.Reason, "no entries")
}

func TestInvalidScopeAllowsNothing(t *testing.T) {
	scope := &resource.AccessKeyScope{Projects: projects("a"), Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"*"}}}}
	_, err := Compile(scope)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.scope.rules[0].verbs[0]")
	d := Evaluate(scope, mgmtReq("get", "projects", "", "", "a"))
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Reason, "invalid")
	assert.Panics(t, func() { MustCompile(scope) })
}

func TestNilCompiledDeniesEverything(t *testing.T) {
	var c *Compiled
	assert.False(t, c.Unrestricted())
	d := c.Evaluate(mgmtPath("get", "/version"))
	assert.False(t, d.Allowed)
	assert.Equal(t, reasonNilCompiled, d.Reason)
}

func TestDecisionNamesTheFirstEntryThatAllows(t *testing.T) {
	scope := &resource.AccessKeyScope{
		AllowServiceCli: true,
		Projects:        projects("b", "a"),
		Rules:           []resource.AccessKeyScopeRule{{NonResourceURLs: []string{"/version"}}},
	}
	d := Evaluate(scope, mgmtReq("get", "projects", "", "", "a"))
	assert.Equal(t, Decision{Allowed: true, Entry: "spec.scope.projects[1]",
		Reason: `allowed by spec.scope.projects[1] (project "a")`}, d)
	d = Evaluate(scope, mgmtPath("get", "/version"))
	assert.Equal(t, "spec.scope.rules[0]", d.Entry)
	assert.Equal(t, d.Reason, d.String())
}

func TestDenialExplainsEachEntry(t *testing.T) {
	scope := &resource.AccessKeyScope{
		Projects:        projects("a"),
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "vc1"}},
		Rules: []resource.AccessKeyScopeRule{
			{Verbs: []string{"get"}},
			{Namespaces: []string{"default"}},
			{Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"x"}},
			{NonResourceURLs: []string{"/healthz"}},
			{Cluster: "c2"},
			{VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "vc9"}}},
		},
	}
	c := MustCompile(scope)
	req := Request{Verb: "delete", Resource: "pods", Namespace: "kube-system", Name: "y", Target: tCluster, Cluster: "c1"}
	fast := c.Evaluate(req)
	assert.False(t, fast.Allowed)
	assert.Equal(t, reasonNothingMatch, fast.Reason)
	d := c.Explain(req)
	assert.False(t, d.Allowed)
	for _, want := range []string{
		`delete pods "y" in namespace "kube-system" (Cluster, cluster "c1")`,
		`spec.scope.projects[0]: it allows Management|ProjectSpace|ProjectVirtualCluster requests, not Cluster requests`,
		`spec.scope.rules[0]: it allows verbs ["get"], not "delete"`,
		`spec.scope.rules[1]: it allows namespaces ["default"], not "kube-system"`,
		`spec.scope.rules[2]: it allows the names ["x"], not "y"`,
		`spec.scope.rules[3]: it allows non-resource requests only`,
		`spec.scope.rules[4]: it is for cluster "c2", not "c1"`,
		`spec.scope.rules[5]: it allows requests to the virtual clusters [*/vc9] only`,
	} {
		assert.Contains(t, d.Reason, want)
	}
	// Each entry is explained once, the many grants of an entry notwithstanding.
	assert.Equal(t, 1, strings.Count(d.Reason, "spec.scope.virtualClusters[0]:"))
}

func TestDenialOfManyEntriesIsShort(t *testing.T) {
	scope := &resource.AccessKeyScope{}
	for i := 0; i < 20; i++ {
		scope.Rules = append(scope.Rules, resource.AccessKeyScopeRule{Verbs: []string{"get"}})
	}
	d := Evaluate(scope, pathOn("post", "/x"))
	assert.Contains(t, d.Reason, "and 12 more entries")
}

func TestMalformedRequestsAreDeniedByEveryScope(t *testing.T) {
	bad := []Request{
		{},
		{Verb: "get", Target: tMgmt},
		{Verb: "get", Resource: "pods", Path: "/x", Target: tCluster, Cluster: "c"},
		{Verb: "get", Resource: "pods", Target: "cluster", Cluster: "c"},
		{Verb: "get", Resource: "pods", Target: tCluster},
		{Verb: "get", Path: "/version/../secret", Target: tMgmt},
		{Verb: "get", APIGroup: mgmtG, Resource: "projects", Name: "b", Project: "a", Target: tMgmt},
		{Verb: "get", APIGroup: mgmtG, Resource: "virtualclusterinstances", Namespace: "p-b", Name: "x", Project: "a", Target: tMgmt},
		{Verb: "get", Resource: "pods", Target: tPVC, Project: "a"},
		inPVC("a", "vc1", "get", "", ""),
	}
	scopes := []*resource.AccessKeyScope{nil, {Projects: projects("*")}, {Rules: []resource.AccessKeyScopeRule{{}}}}
	for _, req := range bad {
		require.Error(t, req.Validate(), "%s", req)
		for _, s := range scopes {
			d := Evaluate(s, req)
			assert.False(t, d.Allowed, "%s", req)
			assert.Contains(t, d.Reason, "malformed request")
			assert.Contains(t, MustCompile(s).Evaluate(req).Reason, "malformed request")
		}
	}
}
