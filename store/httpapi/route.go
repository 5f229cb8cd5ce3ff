package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// servedResource is one resource of the API with the verbs it has.
type servedResource struct {
	kind *resource.KindInfo
	// verbs of the main resource: get, list, watch, create, update, patch, delete,
	// deletecollection.
	verbs []string
	// statusVerbs of the status subresource (none when the kind has no status).
	statusVerbs []string
	// shortNames and categories for discovery.
	shortNames, categories []string
	create                 CreateFunc
	// subs are the extra subresources, by name.
	subs    map[string]*servedSub
	subList []*servedSub // in the order of the configuration
	// columns of the Table, after Name.
	columns []Column
}

// servedSub is an extra subresource: its kind and its create.
type servedSub struct {
	Subresource
	kind *resource.KindInfo
}

// servedGroup is one API group with its one served version.
type servedGroup struct {
	name, version string
	resources     []*servedResource // sorted by resource name
}

func (g *servedGroup) groupVersion() string { return g.name + "/" + g.version }

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// servedResources checks the configured resources against the scheme and indexes
// them by "group/version/resource".
func servedResources(sch *resource.Scheme, cfg []Resource) (map[string]*servedResource, []*servedGroup, error) {
	out := map[string]*servedResource{}
	groups := map[string]*servedGroup{}
	for _, e := range cfg {
		if e.Group == "" {
			return nil, nil, fmt.Errorf("httpapi: resource %q: the core group is not served; name a group", e.Resource)
		}
		k, ok := sch.KindForResource(e.Group, e.Version, e.Resource)
		if !ok {
			return nil, nil, fmt.Errorf("httpapi: the scheme has no kind for %s/%s %s", e.Group, e.Version, e.Resource)
		}
		key := e.Group + "/" + e.Version + "/" + e.Resource
		if out[key] != nil {
			return nil, nil, fmt.Errorf("httpapi: resource %s is listed twice", key)
		}
		sr := &servedResource{kind: k, verbs: e.Verbs, shortNames: e.ShortNames, categories: e.Categories,
			create: e.Create, subs: map[string]*servedSub{}, columns: e.Columns}
		if sr.columns == nil {
			sr.columns = []Column{AgeColumn}
		}
		for _, c := range sr.columns {
			switch {
			case c.Name == "":
				return nil, nil, fmt.Errorf("httpapi: resource %s: a column has no Name", key)
			case !slices.Contains([]string{"string", "integer", "number", "boolean", "date"}, c.Type):
				return nil, nil, fmt.Errorf("httpapi: resource %s: column %q: unknown type %q", key, c.Name, c.Type)
			case c.Value == nil && !strings.HasPrefix(strings.TrimPrefix(c.JSONPath, "{"), "."):
				return nil, nil, fmt.Errorf("httpapi: resource %s: column %q needs a JSONPath (.spec.x) or a Value", key, c.Name)
			}
		}
		if sr.verbs == nil {
			sr.verbs = allVerbs
		}
		for _, v := range sr.verbs {
			if !slices.Contains(allVerbs, v) {
				return nil, nil, fmt.Errorf("httpapi: resource %s: unknown verb %q", key, v)
			}
		}
		if k.HasStatus {
			sr.statusVerbs = e.StatusVerbs
			if sr.statusVerbs == nil {
				sr.statusVerbs = []string{"get", "patch", "update"}
			}
		}
		for _, sub := range e.Subresources {
			sk, ok := sch.KindForResource(e.Group, e.Version, e.Resource+"/"+sub.Name)
			switch {
			case !ok:
				return nil, nil, fmt.Errorf("httpapi: the scheme has no kind for subresource %s/%s", key, sub.Name)
			case sub.Create == nil:
				return nil, nil, fmt.Errorf("httpapi: subresource %s/%s has no Create", key, sub.Name)
			case sub.Name == "status" || sr.subs[sub.Name] != nil:
				return nil, nil, fmt.Errorf("httpapi: subresource %s/%s is served twice", key, sub.Name)
			}
			ss := &servedSub{Subresource: sub, kind: sk}
			sr.subs[sub.Name] = ss
			sr.subList = append(sr.subList, ss)
		}
		out[key] = sr
		g := groups[e.Group]
		if g == nil {
			g = &servedGroup{name: e.Group, version: e.Version}
			groups[e.Group] = g
		} else if g.version != e.Version {
			return nil, nil, fmt.Errorf("httpapi: group %s is served in two versions (%s, %s); serve one", e.Group, g.version, e.Version)
		}
		g.resources = append(g.resources, sr)
	}
	var list []*servedGroup
	for _, g := range groups {
		slices.SortFunc(g.resources, func(a, b *servedResource) int { return strings.Compare(a.kind.Resource, b.kind.Resource) })
		list = append(list, g)
	}
	slices.SortFunc(list, func(a, b *servedGroup) int { return strings.Compare(a.name, b.name) })
	return out, list, nil
}

// route is a request, parsed: either a non-resource path or a resource request with
// its verb, kind, namespace, name and subresource, and its options.
type route struct {
	method      string
	nonResource string // "/version", "/apis", ... ("" for a resource request)
	verb        string // get, list, watch, create, update, patch, delete, deletecollection
	res         *servedResource
	kind        *resource.KindInfo // kind of the body and response (the subresource's kind for an extra one)
	sub         *servedSub         // the extra subresource, if any
	subresource string
	namespace   string
	name        string
	namespaced  bool // the URL has /namespaces/<ns>/

	opts options
	// user and decision are the caller and the Authorizer's answer.
	user     *store.UserInfo
	decision Decision
}

// attributes describe the route to the Authorizer.
func (ri *route) attributes() Attributes {
	if ri.nonResource != "" {
		return Attributes{Verb: "get", Path: ri.nonResource}
	}
	a := Attributes{Verb: ri.verb, APIGroup: ri.res.kind.Group, APIVersion: ri.res.kind.Version,
		Resource: ri.res.kind.Resource, Subresource: ri.subresource, Name: ri.name, Namespace: ri.namespace}
	if a.Name == "" && (ri.verb == "list" || ri.verb == "watch" || ri.verb == "deletecollection") {
		// A list pinned to one name by its field selector is about that object only.
		a.Name = ri.opts.nameSelector
	}
	return a
}

// visible reports whether the caller may see obj (Decision.Visible).
func (ri *route) visible(obj resource.Object) bool {
	return ri.decision.Visible == nil || ri.decision.Visible(obj)
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
	if len(segs) == 0 {
		return nonResource()
	}
	joined := "/" + strings.Join(segs, "/")
	if isReview(joined) {
		// A review is a create that stores nothing: routed as a non-resource request,
		// answered by serveReview once the caller is known.
		ri.nonResource = joined
		if r.Method != http.MethodPost {
			return nil, methodNotAllowed(nil, r.Method)
		}
		ri.verb = "create"
		return ri, nil
	}
	if _, ok := s.docs[joined]; ok {
		return nonResource()
	}
	if _, ok := s.cfg.NonResource[joined]; ok {
		return nonResource()
	}
	if len(segs) > 3 && segs[0] == "apis" {
		for _, g := range s.groups {
			if segs[1] == g.name && segs[2] == g.version {
				return s.parseResource(r, ri, g, segs[3:])
			}
		}
	}
	return nil, notFound()
}

func (s *Server) parseResource(r *http.Request, ri *route, g *servedGroup, segs []string) (*route, error) {
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
	sr, ok := s.served[g.groupVersion()+"/"+segs[0]]
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
		switch sub := sr.subs[ri.subresource]; {
		case ri.subresource == "status" && len(sr.statusVerbs) > 0:
		case sub != nil:
			ri.sub, ri.kind = sub, sub.kind
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
		if collection || ri.sub != nil {
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
