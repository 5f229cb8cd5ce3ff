package policy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// ruleCases are the rules[] truth tables, in the style of Kubernetes' TestRuleMatches:
// one rule, and for each request whether the rule allows it. Each case is named after
// the property it protects.
var ruleCases = []struct {
	name               string
	rule               resource.AccessKeyScopeRule
	requestsToExpected map[Request]bool
}{
	{
		name: "an empty rule matches every request of every target",
		rule: resource.AccessKeyScopeRule{},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", ""):               true,
			onCluster("delete", "apps", "deployments", "scale", "x", "d"): true,
			pathOn("post", "/anything"):                                   true,
			mgmtReq("delete", "projects", "", "", "a"):                    true,
			inPVC("a", "vc1", "create", "secrets", "kube-system"):         true,
		},
	},
	{
		name: "verbs match exactly and case-sensitively",
		rule: resource.AccessKeyScopeRule{Verbs: []string{"get", "watch"}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):  true,
			onCluster("watch", "", "pods", "", "default", ""): true,
			onCluster("GET", "", "pods", "", "default", "p"):  false,
			onCluster("Get", "", "pods", "", "default", "p"):  false,
			onCluster("list", "", "pods", "", "default", ""):  false,
			onCluster("getx", "", "pods", "", "default", "p"): false,
			pathOn("get", "/healthz"):                         true,
			pathOn("post", "/healthz"):                        false,
		},
	},
	{
		name: "a bare resource does not match its subresources",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):          true,
			onCluster("list", "", "pods", "", "", ""):                 true,
			onCluster("get", "", "pods", "log", "default", "p"):       false,
			onCluster("update", "", "pods", "status", "default", "p"): false,
			onCluster("get", "", "podsx", "", "default", "p"):         false,
			onCluster("get", "", "Pods", "", "default", "p"):          false,
			pathOn("get", "/api/v1/pods"):                             false,
		},
	},
	{
		name: "name/sub matches that subresource only",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/log")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "log", "default", "p"):  true,
			onCluster("get", "", "pods", "", "default", "p"):     false,
			onCluster("get", "", "pods", "exec", "default", "p"): false,
			onCluster("get", "", "nodes", "log", "", "n"):        false,
		},
	},
	{
		name: "a star matches every resource and subresource of its group and no other group",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "*")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):           true,
			onCluster("get", "", "pods", "log", "default", "p"):        true,
			onCluster("get", "", "secrets", "", "default", "s"):        true,
			onCluster("get", "apps", "deployments", "", "default", ""): false,
			onCluster("get", mgmtG, "projects", "", "", "a"):           false,
		},
	},
	{
		name: "name/* matches every subresource of name and not name itself",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods/*")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "log", "default", "p"):     true,
			onCluster("create", "", "pods", "exec", "default", "p"): true,
			onCluster("get", "", "pods", "", "default", "p"):        false,
			onCluster("get", "", "nodes", "log", "", "n"):           false,
		},
	},
	{
		name: "*/sub matches that subresource of every resource of the group",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "*/scale")}},
		requestsToExpected: map[Request]bool{
			onCluster("update", "apps", "deployments", "scale", "default", "d"):  true,
			onCluster("update", "apps", "replicasets", "scale", "default", "r"):  true,
			onCluster("update", "apps", "deployments", "", "default", "d"):       false,
			onCluster("update", "apps", "deployments", "status", "default", "d"): false,
			onCluster("update", "", "pods", "scale", "default", "p"):             false,
		},
	},
	{
		name: "an empty resources list in a group entry means every resource of that group",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{{Group: "apps"}}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "apps", "deployments", "", "default", "d"):      true,
			onCluster("get", "apps", "deployments", "scale", "default", "d"): true,
			onCluster("get", "", "pods", "", "default", "p"):                 false,
			pathOn("get", "/apis/apps"):                                      false,
		},
	},
	{
		name: "the empty group is the core group, not every group",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):        true,
			onCluster("get", "metrics", "pods", "", "default", "p"): false,
		},
	},
	{
		name: "resourceNames restrict the names and never match a request without one",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods", "pods/log")},
			ResourceNames: []string{"a"}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "a"):    true,
			onCluster("get", "", "pods", "log", "default", "a"): true,
			onCluster("get", "", "pods", "", "default", "b"):    false,
			onCluster("get", "", "pods", "", "default", "A"):    false,
			onCluster("list", "", "pods", "", "default", ""):    false,
			onCluster("create", "", "pods", "", "default", ""):  false,
		},
	},
	{
		name: "an empty resourceNames list matches every name and unnamed requests",
		rule: resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("", "pods")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "any"): true,
			onCluster("list", "", "pods", "", "default", ""):   true,
		},
	},
	{
		name: "the namespace \"\" matches cluster-scoped and all-namespace requests only",
		rule: resource.AccessKeyScopeRule{Namespaces: []string{""}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "nodes", "", "", "n"):       true,
			onCluster("list", "", "pods", "", "", ""):        true,
			onCluster("get", "", "pods", "", "default", "p"): false,
			pathOn("get", "/healthz"):                        false,
		},
	},
	{
		name: "namespaces without resources match resource requests in those namespaces only",
		rule: resource.AccessKeyScopeRule{Namespaces: []string{"default"}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):                 true,
			onCluster("get", "", "secrets", "", "default", "s"):              true,
			onCluster("get", "apps", "deployments", "scale", "default", "d"): true,
			onCluster("get", "", "pods", "", "kube-system", "p"):             false,
			onCluster("get", "", "pods", "", "Default", "p"):                 false,
			onCluster("get", "", "nodes", "", "", "n"):                       false,
			pathOn("get", "/healthz"):                                        false,
		},
	},
	{
		name: "namespaces and resources must both match",
		rule: resource.AccessKeyScopeRule{Namespaces: []string{"default"}, Resources: []resource.GroupResources{gr("", "pods")}},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):    true,
			onCluster("get", "", "pods", "", "other", "p"):      false,
			onCluster("get", "", "secrets", "", "default", "s"): false,
		},
	},
	{
		name: "an exact non-resource URL matches that path only",
		rule: resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz"}},
		requestsToExpected: map[Request]bool{
			pathOn("get", "/healthz"):                   true,
			pathOn("get", "/healthz/ready"):             false,
			pathOn("get", "/healthzfoo"):                false,
			pathOn("get", "/Healthz"):                   false,
			onCluster("get", "", "healthz", "", "", ""): false,
		},
	},
	{
		name: "a final star step matches the paths below and not the parent or a longer name",
		rule: resource.AccessKeyScopeRule{NonResourceURLs: []string{"/apis/*"}},
		requestsToExpected: map[Request]bool{
			pathOn("get", "/apis/apps"):    true,
			pathOn("get", "/apis/apps/v1"): true,
			pathOn("get", "/apis"):         false,
			pathOn("get", "/apisfoo"):      false,
			pathOn("get", "/api/v1"):       false,
		},
	},
	{
		name: "a star URL matches every path and no resource request",
		rule: resource.AccessKeyScopeRule{NonResourceURLs: []string{"*"}},
		requestsToExpected: map[Request]bool{
			pathOn("get", "/"):                              true,
			pathOn("delete", "/anything/at/all"):            true,
			onCluster("get", "", "pods", "", "default", ""): false,
		},
	},
	{
		name: "a rule without resources, namespaces or URLs matches both kinds of request",
		rule: resource.AccessKeyScopeRule{Verbs: []string{"get"}},
		requestsToExpected: map[Request]bool{
			pathOn("get", "/metrics"):                        true,
			onCluster("get", "", "pods", "", "default", "p"): true,
			onCluster("list", "", "pods", "", "default", ""): false,
		},
	},
	{
		name: "requestTargets limit the targets",
		rule: resource.AccessKeyScopeRule{RequestTargets: targets(tMgmt, tSpace)},
		requestsToExpected: map[Request]bool{
			mgmtPath("get", "/version"):                   true,
			inSpace("a", "s1", "get", "pods", "default"):  true,
			pathOn("get", "/version"):                     false,
			inPVC("a", "vc1", "get", "pods", "default"):   false,
			inVC("vc1", "host", "get", "pods", "default"): false,
		},
	},
	{
		name: "cluster restricts the rule to Cluster requests to that cluster",
		rule: resource.AccessKeyScopeRule{Cluster: "c1"},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):                 true,
			pathOn("get", "/healthz"):                                        true,
			{Verb: "get", Path: "/healthz", Target: tCluster, Cluster: "c2"}: false,
			mgmtPath("get", "/version"):                                      false,
			{Verb: "get", Path: "/healthz", Target: tVC, Cluster: "c1", VirtualCluster: "v", VirtualClusterNamespace: "h"}: false,
			{Verb: "get", Path: "/healthz", Target: tPVC, Cluster: "c1", Project: "a", VirtualCluster: "v"}:                false,
			{Verb: "get", Path: "/healthz", Target: tSpace, Cluster: "c1", Project: "a", Space: "s"}:                       false,
		},
	},
	{
		name: "virtualClusters restrict the rule to matching virtual cluster requests",
		rule: resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Name: "vc1"}}},
		requestsToExpected: map[Request]bool{
			inVC("vc1", "host", "get", "pods", "default"):               true,
			inPVC("a", "vc1", "get", "pods", "default"):                 true,
			inVC("vc2", "host", "get", "pods", "default"):               false,
			inPVC("a", "vc2", "get", "pods", "default"):                 false,
			mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc1"): false,
			onCluster("get", "", "pods", "", "default", "p"):            false,
			inSpace("a", "vc1", "get", "pods", "default"):               false,
		},
	},
	{
		name: "a virtualClusters namespace narrows to virtual clusters in that namespace",
		rule: resource.AccessKeyScopeRule{VirtualClusters: []resource.AccessKeyVirtualCluster{{Namespace: "host"}, {Name: "vc9", Namespace: "p-b"}}},
		requestsToExpected: map[Request]bool{
			inVC("vc1", "host", "get", "pods", "default"):  true,
			inVC("vc2", "host", "get", "pods", "default"):  true,
			inVC("vc1", "other", "get", "pods", "default"): false,
			inPVC("b", "vc9", "get", "pods", "default"):    true,
			inPVC("a", "vc9", "get", "pods", "default"):    false,
		},
	},
	{
		name: "all fields of a rule must match together",
		rule: resource.AccessKeyScopeRule{
			Verbs: []string{"get"}, Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"p"},
			Namespaces: []string{"default"}, RequestTargets: targets(tCluster), Cluster: "c1",
		},
		requestsToExpected: map[Request]bool{
			onCluster("get", "", "pods", "", "default", "p"):                                                  true,
			onCluster("list", "", "pods", "", "default", "p"):                                                 false,
			onCluster("get", "", "pods", "", "default", "q"):                                                  false,
			onCluster("get", "", "pods", "", "other", "p"):                                                    false,
			onCluster("get", "", "secrets", "", "default", "p"):                                               false,
			{Verb: "get", Resource: "pods", Namespace: "default", Name: "p", Target: tCluster, Cluster: "c2"}: false,
		},
	},
}

func TestRuleMatches(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			scope := &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{tc.rule}}
			c, err := Compile(scope)
			require.NoError(t, err)
			for req, want := range tc.requestsToExpected {
				require.NoError(t, req.Validate(), "%s", req)
				d := c.Evaluate(req)
				assert.Equal(t, want, d.Allowed, "%s: %s", req, c.Explain(req).Reason)
				assert.Equal(t, want, refAllows(scope, req), "reference disagrees on %s", req)
				if want {
					assert.Equal(t, "spec.scope.rules[0]", d.Entry)
				}
			}
		})
	}
}

// truthTableScopes are the scopes whose decisions on every generated request the
// engine and the reference implementation must agree on.
func truthTableScopes() []*resource.AccessKeyScope {
	var out []*resource.AccessKeyScope
	for _, tc := range ruleCases {
		out = append(out, &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{tc.rule}})
	}
	out = append(out,
		&resource.AccessKeyScope{},
		&resource.AccessKeyScope{Projects: projects("a")},
		&resource.AccessKeyScope{Projects: projects("*")},
		&resource.AccessKeyScope{Projects: projects("b", "a")},
		&resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{Project: "a", Space: "s1"}}},
		&resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{Project: "b", Space: "*"}}},
		&resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "vc1"}}},
		&resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "*"}}},
		&resource.AccessKeyScope{AllowServiceCli: true},
		&resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("a")},
		&resource.AccessKeyScope{AllowServiceCli: true, Projects: projects("*")},
		&resource.AccessKeyScope{AllowServiceCli: true, VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "b", VirtualCluster: "vc2"}}},
		&resource.AccessKeyScope{AllowServiceCli: true, Spaces: []resource.AccessKeyScopeSpace{{Project: "a", Space: "s1"}}},
		&resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{
			{Verbs: []string{"get", "list"}, Resources: []resource.GroupResources{gr("", "pods", "*/status"), gr(mgmtG, "projects")}, Namespaces: []string{"", "p-a"}},
			{NonResourceURLs: []string{"/healthz", "/api/*"}, RequestTargets: targets(tCluster, tMgmt)},
			{Resources: []resource.GroupResources{gr(mgmtG, "virtualclusterinstances/*")}, ResourceNames: []string{"vc1"}},
		}},
	)
	return out
}

// TestTruthTableAgreesWithReference runs every scope above against the cross product
// of verbs × groups × resources × subresources × namespaces × names × targets (and
// non-resource paths), and requires the compiled engine, the one-shot Evaluate and the
// naive reference implementation to agree on each.
func TestTruthTableAgreesWithReference(t *testing.T) {
	reqs := allRequests()
	for i, scope := range truthTableScopes() {
		c, err := Compile(scope)
		require.NoError(t, err, "scope %d", i)
		allowed := 0
		for _, req := range reqs {
			want := req.Validate() == nil && refAllowsValid(scope, req)
			got := c.Evaluate(req)
			if got.Allowed != want {
				require.FailNow(t, fmt.Sprintf("scope %d %+v: %s: engine says %v (%s), reference says %v", i, *scope, req, got.Allowed, c.Explain(req).Reason, want))
			}
			if got.Allowed {
				allowed++
			}
		}
		// A few spot checks of the one-shot path, which compiles per call.
		for _, req := range reqs[:len(reqs):len(reqs)][:200] {
			assert.Equal(t, c.Evaluate(req).Allowed, Evaluate(scope, req).Allowed)
		}
		t.Logf("scope %d allows %d of %d requests", i, allowed, len(reqs))
	}
}
