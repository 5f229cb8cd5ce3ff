package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// servedResource is one resource of the API with the verbs it has (decisions §1).
type servedResource struct {
	kind *resource.KindInfo
	// verbs of the main resource: get, list, watch, create, update, patch, delete,
	// deletecollection.
	verbs []string
	// statusVerbs of the status subresource (none when the kind has no status).
	statusVerbs []string
	// shortNames for discovery.
	shortNames []string
	// sub is the kind served as a subresource of this one ("migratevirtualclusterinstance"
	// of projects), with its only verb, create.
	sub     string
	subKind *resource.KindInfo
}

// The operations of decisions §1. Anything else is 405.
var resourceTable = []struct {
	kind, resource string
	verbs          []string
	statusVerbs    []string
	shortNames     []string
}{
	{resource.KindProject, "projects",
		[]string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, nil, []string{"proj"}},
	{resource.KindVirtualClusterInstance, "virtualclusterinstances",
		[]string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
		// Patching the status subresource needs a status patch in the store, which it
		// does not have; status is written with a PUT.
		[]string{"get", "update"}, []string{"vci"}},
	{resource.KindAccessKey, "accesskeys",
		[]string{"create", "delete", "deletecollection", "get", "list", "patch", "update"}, nil, []string{"ak"}},
	{resource.KindDirectClusterEndpointToken, "directclusterendpointtokens",
		[]string{"create", "delete", "deletecollection", "get", "list"}, nil, []string{"dcet"}},
}

func servedResources(sch *resource.Scheme) (map[string]*servedResource, error) {
	out := map[string]*servedResource{}
	for _, e := range resourceTable {
		k, ok := sch.KindForResource(resource.Group, resource.Version, e.resource)
		if !ok || k.Kind != e.kind {
			return nil, fmt.Errorf("apiserver: the scheme does not serve %s as %s", e.kind, e.resource)
		}
		sr := &servedResource{kind: k, verbs: e.verbs, shortNames: e.shortNames}
		if k.HasStatus {
			sr.statusVerbs = e.statusVerbs
		}
		out[e.resource] = sr
	}
	mk, ok := sch.KindForResource(resource.Group, resource.Version, "projects/migratevirtualclusterinstance")
	if !ok {
		return nil, fmt.Errorf("apiserver: the scheme does not serve projects/migratevirtualclusterinstance")
	}
	out["projects"].sub, out["projects"].subKind = "migratevirtualclusterinstance", mk
	return out, nil
}

// route is a request, parsed: either a non-resource path or a resource request with
// its verb, kind, namespace, name and subresource, and its options.
type route struct {
	method      string
	nonResource string // "/version", "/apis", ... ("" for a resource request)
	verb        string // get, list, watch, create, update, patch, delete, deletecollection
	res         *servedResource
	kind        *resource.KindInfo // kind of the body and response (the subresource's kind for migrate)
	subresource string
	namespace   string
	name        string
	namespaced  bool // the URL has /namespaces/<ns>/

	opts options
}

func (ri *route) mutating() bool {
	switch ri.method {
	case http.MethodGet, http.MethodHead:
		return false
	}
	return ri.nonResource == ""
}

// parseRoute parses the path below the base path and the method into a route. The
// path is split on its escaped form, each segment then unescaped, so an encoded "/"
// stays inside a segment (and is refused later as a name); empty, "." and ".."
// segments are 404 outside names, never redirected.
func (s *Server) parseRoute(r *http.Request, rest string) (*route, error) {
	ri := &route{method: r.Method}
	var segs []string
	if rest != "" && rest != "/" {
		raw := strings.Split(strings.TrimPrefix(rest, "/"), "/")
		segs = make([]string, len(raw))
		for i, p := range raw {
			u, err := url.PathUnescape(p)
			if err != nil {
				return nil, resource.NewBadRequest(fmt.Sprintf("malformed path segment %q", p))
			}
			segs[i] = u
		}
	}
	nonResource := func() (*route, error) {
		ri.nonResource = "/" + strings.Join(segs, "/")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return nil, methodNotAllowed(nil, r.Method)
		}
		ri.verb = "get"
		return ri, nil
	}
	switch {
	case len(segs) == 0:
		return nonResource()
	case len(segs) == 1 && (segs[0] == "version" || segs[0] == "api" || segs[0] == "apis"):
		return nonResource()
	case len(segs) == 2 && segs[0] == "apis" && segs[1] == resource.Group:
		return nonResource()
	case len(segs) == 3 && segs[0] == "apis" && segs[1] == resource.Group && segs[2] == resource.Version:
		return nonResource()
	case len(segs) == 2 && segs[0] == "openapi" && segs[1] == "v3":
		return nonResource()
	case len(segs) == 5 && segs[0] == "openapi" && segs[1] == "v3" && segs[2] == "apis" &&
		segs[3] == resource.Group && segs[4] == resource.Version:
		return nonResource()
	case len(segs) > 3 && segs[0] == "apis" && segs[1] == resource.Group && segs[2] == resource.Version:
		return s.parseResource(r, ri, segs[3:])
	}
	return nil, notFound()
}

func (s *Server) parseResource(r *http.Request, ri *route, segs []string) (*route, error) {
	if segs[0] == "namespaces" {
		if len(segs) < 3 {
			// The namespaces resource itself is not part of this API.
			return nil, notFound()
		}
		ri.namespaced, ri.namespace, segs = true, segs[1], segs[2:]
	}
	if len(segs) > 3 {
		return nil, notFound()
	}
	sr, ok := s.served[segs[0]]
	if !ok {
		return nil, notFound()
	}
	ri.res, ri.kind = sr, sr.kind
	// A namespaced kind is reached only through /namespaces/<ns>/ for one object, and a
	// cluster-scoped kind never through it (CVE-2019-11247).
	if ri.namespaced != sr.kind.Namespaced && (ri.namespaced || len(segs) > 1) {
		return nil, notFound()
	}
	if len(segs) > 1 {
		ri.name = segs[1]
	}
	if len(segs) > 2 {
		ri.subresource = segs[2]
		switch {
		case ri.subresource == "status" && len(sr.statusVerbs) > 0:
		case ri.subresource == sr.sub && sr.sub != "":
			ri.kind = sr.subKind
		default:
			return nil, notFound()
		}
	}
	for _, seg := range segs {
		if seg == "" {
			return nil, notFound()
		}
	}
	if ri.namespace == "" && ri.namespaced {
		return nil, notFound()
	}

	watch, err := boolParam(r.URL.Query(), "watch")
	if err != nil {
		return nil, err
	}
	collection := ri.name == ""
	switch r.Method {
	case http.MethodGet:
		switch {
		case collection && watch:
			ri.verb = "watch"
		case collection:
			ri.verb = "list"
		default:
			ri.verb = "get"
		}
	case http.MethodPost:
		if collection || ri.subresource == sr.sub && sr.sub != "" {
			ri.verb = "create"
		}
	case http.MethodPut:
		if !collection {
			ri.verb = "update"
		}
	case http.MethodPatch:
		if !collection {
			ri.verb = "patch"
		}
	case http.MethodDelete:
		if collection {
			ri.verb = "deletecollection"
		} else {
			ri.verb = "delete"
		}
	}
	verbs := sr.verbs
	switch {
	case ri.subresource == "status":
		verbs = sr.statusVerbs
	case ri.subresource != "":
		verbs = []string{"create"}
	}
	if ri.verb == "" || !slices.Contains(verbs, ri.verb) ||
		// A namespaced kind is created only in a namespace.
		(ri.verb == "create" && sr.kind.Namespaced && !ri.namespaced) ||
		(ri.verb == "deletecollection" && sr.kind.Namespaced && !ri.namespaced) {
		verb := ri.verb
		if verb == "" {
			verb = r.Method
		}
		return nil, methodNotAllowed(ri.kind, verb)
	}
	return ri, nil
}

// validateNames checks the namespace and name from the path before anything is
// authorized or read with them (reliability-security §3, rule 1).
func (ri *route) validateNames() error {
	if ri.nonResource != "" {
		return nil
	}
	var errs resource.ErrorList
	if ri.namespaced {
		errs = append(errs, resource.ValidateNamespaceName(ri.namespace, resource.NewPath("metadata", "namespace"))...)
	}
	if ri.name != "" {
		errs = append(errs, resource.ValidateName(ri.name, resource.NewPath("metadata", "name"))...)
	}
	if len(errs) > 0 {
		k := ri.res.kind
		return resource.NewInvalid(k, ri.name, errs)
	}
	return nil
}
