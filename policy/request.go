package policy

import (
	"path"
	"strconv"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// Request is everything a scope decision needs to know about one request. The caller
// builds it from the route it matched, after the names in it were validated; the
// engine never parses a raw URL. See the package documentation for which fields each
// request target uses and how they are matched.
//
// A request is either a resource request (Resource set, Path empty) or a non-resource
// request (Path set, Resource empty). [Request.Validate] says whether a request is well
// formed; a request that is not is denied by every scope, nil included.
type Request struct {
	// Verb is the Kubernetes request verb in lower case: get, list, watch, create,
	// update, patch, delete, deletecollection for resource requests; the lower-case
	// HTTP method (get, post, put, ...) for non-resource requests.
	Verb string
	// APIGroup is the API group of a resource request; "" is the core group.
	APIGroup string
	// Resource is the lower-case plural resource name of a resource request, e.g.
	// "virtualclusterinstances". Empty for a non-resource request.
	Resource string
	// Subresource is the subresource, e.g. "status" or "migratevirtualclusterinstance";
	// empty for the main resource.
	Subresource string
	// Name is the object name from the URL. Empty for collection requests (list, watch
	// and deletecollection without a single-object field selector) and for create,
	// as in Kubernetes: the name in a create body is not an authorization attribute.
	Name string
	// Namespace is the namespace of a resource request; empty for cluster-scoped
	// resources and for requests across all namespaces.
	Namespace string
	// Path is the path of a non-resource request below the API root, e.g. "/version",
	// after the router cleaned and decoded it. It must be canonical (see
	// [Request.Validate]).
	Path string
	// Target is what the request is addressed to: the management API itself, a
	// connected cluster, a (legacy) virtual cluster, or a project's space or virtual
	// cluster.
	Target resource.RequestTarget
	// Cluster is the connected cluster a Cluster request goes to (required for that
	// target). For VirtualCluster, ProjectSpace and ProjectVirtualCluster requests it may
	// name the hosting cluster, for information only; rules' cluster field matches
	// Cluster requests only. Empty for Management requests.
	Cluster string
	// Project is the project the request concerns. For ProjectSpace and
	// ProjectVirtualCluster requests it is the project in the path (required). For a
	// Management request it is set by the caller when the request is about a project:
	// the Project object itself (Project equals Name) or an object in the project's
	// namespace (the namespace is the configured prefix plus Project); otherwise it is
	// empty. Empty for Cluster and VirtualCluster requests.
	Project string
	// Space is the space of a ProjectSpace request (required there, empty otherwise).
	Space string
	// VirtualCluster is the virtual cluster of a VirtualCluster or ProjectVirtualCluster
	// request (required there, empty otherwise).
	VirtualCluster string
	// VirtualClusterNamespace is the namespace of the virtual cluster: the host
	// namespace of a legacy VirtualCluster request (required there), or the namespace of
	// the VirtualClusterInstance of a ProjectVirtualCluster request (optional there).
	// Rules' virtualClusters entries match it. Empty for other targets.
	VirtualClusterNamespace string
}

// IsResourceRequest reports whether r addresses a resource (Resource is set) rather
// than a non-resource path.
func (r Request) IsResourceRequest() bool { return r.Resource != "" }

// target bits, one per request target; a grant holds a set of them.
const (
	bitManagement uint8 = 1 << iota
	bitCluster
	bitVirtualCluster
	bitProjectSpace
	bitProjectVirtualCluster

	bitsAll            = bitManagement | bitCluster | bitVirtualCluster | bitProjectSpace | bitProjectVirtualCluster
	bitsProject        = bitManagement | bitProjectSpace | bitProjectVirtualCluster
	bitsVirtualCluster = bitVirtualCluster | bitProjectVirtualCluster
)

// allTargets lists the request targets in the order of their bits.
var allTargets = [...]resource.RequestTarget{
	resource.RequestTargetManagement,
	resource.RequestTargetCluster,
	resource.RequestTargetVirtualCluster,
	resource.RequestTargetProjectSpace,
	resource.RequestTargetProjectVirtualCluster,
}

// targetBit returns the bit of t, or 0 for an unknown target.
func targetBit(t resource.RequestTarget) uint8 {
	switch t {
	case resource.RequestTargetManagement:
		return bitManagement
	case resource.RequestTargetCluster:
		return bitCluster
	case resource.RequestTargetVirtualCluster:
		return bitVirtualCluster
	case resource.RequestTargetProjectSpace:
		return bitProjectSpace
	case resource.RequestTargetProjectVirtualCluster:
		return bitProjectVirtualCluster
	}
	return 0
}

// malformedError says why a request is malformed. Its texts are made once, so that a
// compiled scope denies a malformed request without allocating.
type malformedError struct {
	msg    string // "malformed request: ..."
	reason string // "denied: malformed request: ..."
}

func newMalformed(detail string) *malformedError {
	msg := "malformed request: " + detail
	return &malformedError{msg: msg, reason: "denied: " + msg}
}

func (e *malformedError) Error() string { return e.msg }

// The reasons a request is malformed.
var (
	errNoVerb            = newMalformed("verb is empty")
	errResourceAndPath   = newMalformed("both a resource and a non-resource path are set")
	errNeitherResOrPath  = newMalformed("neither a resource nor a non-resource path is set")
	errResourceFieldsNR  = newMalformed("a non-resource request has an API group, subresource, name or namespace")
	errPathNotCanonical  = newMalformed("the non-resource path is not a canonical absolute path")
	errUnknownTarget     = newMalformed("unknown or empty request target")
	errBadValue          = newMalformed("a field is \"*\" or holds '/', a control character or a NUL")
	errMgmtFields        = newMalformed("a Management request has a cluster, space or virtual cluster")
	errMgmtProject       = newMalformed("the project of a Management request is neither the Project object's name nor the project of its namespace")
	errProjectName       = newMalformed("a request for a Project object names a project other than its Project field")
	errClusterFields     = newMalformed("a Cluster request needs a cluster and has no project, space or virtual cluster")
	errVClusterFields    = newMalformed("a VirtualCluster request needs a virtual cluster and its namespace, and has no project or space")
	errSpaceFields       = newMalformed("a ProjectSpace request needs a project and a space, and has no virtual cluster")
	errProjectVCFields   = newMalformed("a ProjectVirtualCluster request needs a project and a virtual cluster, and has no space")
	errSubresourceNoName = newMalformed("a subresource without an object name")
	errClusterScopedNS   = newMalformed("a cluster-scoped resource of the management API with a namespace")
)

// Validate returns nil when r is well formed, or an error saying what is wrong:
//
//   - Verb is set; exactly one of Resource and Path is set; a non-resource request has
//     no APIGroup, Subresource, Name or Namespace; a subresource needs a Name;
//   - Path is canonical: it starts with "/", path.Clean leaves it unchanged (no "//",
//     ".", ".." or trailing "/"), and it holds no '%', ';', '#', '?', '\\', '*', NUL
//     or other control character, so it is the decoded path the router used;
//   - no field is "*" and none but Path contains '/' or a control character;
//   - Target is one of the five request targets, and the target's fields are set as
//     the field documentation says (for example a Cluster request has a Cluster and no
//     Project);
//   - a Management request for a cluster-scoped kind of the management API (projects,
//     accesskeys, directclusterendpointtokens) has no namespace, so that a
//     namespaced URL shape can never reach a cluster-scoped object;
//   - a Management request's Project is either the name of the Project object the
//     request is for (resource "projects" of the management group, Project equal to
//     Name) or the project of the request's namespace (the namespace ends with it);
//     a request for a named Project object has Project set to that name.
//
// These checks are cheap consistency checks, not name validation: the caller validates
// names before it builds the request.
func (r Request) Validate() error {
	if r.Verb == "" {
		return errNoVerb
	}
	bit := targetBit(r.Target)
	if bit == 0 {
		return errUnknownTarget
	}
	for _, v := range [...]string{r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Name, r.Namespace,
		r.Cluster, r.Project, r.Space, r.VirtualCluster, r.VirtualClusterNamespace} {
		if !plainValue(v) {
			return errBadValue
		}
	}
	switch {
	case r.Resource != "" && r.Path != "":
		return errResourceAndPath
	case r.Resource == "" && r.Path == "":
		return errNeitherResOrPath
	case r.Resource == "":
		if r.APIGroup != "" || r.Subresource != "" || r.Name != "" || r.Namespace != "" {
			return errResourceFieldsNR
		}
		if !canonicalPath(r.Path) {
			return errPathNotCanonical
		}
	default:
		if r.Subresource != "" && r.Name == "" {
			return errSubresourceNoName
		}
	}
	switch bit {
	case bitManagement:
		if r.Cluster != "" || r.Space != "" || r.VirtualCluster != "" || r.VirtualClusterNamespace != "" {
			return errMgmtFields
		}
		if r.Namespace != "" && r.APIGroup == resource.Group && (r.Resource == resourceProjects ||
			r.Resource == resourceAccessKeys || r.Resource == resourceDirectClusterEndpointTokens) {
			return errClusterScopedNS
		}
		isProjectObject := r.APIGroup == resource.Group && r.Resource == resourceProjects && r.Namespace == ""
		if isProjectObject && r.Name != "" && r.Project != r.Name {
			return errProjectName
		}
		if r.Project != "" {
			objectOfProject := isProjectObject && r.Name == r.Project
			inNamespace := r.Namespace != "" && len(r.Namespace) > len(r.Project) &&
				strings.HasSuffix(r.Namespace, r.Project)
			if !objectOfProject && !inNamespace {
				return errMgmtProject
			}
		}
	case bitCluster:
		if r.Cluster == "" || r.Project != "" || r.Space != "" || r.VirtualCluster != "" || r.VirtualClusterNamespace != "" {
			return errClusterFields
		}
	case bitVirtualCluster:
		if r.VirtualCluster == "" || r.VirtualClusterNamespace == "" || r.Project != "" || r.Space != "" {
			return errVClusterFields
		}
	case bitProjectSpace:
		if r.Project == "" || r.Space == "" || r.VirtualCluster != "" || r.VirtualClusterNamespace != "" {
			return errSpaceFields
		}
	case bitProjectVirtualCluster:
		if r.Project == "" || r.VirtualCluster == "" || r.Space != "" {
			return errProjectVCFields
		}
	}
	return nil
}

// plainValue reports whether v may stand in a request field other than Path: not "*",
// and no '/', NUL or other control character.
func plainValue(v string) bool {
	if v == "*" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '/' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// canonicalPath reports whether p is an absolute, clean, decoded path with none of the
// characters that routers and proxies treat differently.
func canonicalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c == '%' || c == ';' || c == '#' || c == '?' || c == '\\' || c == '*':
			return false
		}
	}
	// path.Clean allocates only when p is not clean; look for the cases it would change
	// first, so that a canonical path costs nothing.
	if len(p) > 1 && p[len(p)-1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		rest := p[i+1:]
		switch {
		case strings.HasPrefix(rest, "/"):
			return false
		case rest == "." || strings.HasPrefix(rest, "./"):
			return false
		case rest == ".." || strings.HasPrefix(rest, "../"):
			return false
		}
	}
	return len(p) == 1 || path.Clean(p) == p
}

// String describes r in one line for messages, e.g.
// `get virtualclusterinstances.management.service "vc1" in namespace "p-a" (Management, project "a")`.
func (r Request) String() string {
	var b strings.Builder
	b.WriteString(r.Verb)
	b.WriteByte(' ')
	if r.Resource == "" {
		b.WriteString(r.Path)
	} else {
		b.WriteString(r.Resource)
		if r.Subresource != "" {
			b.WriteByte('/')
			b.WriteString(r.Subresource)
		}
		if r.APIGroup != "" {
			b.WriteByte('.')
			b.WriteString(r.APIGroup)
		}
		if r.Name != "" {
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(r.Name))
		}
		if r.Namespace != "" {
			b.WriteString(" in namespace ")
			b.WriteString(strconv.Quote(r.Namespace))
		}
	}
	b.WriteString(" (")
	if r.Target == "" {
		b.WriteString("no target")
	} else {
		b.WriteString(string(r.Target))
	}
	for _, f := range [...]struct{ k, v string }{
		{"cluster", r.Cluster}, {"project", r.Project}, {"space", r.Space},
		{"virtual cluster", r.VirtualCluster}, {"virtual cluster namespace", r.VirtualClusterNamespace},
	} {
		if f.v != "" {
			b.WriteString(", ")
			b.WriteString(f.k)
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(f.v))
		}
	}
	b.WriteByte(')')
	return b.String()
}
