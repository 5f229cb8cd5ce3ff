package policy

import (
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
)

// Shorthands for the tests.

const (
	tMgmt    = resource.RequestTargetManagement
	tCluster = resource.RequestTargetCluster
	tVC      = resource.RequestTargetVirtualCluster
	tSpace   = resource.RequestTargetProjectSpace
	tPVC     = resource.RequestTargetProjectVirtualCluster
	mgmtG    = resource.Group
)

// onCluster returns a resource request to the connected cluster "c1".
func onCluster(verb, group, res, sub, ns, name string) Request {
	return Request{Verb: verb, APIGroup: group, Resource: res, Subresource: sub, Namespace: ns, Name: name,
		Target: tCluster, Cluster: "c1"}
}

// pathOn returns a non-resource request to the connected cluster "c1".
func pathOn(verb, path string) Request {
	return Request{Verb: verb, Path: path, Target: tCluster, Cluster: "c1"}
}

// mgmtPath returns a non-resource request to the management API.
func mgmtPath(verb, path string) Request {
	return Request{Verb: verb, Path: path, Target: tMgmt}
}

// mgmtReq returns a Management request on a resource of the management group, with
// Project derived the way a server with the default prefix "p-" derives it.
func mgmtReq(verb, res, sub, ns, name string) Request {
	r := Request{Verb: verb, APIGroup: mgmtG, Resource: res, Subresource: sub, Namespace: ns, Name: name, Target: tMgmt}
	r.Project = projectOf(r)
	return r
}

// projectOf derives a Management request's Project with the default prefix.
func projectOf(r Request) string {
	if p, ok := strings.CutPrefix(r.Namespace, resource.DefaultProjectNamespacePrefix); ok {
		return p
	}
	if r.APIGroup == mgmtG && r.Resource == resourceProjects && r.Namespace == "" {
		return r.Name
	}
	return ""
}

// inSpace returns a request to space s of project p.
func inSpace(p, s, verb, res, ns string) Request {
	return Request{Verb: verb, Resource: res, Namespace: ns, Target: tSpace, Project: p, Space: s}
}

// inPVC returns a request to virtual cluster vc of project p.
func inPVC(p, vc, verb, res, ns string) Request {
	return Request{Verb: verb, Resource: res, Namespace: ns, Target: tPVC, Project: p, VirtualCluster: vc,
		VirtualClusterNamespace: resource.DefaultProjectNamespacePrefix + p}
}

// inVC returns a request to the legacy virtual cluster vc in host namespace ns.
func inVC(vc, hostNS, verb, res, ns string) Request {
	return Request{Verb: verb, Resource: res, Namespace: ns, Target: tVC, VirtualCluster: vc, VirtualClusterNamespace: hostNS}
}

func projects(names ...string) []resource.AccessKeyScopeProject {
	out := make([]resource.AccessKeyScopeProject, len(names))
	for i, n := range names {
		out[i] = resource.AccessKeyScopeProject{Project: n}
	}
	return out
}

func gr(group string, res ...string) resource.GroupResources {
	return resource.GroupResources{Group: group, Resources: res}
}

func targets(ts ...resource.RequestTarget) []resource.RequestTarget { return ts }

// requestContexts are the target fields the generated requests are sent with.
var requestContexts = []Request{
	{Target: tMgmt},
	{Target: tCluster, Cluster: "c1"},
	{Target: tCluster, Cluster: "c2"},
	{Target: tVC, VirtualCluster: "vc1", VirtualClusterNamespace: "host"},
	{Target: tVC, VirtualCluster: "vc2", VirtualClusterNamespace: "p-a"},
	{Target: tSpace, Project: "a", Space: "s1"},
	{Target: tSpace, Project: "b", Space: "s2"},
	{Target: tPVC, Project: "a", VirtualCluster: "vc1", VirtualClusterNamespace: "p-a"},
	{Target: tPVC, Project: "b", VirtualCluster: "vc2"},
}

// allRequests is the cross product verbs × groups × resources × subresources ×
// namespaces × names × targets, plus non-resource paths × verbs × targets, for the
// truth tables. Management requests get their Project as a server would set it.
func allRequests() []Request {
	allRequestsOnce.Do(func() { allRequestsList = makeAllRequests() })
	return allRequestsList
}

var (
	allRequestsOnce sync.Once
	allRequestsList []Request
)

func makeAllRequests() []Request {
	verbs := []string{"get", "list", "create", "delete", "GET"}
	groups := []string{"", "apps", mgmtG}
	resources := []string{"pods", "deployments", "projects", "virtualclusterinstances", "spaceinstances", "directclusterendpointtokens"}
	subs := []string{"", "status", "scale"}
	namespaces := []string{"", "default", "p-a", "p-b"}
	names := []string{"", "a", "vc1", "s1"}
	paths := []string{"/", "/version", "/versionx", "/api", "/api/v1", "/api/v1/pods", "/apis", "/apis/apps",
		"/apis/apps/v1", "/apis/apps/v1/deployments", "/healthz", "/healthz/ready", "/healthzfoo", "/apisfoo"}
	var out []Request
	for _, c := range requestContexts {
		for _, v := range verbs {
			for _, g := range groups {
				for _, res := range resources {
					for _, sub := range subs {
						for _, ns := range namespaces {
							for _, n := range names {
								r := c
								r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Namespace, r.Name = v, g, res, sub, ns, n
								if r.Target == tMgmt {
									r.Project = projectOf(r)
								}
								out = append(out, r)
							}
						}
					}
				}
			}
			for _, p := range paths {
				r := c
				r.Verb, r.Path = v, p
				out = append(out, r)
			}
		}
	}
	return out
}
