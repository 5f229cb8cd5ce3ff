package policy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// The rows of reliability-security §4.6 (SEC-AUTHZ-*). SEC-AUTHZ-COVERS is in
// covers_test.go and FUZZ-POLICY in fuzz_test.go.

// SEC-AUTHZ-TRUTH: verbs × groups × resources × subresources × namespaces × names,
// with "*", "*/sub", "res/sub", the "" group and empty versus non-empty resourceNames.
// TestRuleMatches and TestTruthTableAgreesWithReference hold the full tables; this is
// the row's own table over exactly the forms it names.
func TestSecAuthzTruthTableOverResourceForms(t *testing.T) {
	verbs := []string{"get", "delete"}
	groups := []string{"", "apps"}
	resources := []string{"pods", "deployments"}
	subs := []string{"", "status", "log"}
	nss := []string{"", "default"}
	names := []string{"", "a", "b"}
	for _, rule := range []resource.AccessKeyScopeRule{
		{Resources: []resource.GroupResources{gr("", "*")}},
		{Resources: []resource.GroupResources{gr("apps", "*")}},
		{Resources: []resource.GroupResources{gr("", "*/status")}},
		{Resources: []resource.GroupResources{gr("", "pods/log")}},
		{Resources: []resource.GroupResources{gr("", "pods/*")}},
		{Resources: []resource.GroupResources{gr("", "pods")}},
		{Resources: []resource.GroupResources{gr("", "pods")}, ResourceNames: []string{"a"}},
		{Resources: []resource.GroupResources{gr("", "pods", "pods/log")}, ResourceNames: []string{"a", "b"}},
		{Resources: []resource.GroupResources{gr("", "pods")}, Verbs: []string{"get"}, Namespaces: []string{"default"}},
		{Resources: []resource.GroupResources{gr("", "pods"), gr("apps", "deployments/status")}, Namespaces: []string{""}},
	} {
		scope := rules(rule)
		c := MustCompile(scope)
		for _, v := range verbs {
			for _, g := range groups {
				for _, res := range resources {
					for _, sub := range subs {
						for _, ns := range nss {
							for _, n := range names {
								req := onCluster(v, g, res, sub, ns, n)
								if req.Validate() != nil {
									continue
								}
								want := expectedByHand(rule, req)
								require.Equal(t, want, c.Evaluate(req).Allowed, "%+v: %s", rule, req)
							}
						}
					}
				}
			}
		}
	}
}

// expectedByHand spells the resource rules out for one request, case by case.
func expectedByHand(r resource.AccessKeyScopeRule, req Request) bool {
	if len(r.Verbs) > 0 && !refIn(r.Verbs, req.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 && !refIn(r.Namespaces, req.Namespace) {
		return false
	}
	if len(r.ResourceNames) > 0 && !refIn(r.ResourceNames, req.Name) {
		return false
	}
	for _, g := range r.Resources {
		if g.Group != req.APIGroup {
			continue
		}
		for _, s := range g.Resources {
			switch {
			case s == "*":
				return true
			case s == "*/status":
				if req.Subresource == "status" {
					return true
				}
			case s == "pods/*":
				if req.Resource == "pods" && req.Subresource != "" {
					return true
				}
			case strings.Contains(s, "/"):
				if s == req.Resource+"/"+req.Subresource {
					return true
				}
			default:
				if s == req.Resource && req.Subresource == "" {
					return true
				}
			}
		}
	}
	return false
}

// SEC-AUTHZ-CASE: `GET` vs `get`, `VCI` vs `vcis`, `Team-A` vs `team-a` never match;
// names in the wrong case are also rejected earlier, by validation.
func TestSecAuthzCaseNeverMatchesAcrossCase(t *testing.T) {
	scope := &resource.AccessKeyScope{
		Projects: projects("team-a"),
		Rules: []resource.AccessKeyScopeRule{{
			Verbs:      []string{"get"},
			Resources:  []resource.GroupResources{gr(mgmtG, "virtualclusterinstances")},
			Namespaces: []string{"team-a"},
		}},
	}
	c := MustCompile(scope)
	vci := func(verb, res, ns string) Request {
		return Request{Verb: verb, APIGroup: mgmtG, Resource: res, Namespace: ns, Name: "x", Target: tCluster, Cluster: "c1"}
	}
	assert.True(t, c.Evaluate(vci("get", "virtualclusterinstances", "team-a")).Allowed)
	assert.False(t, c.Evaluate(vci("GET", "virtualclusterinstances", "team-a")).Allowed)
	assert.False(t, c.Evaluate(vci("get", "VirtualClusterInstances", "team-a")).Allowed)
	assert.False(t, c.Evaluate(vci("get", "VCI", "team-a")).Allowed)
	assert.False(t, c.Evaluate(vci("get", "vcis", "team-a")).Allowed)
	assert.False(t, c.Evaluate(vci("get", "virtualclusterinstances", "Team-A")).Allowed)
	assert.True(t, c.Evaluate(mgmtReq("get", "projects", "", "", "team-a")).Allowed)
	assert.False(t, c.Evaluate(mgmtReq("get", "projects", "", "", "Team-A")).Allowed)
	assert.False(t, c.Evaluate(inSpace("TEAM-A", "s", "get", "pods", "")).Allowed)

	// And validation refuses the wrong case where names are names.
	assert.NotEmpty(t, Validate(&resource.AccessKeyScope{Projects: projects("Team-A")}, root))
	assert.NotEmpty(t, Validate(rules(resource.AccessKeyScopeRule{Namespaces: []string{"Team-A"}}), root))
	assert.NotEmpty(t, Validate(rules(resource.AccessKeyScopeRule{Cluster: "C1"}), root))
}

// SEC-AUTHZ-EMPTY. Our spec's table says an empty verbs, resources or namespaces list
// means "every" (unlike RBAC, where it means nothing); an empty resourceNames list
// means every name; a scope with no entries denies everything.
func TestSecAuthzEmptyListsMeanEveryAndAnEmptyScopeDenies(t *testing.T) {
	req := onCluster("delete", "apps", "deployments", "scale", "prod", "web")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{Verbs: []string{}}), req).Allowed, "empty verbs = every verb")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{}}), req).Allowed, "empty resources = every resource")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{{Group: "apps"}}}), req).Allowed,
		"empty resources of a group = every resource of it")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{Namespaces: []string{}}), req).Allowed, "empty namespaces = every namespace")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{Resources: []resource.GroupResources{gr("apps", "deployments/scale")},
		ResourceNames: []string{}}), req).Allowed, "empty resourceNames = every name")
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{RequestTargets: []resource.RequestTarget{}}), req).Allowed, "empty requestTargets = every target")

	for name, scope := range map[string]*resource.AccessKeyScope{
		"no entries":          {},
		"empty rules list":    {Rules: []resource.AccessKeyScopeRule{}},
		"empty lists of all":  {Projects: []resource.AccessKeyScopeProject{}, Spaces: []resource.AccessKeyScopeSpace{}, VirtualClusters: []resource.AccessKeyScopeVirtualCluster{}},
		"allowServiceCli off": {AllowServiceCli: false},
	} {
		for _, r := range []Request{req, mgmtPath("get", "/version"), mgmtReq("get", "projects", "", "", "a")} {
			assert.False(t, Evaluate(scope, r).Allowed, "%s: %s", name, r)
		}
	}
}

// SEC-AUTHZ-PATH: "/healthz*" never gets prefix semantics (it is invalid, and no valid
// URL pattern matches "/healthzfoo" except an exact one or "*"); "/api/*" does not
// match "/api"; a "*" mid-string is invalid; and a path with "..", "//", "%2F",
// "%2e%2e", ";", "#", NUL or a trailing "/" is denied as malformed, whatever the
// scope, so that the decision can only ever be the decision for the canonical path the
// router used.
func TestSecAuthzPathMatchesOnlyCanonicalPaths(t *testing.T) {
	assert.NotEmpty(t, Validate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz*"}}), root))
	assert.NotEmpty(t, Validate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/*/v1/*"}}), root))
	assert.NotEmpty(t, Validate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api/v*"}}), root))
	assert.False(t, Evaluate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz*"}}), pathOn("get", "/healthzfoo")).Allowed)
	assert.False(t, Evaluate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz/*"}}), pathOn("get", "/healthzfoo")).Allowed)
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/healthz/*"}}), pathOn("get", "/healthz/ready")).Allowed)
	assert.False(t, Evaluate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api/*"}}), pathOn("get", "/api")).Allowed)
	assert.True(t, Evaluate(rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/api/*"}}), pathOn("get", "/api/v1")).Allowed)

	wide := []*resource.AccessKeyScope{
		nil,
		rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"*"}}),
		rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/public/*"}}),
		{AllowServiceCli: true},
	}
	for _, raw := range []string{
		"/public/../secret", "/public/./x", "/public//x", "//public/x", "/public/x/",
		"/public/%2e%2e/secret", "/public%2F..%2Fsecret", "/public/x;secret", "/public/x#frag",
		"/public/x\x00", "/public/x?y", "/public\\..\\secret", "/version/", "/version/..", "/apis/../version",
	} {
		for _, s := range wide {
			d := Evaluate(s, pathOn("get", raw))
			assert.False(t, d.Allowed, "%q allowed by %+v", raw, s)
			assert.Contains(t, d.Reason, "malformed request")
			d = Evaluate(s, mgmtPath("get", raw))
			assert.False(t, d.Allowed, "%q allowed by %+v", raw, s)
		}
	}

	// Round trip through canonical path encoding: escaping each step and decoding it
	// again gives the same path, so the same decision.
	scope := rules(resource.AccessKeyScopeRule{NonResourceURLs: []string{"/public/*", "/version"}})
	c := MustCompile(scope)
	for _, p := range []string{"/public/x", "/public/a b", "/public/ü", "/version", "/secret", "/public/a+b"} {
		steps := strings.Split(p, "/")
		for i := range steps {
			steps[i] = url.PathEscape(steps[i])
		}
		decoded, err := url.PathUnescape(strings.Join(steps, "/"))
		require.NoError(t, err)
		require.Equal(t, p, decoded)
		assert.Equal(t, c.Evaluate(pathOn("get", p)), c.Evaluate(pathOn("get", decoded)))
	}
}

// SEC-AUTHZ-SCOPE: namespaced rules never grant cluster-scoped kinds and cluster
// rules never grant objects in a namespace (the CVE-2019-11247 lesson); a cluster-scoped
// kind of the management API can never be reached through a namespaced request.
func TestSecAuthzScopeNamespacedAndClusterScopedStayApart(t *testing.T) {
	namespaced := MustCompile(rules(resource.AccessKeyScopeRule{Namespaces: []string{"default"}}))
	assert.True(t, namespaced.Evaluate(onCluster("get", "", "pods", "", "default", "p")).Allowed)
	assert.False(t, namespaced.Evaluate(onCluster("get", "", "nodes", "", "", "n")).Allowed)
	assert.False(t, namespaced.Evaluate(onCluster("get", "rbac.authorization.k8s.io", "clusterroles", "", "", "admin")).Allowed)

	clusterScoped := MustCompile(rules(resource.AccessKeyScopeRule{Namespaces: []string{""}}))
	assert.True(t, clusterScoped.Evaluate(onCluster("get", "", "nodes", "", "", "n")).Allowed)
	assert.False(t, clusterScoped.Evaluate(onCluster("get", "", "pods", "", "default", "p")).Allowed)
	assert.False(t, clusterScoped.Evaluate(onCluster("get", "", "secrets", "", "kube-system", "s")).Allowed)

	// A project scope covers its namespace, never the cluster-scoped kinds...
	project := MustCompile(&resource.AccessKeyScope{Projects: projects("a")})
	assert.True(t, project.Evaluate(mgmtReq("get", "virtualclusterinstances", "", "p-a", "x")).Allowed)
	assert.False(t, project.Evaluate(mgmtReq("get", "accesskeys", "", "", "k")).Allowed)
	assert.False(t, project.Evaluate(mgmtReq("list", "directclusterendpointtokens", "", "", "")).Allowed)
	// ...and a cluster-scoped object addressed through the project's namespace is a
	// malformed request, not project b's object reachable with project a's scope.
	for _, res := range []string{"projects", "accesskeys", "directclusterendpointtokens"} {
		req := Request{Verb: "get", APIGroup: mgmtG, Resource: res, Namespace: "p-a", Name: "b", Project: "a", Target: tMgmt}
		assert.Equal(t, errClusterScopedNS, req.Validate())
		assert.False(t, project.Evaluate(req).Allowed)
	}
}
