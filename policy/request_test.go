package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRequestValidateAcceptsWellFormedRequestsOfEveryTarget(t *testing.T) {
	for _, req := range []Request{
		mgmtReq("get", "projects", "", "", "a"),
		mgmtReq("create", "projects", "migratevirtualclusterinstance", "", "a"),
		mgmtReq("list", "projects", "", "", ""),
		mgmtReq("list", "virtualclusterinstances", "", "p-a", ""),
		mgmtReq("list", "virtualclusterinstances", "", "", ""),
		mgmtReq("create", "directclusterendpointtokens", "", "", ""),
		{Verb: "get", APIGroup: mgmtG, Resource: "virtualclusterinstances", Namespace: "custom-a", Name: "x", Project: "a", Target: tMgmt},
		mgmtPath("get", "/"),
		mgmtPath("get", "/version"),
		onCluster("get", "", "pods", "log", "default", "p"),
		pathOn("get", "/healthz/ready"),
		inVC("vc1", "host", "get", "pods", "default"),
		{Verb: "get", Path: "/x", Target: tVC, Cluster: "c1", VirtualCluster: "v", VirtualClusterNamespace: "h"},
		inSpace("a", "s1", "get", "pods", ""),
		{Verb: "get", Path: "/x", Target: tSpace, Cluster: "c1", Project: "a", Space: "s"},
		inPVC("a", "vc1", "get", "pods", ""),
		{Verb: "get", Path: "/x", Target: tPVC, Project: "a", VirtualCluster: "v"},
	} {
		assert.NoError(t, req.Validate(), "%s", req)
	}
}

func TestRequestValidateRejectsMalformedRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want error
	}{
		{"no verb", Request{Path: "/x", Target: tMgmt}, errNoVerb},
		{"no target", Request{Verb: "get", Path: "/x"}, errUnknownTarget},
		{"lower-case target", Request{Verb: "get", Path: "/x", Target: "management"}, errUnknownTarget},
		{"both resource and path", Request{Verb: "get", Resource: "pods", Path: "/x", Target: tCluster, Cluster: "c"}, errResourceAndPath},
		{"neither resource nor path", Request{Verb: "get", Target: tMgmt}, errNeitherResOrPath},
		{"non-resource with a namespace", Request{Verb: "get", Path: "/x", Namespace: "n", Target: tMgmt}, errResourceFieldsNR},
		{"non-resource with a group", Request{Verb: "get", Path: "/x", APIGroup: "g", Target: tMgmt}, errResourceFieldsNR},
		{"subresource without a name", Request{Verb: "get", Resource: "pods", Subresource: "log", Target: tCluster, Cluster: "c"}, errSubresourceNoName},
		{"star verb", Request{Verb: "*", Path: "/x", Target: tMgmt}, errBadValue},
		{"star resource", Request{Verb: "get", Resource: "*", Target: tCluster, Cluster: "c"}, errBadValue},
		{"star name", Request{Verb: "get", Resource: "pods", Name: "*", Target: tCluster, Cluster: "c"}, errBadValue},
		{"star project", Request{Verb: "get", Path: "/x", Target: tSpace, Project: "*", Space: "s"}, errBadValue},
		{"slash in a namespace", Request{Verb: "get", Resource: "pods", Namespace: "a/../b", Target: tCluster, Cluster: "c"}, errBadValue},
		{"slash in a resource", Request{Verb: "get", Resource: "pods/log", Target: tCluster, Cluster: "c"}, errBadValue},
		{"NUL in a name", Request{Verb: "get", Resource: "pods", Name: "x\x00", Target: tCluster, Cluster: "c"}, errBadValue},
		{"management with a cluster", Request{Verb: "get", Path: "/x", Target: tMgmt, Cluster: "c"}, errMgmtFields},
		{"management with a virtual cluster", Request{Verb: "get", Path: "/x", Target: tMgmt, VirtualCluster: "v"}, errMgmtFields},
		{"management path with a project", Request{Verb: "get", Path: "/x", Target: tMgmt, Project: "a"}, errMgmtProject},
		{"cluster-scoped object with a project", Request{Verb: "get", APIGroup: mgmtG, Resource: "accesskeys", Name: "k", Project: "a", Target: tMgmt}, errMgmtProject},
		{"namespace of another project", Request{Verb: "get", APIGroup: mgmtG, Resource: "virtualclusterinstances", Namespace: "p-b", Project: "a", Target: tMgmt}, errMgmtProject},
		{"namespace equal to the project", Request{Verb: "get", APIGroup: mgmtG, Resource: "virtualclusterinstances", Namespace: "a", Project: "a", Target: tMgmt}, errMgmtProject},
		{"project object without its project", Request{Verb: "get", APIGroup: mgmtG, Resource: "projects", Name: "a", Target: tMgmt}, errProjectName},
		{"project object of another project", Request{Verb: "get", APIGroup: mgmtG, Resource: "projects", Name: "a", Project: "b", Target: tMgmt}, errProjectName},
		{"cluster without a cluster", Request{Verb: "get", Path: "/x", Target: tCluster}, errClusterFields},
		{"cluster with a project", Request{Verb: "get", Path: "/x", Target: tCluster, Cluster: "c", Project: "a"}, errClusterFields},
		{"virtual cluster without a namespace", Request{Verb: "get", Path: "/x", Target: tVC, VirtualCluster: "v"}, errVClusterFields},
		{"virtual cluster with a project", Request{Verb: "get", Path: "/x", Target: tVC, VirtualCluster: "v", VirtualClusterNamespace: "h", Project: "a"}, errVClusterFields},
		{"space without a space", Request{Verb: "get", Path: "/x", Target: tSpace, Project: "a"}, errSpaceFields},
		{"space with a virtual cluster", Request{Verb: "get", Path: "/x", Target: tSpace, Project: "a", Space: "s", VirtualCluster: "v"}, errSpaceFields},
		{"project virtual cluster without a project", Request{Verb: "get", Path: "/x", Target: tPVC, VirtualCluster: "v"}, errProjectVCFields},
		{"project virtual cluster with a space", Request{Verb: "get", Path: "/x", Target: tPVC, Project: "a", VirtualCluster: "v", Space: "s"}, errProjectVCFields},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.req.Validate())
		})
	}
}

func TestCanonicalPathAcceptsOnlyTheRoutersCleanPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/":                   true,
		"/version":            true,
		"/apis/apps/v1":       true,
		"/a.b/c-d/e_f":        true,
		"/.well-known/openid": true,
		"":                    false,
		"version":             false,
		"//version":           false,
		"/apis//apps":         false,
		"/version/":           false,
		"/./version":          false,
		"/version/.":          false,
		"/version/..":         false,
		"/version/../secret":  false,
		"/..":                 false,
		"/api/%2e%2e/secret":  false,
		"/api%2Fv1":           false,
		"/version;x=1":        false,
		"/version#frag":       false,
		"/version?x=1":        false,
		"/version\x00":        false,
		"/ver\nsion":          false,
		"/api\\v1":            false,
		"/healthz*":           false,
	} {
		assert.Equal(t, want, canonicalPath(p), "%q", p)
	}
}

func TestRequestStringNamesEveryField(t *testing.T) {
	assert.Equal(t, `get virtualclusterinstances.management.service "vc1" in namespace "p-a" (Management, project "a")`,
		mgmtReq("get", "virtualclusterinstances", "", "p-a", "vc1").String())
	assert.Equal(t, `get pods/log "p" in namespace "default" (Cluster, cluster "c1")`,
		onCluster("get", "", "pods", "log", "default", "p").String())
	assert.Equal(t, `get /version (Management)`, mgmtPath("get", "/version").String())
	assert.Equal(t, `get pods (ProjectVirtualCluster, project "a", virtual cluster "vc1", virtual cluster namespace "p-a")`,
		inPVC("a", "vc1", "get", "pods", "").String())
	assert.Equal(t, `  (no target)`, Request{}.String())
}
