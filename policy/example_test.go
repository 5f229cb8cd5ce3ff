package policy_test

import (
	"fmt"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
)

// A key scoped to one project may do everything about that project, and nothing else.
func Example() {
	scope := &resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: "team-a"}},
	}
	// The server builds the request from the route it matched; the namespace of
	// project "team-a" is "p-team-a", so the request is about project "team-a".
	get := policy.Request{
		Verb: "get", APIGroup: resource.Group, Resource: "virtualclusterinstances",
		Namespace: "p-team-a", Name: "dev", Project: "team-a",
		Target: resource.RequestTargetManagement,
	}
	fmt.Println(policy.Evaluate(scope, get))

	other := get
	other.Namespace, other.Project = "p-team-b", "team-b"
	fmt.Println(policy.Evaluate(scope, other))
	// Output:
	// allowed by spec.scope.projects[0] (project "team-a")
	// denied: no entry of spec.scope allows get virtualclusterinstances.management.service "dev" in namespace "p-team-b" (Management, project "team-b"): spec.scope.projects[0]: it is for project "team-a", not "team-b"
}

// Compile a scope once and evaluate each request against it without allocating.
func ExampleCompile() {
	compiled, err := policy.Compile(&resource.AccessKeyScope{
		AllowServiceCli: true,
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "team-a", VirtualCluster: "dev"}},
	})
	if err != nil {
		panic(err)
	}
	for _, req := range []policy.Request{
		{Verb: "get", Path: "/version", Target: resource.RequestTargetManagement},
		{Verb: "create", Resource: "pods", Namespace: "default", Target: resource.RequestTargetProjectVirtualCluster,
			Project: "team-a", VirtualCluster: "dev"},
		{Verb: "delete", APIGroup: resource.Group, Resource: "projects", Name: "team-a", Project: "team-a",
			Target: resource.RequestTargetManagement},
	} {
		d := compiled.Evaluate(req)
		fmt.Println(d.Allowed, d.Entry)
	}
	// Output:
	// true spec.scope.allowServiceCli
	// true spec.scope.virtualClusters[0]
	// false
}

// Explain gives the account of a denial, entry by entry, for the message of a 403.
func ExampleCompiled_Explain() {
	compiled := policy.MustCompile(&resource.AccessKeyScope{
		Rules: []resource.AccessKeyScopeRule{{
			Verbs:     []string{"get", "list"},
			Resources: []resource.GroupResources{{Group: "", Resources: []string{"pods", "pods/log"}}},
			Cluster:   "prod",
		}},
	})
	req := policy.Request{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "web", Name: "web-0",
		Target: resource.RequestTargetCluster, Cluster: "prod"}
	fmt.Println(compiled.Evaluate(req).Reason)
	fmt.Println(compiled.Explain(req).Reason)
	// Output:
	// denied: no entry of spec.scope allows the request
	// denied: no entry of spec.scope allows create pods/exec "web-0" in namespace "web" (Cluster, cluster "prod"): spec.scope.rules[0]: it allows verbs ["get" "list"], not "create"
}

// A token issuer refuses a requested scope that is wider than the caller's own.
func ExampleCovers() {
	caller := &resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: "team-a"}},
	}
	narrower := &resource.AccessKeyScope{
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "team-a", VirtualCluster: "dev"}},
	}
	wider := &resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: "*"}},
	}
	ok, _ := policy.Covers(caller, narrower)
	fmt.Println(ok)
	ok, gaps := policy.Covers(caller, wider)
	fmt.Println(ok)
	for _, g := range gaps {
		fmt.Println(g.Field)
	}
	// Output:
	// true
	// false
	// spec.scope.projects[0]
}

// Validate reports every problem of a scope with its field path, ready for a 422.
func ExampleValidate() {
	scope := &resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: ""}},
		Rules: []resource.AccessKeyScopeRule{{
			ResourceNames:   []string{"web"},
			NonResourceURLs: []string{"/healthz", "/api/*/v1"},
			RequestTargets:  []resource.RequestTarget{"Everything"},
		}},
	}
	for _, e := range policy.Validate(scope, resource.NewPath("spec", "scope")) {
		fmt.Println(e.Field)
	}
	// Output:
	// spec.scope.projects[0].project
	// spec.scope.rules[0].resourceNames
	// spec.scope.rules[0].nonResourceURLs[1]
	// spec.scope.rules[0].requestTargets[0]
}

// A request whose path was not cleaned by the router is refused whatever the scope.
func ExampleRequest_Validate() {
	req := policy.Request{Verb: "get", Path: "/healthz/../secrets", Target: resource.RequestTargetCluster, Cluster: "prod"}
	fmt.Println(req.Validate())
	fmt.Println(policy.Evaluate(nil, req).Allowed)
	// Output:
	// malformed request: the non-resource path is not a canonical absolute path
	// false
}
