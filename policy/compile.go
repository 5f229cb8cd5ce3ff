package policy

import (
	"strconv"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// Resources of the management API group that the projects, spaces, virtualClusters
// and allowServiceCli entries refer to.
const (
	resourceProjects                    = "projects"
	resourceVirtualClusterInstances     = "virtualclusterinstances"
	resourceSpaceInstances              = "spaceinstances"
	resourceDirectClusterEndpointTokens = "directclusterendpointtokens"
	resourceAccessKeys                  = "accesskeys"
)

// scopePath is the path of a scope in the objects that carry one (AccessKey and
// DirectClusterEndpointToken): the prefix of every entry a decision names.
var scopePath = resource.NewPath("spec", "scope")

// Decision is the outcome of evaluating a request against a scope.
type Decision struct {
	// Allowed is true when the scope allows the request.
	Allowed bool
	// Entry is the field path of the scope entry that allowed the request, e.g.
	// "spec.scope.projects[0]" or "spec.scope.allowServiceCli"; empty when the scope is
	// nil or when nothing allowed the request.
	Entry string
	// Reason says in one line why the request was allowed or denied.
	Reason string
}

// String returns the decision's reason.
func (d Decision) String() string { return d.Reason }

// Compiled is a scope prepared for evaluation: validated once, with every entry turned
// into the constraints it stands for, so that [Compiled.Evaluate] neither parses nor
// allocates. It is immutable and safe for concurrent use. A nil *Compiled denies every
// request (a missing compile step must not open everything); the compiled form of a
// nil scope is what [Compile] returns for nil.
type Compiled struct {
	unrestricted bool
	grants       []grant
	deny         string
	index        grantIndex
}

// Reasons of the decisions that need no request details; static, so that they cost
// no allocation.
const (
	reasonNoScope      = "allowed: no scope, so no restriction beyond the subject's own rights"
	reasonNilCompiled  = "denied: no compiled scope"
	reasonEmptyScope   = "denied: spec.scope has no entries, so it allows nothing"
	reasonNothingMatch = "denied: no entry of spec.scope allows the request"
)

// Compile validates scope with [Validate] (field paths under spec.scope) and returns
// its compiled form, or the validation errors joined into one error. A nil scope
// compiles to a Compiled that allows every well-formed request.
func Compile(scope *resource.AccessKeyScope) (*Compiled, error) {
	if scope == nil {
		return &Compiled{unrestricted: true}, nil
	}
	if errs := Validate(scope, scopePath); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	c := &Compiled{grants: compileGrants(scope)}
	c.index = buildIndex(c.grants)
	if len(c.grants) == 0 {
		c.deny = reasonEmptyScope
	} else {
		c.deny = reasonNothingMatch
	}
	return c, nil
}

// MustCompile is like [Compile] but panics when the scope is invalid. It is meant for
// scopes fixed in code and for tests.
func MustCompile(scope *resource.AccessKeyScope) *Compiled {
	c, err := Compile(scope)
	if err != nil {
		panic("policy: " + err.Error())
	}
	return c
}

// Unrestricted reports whether c is the compiled form of a nil scope.
func (c *Compiled) Unrestricted() bool { return c != nil && c.unrestricted }

// Evaluate decides whether the scope allows req. It makes no allocation: the reason of
// a denial is a short static text; [Compiled.Explain] gives the full account.
func (c *Compiled) Evaluate(req Request) Decision {
	if err := req.Validate(); err != nil {
		if m, ok := err.(*malformedError); ok {
			return Decision{Reason: m.reason}
		}
		return Decision{Reason: "denied: " + err.Error()}
	}
	if c == nil {
		return Decision{Reason: reasonNilCompiled}
	}
	if c.unrestricted {
		return Decision{Allowed: true, Reason: reasonNoScope}
	}
	tbit := targetBit(req.Target)
	// The candidates are the grants keyed by the request's project, those keyed by its
	// resource, and the rest for its kind of request: three lists in grant order,
	// merged so that the first grant that matches is the first in scope order.
	var byProject, byResource, rest []int32
	if req.Project != "" {
		byProject = c.index.byProject[req.Project]
	}
	if req.Resource != "" {
		byResource = c.index.byResource[req.Resource]
		rest = c.index.resourceRest
	} else {
		rest = c.index.nonResourceRest
	}
	for {
		next, src := int32(-1), 0
		if len(byProject) > 0 {
			next, src = byProject[0], 1
		}
		if len(byResource) > 0 && (next < 0 || byResource[0] < next) {
			next, src = byResource[0], 2
		}
		if len(rest) > 0 && (next < 0 || rest[0] < next) {
			next, src = rest[0], 3
		}
		switch src {
		case 0:
			return Decision{Reason: c.deny}
		case 1:
			byProject = byProject[1:]
		case 2:
			byResource = byResource[1:]
		case 3:
			rest = rest[1:]
		}
		g := &c.grants[next]
		if g.check(&req, tbit) == failNone {
			return Decision{Allowed: true, Entry: g.entry, Reason: g.allowed}
		}
	}
}

// Explain is [Compiled.Evaluate] with a full account of a denial: the request, and
// for each entry of the scope the first thing about the request it does not allow. It
// allocates; use it to build the message of a 403, not on every request.
func (c *Compiled) Explain(req Request) Decision {
	if err := req.Validate(); err != nil {
		return Decision{Reason: "denied: " + req.String() + " is a " + err.Error()}
	}
	d := c.Evaluate(req)
	if d.Allowed || c == nil || len(c.grants) == 0 {
		return d
	}
	tbit := targetBit(req.Target)
	const maxEntries = 8
	var parts []string
	entries := 0
	for i := 0; i < len(c.grants); {
		// One account per entry: that of its grant that came closest to matching (the
		// failures are numbered in the order check tests them).
		best, bestFail := &c.grants[i], c.grants[i].check(&req, tbit)
		j := i + 1
		for ; j < len(c.grants) && c.grants[j].entry == best.entry; j++ {
			if f := c.grants[j].check(&req, tbit); f > bestFail {
				best, bestFail = &c.grants[j], f
			}
		}
		i = j
		entries++
		if len(parts) < maxEntries {
			parts = append(parts, best.entry+": "+best.explain(&req, bestFail))
		}
	}
	s := "denied: no entry of spec.scope allows " + req.String() + ": " + strings.Join(parts, "; ")
	if entries > maxEntries {
		s += "; and " + strconv.Itoa(entries-maxEntries) + " more entries"
	}
	return Decision{Reason: s}
}

// Evaluate decides whether scope allows req, with a full account of a denial (see
// [Compiled.Explain]). A nil scope allows every well-formed request; an invalid scope
// allows nothing. To evaluate many requests against one scope, [Compile] it once.
func Evaluate(scope *resource.AccessKeyScope, req Request) Decision {
	c, err := Compile(scope)
	if err != nil {
		return Decision{Reason: "denied: the scope is invalid: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	return c.Explain(req)
}

// compileGrants turns a valid scope into its grants, in the order: projects, spaces,
// virtualClusters, rules, allowServiceCli.
func compileGrants(s *resource.AccessKeyScope) []grant {
	var gs []grant
	mgmt := func(kind resPatKind, res string) resPat {
		return resPat{group: resource.Group, kind: kind, res: res}
	}
	for i, p := range s.Projects {
		entry := scopePath.Child("projects").Index(i).String()
		if p.Project == "*" {
			allowed := "allowed by " + entry + " (every project)"
			gs = append(gs,
				grant{entry: entry, allowed: allowed, targets: bitsProject, project: sel{mode: selAny}},
				grant{entry: entry, allowed: allowed, targets: bitManagement, kind: kindResource,
					resources: []resPat{mgmt(patResource, resourceProjects)},
					names:     []string{""}, namespaces: []string{""}},
				grant{entry: entry, allowed: allowed, targets: bitManagement, kind: kindResource,
					resources: []resPat{mgmt(patResource, resourceVirtualClusterInstances), mgmt(patResource, resourceSpaceInstances)},
					names:     []string{""}, namespaces: []string{""}},
			)
			continue
		}
		gs = append(gs, grant{entry: entry, allowed: "allowed by " + entry + " (project " + strconv.Quote(p.Project) + ")",
			targets: bitsProject, project: exact(p.Project)})
	}
	instance := func(entry, allowed string, target uint8, res, project, name string) []grant {
		var names []string
		inst := sel{mode: selAny}
		if name != "*" {
			names = []string{name}
			inst = exact(name)
		}
		proxy := grant{entry: entry, allowed: allowed, targets: target, project: exact(project)}
		if target == bitProjectSpace {
			proxy.space = inst
		} else {
			proxy.vcluster = inst
		}
		object := grant{entry: entry, allowed: allowed, targets: bitManagement, kind: kindResource,
			resources: []resPat{mgmt(patResource, res), mgmt(patAllSubs, res)},
			names:     names, project: exact(project)}
		return []grant{proxy, object}
	}
	for i, sp := range s.Spaces {
		entry := scopePath.Child("spaces").Index(i).String()
		what := "space " + strconv.Quote(sp.Space)
		if sp.Space == "*" {
			what = "every space"
		}
		allowed := "allowed by " + entry + " (" + what + " of project " + strconv.Quote(sp.Project) + ")"
		gs = append(gs, instance(entry, allowed, bitProjectSpace, resourceSpaceInstances, sp.Project, sp.Space)...)
	}
	for i, vc := range s.VirtualClusters {
		entry := scopePath.Child("virtualClusters").Index(i).String()
		what := "virtual cluster " + strconv.Quote(vc.VirtualCluster)
		if vc.VirtualCluster == "*" {
			what = "every virtual cluster"
		}
		allowed := "allowed by " + entry + " (" + what + " of project " + strconv.Quote(vc.Project) + ")"
		gs = append(gs, instance(entry, allowed, bitProjectVirtualCluster, resourceVirtualClusterInstances, vc.Project, vc.VirtualCluster)...)
	}
	for i := range s.Rules {
		entry := scopePath.Child("rules").Index(i).String()
		gs = append(gs, compileRule(entry, &s.Rules[i]))
	}
	if s.AllowServiceCli {
		gs = append(gs, serviceCliGrants(s)...)
	}
	return gs
}

// compileRule turns one valid rule into its grant.
func compileRule(entry string, r *resource.AccessKeyScopeRule) grant {
	g := grant{entry: entry, allowed: "allowed by " + entry, targets: bitsAll}
	if len(r.RequestTargets) > 0 {
		g.targets = 0
		for _, t := range r.RequestTargets {
			g.targets |= targetBit(t)
		}
	}
	if len(r.Verbs) > 0 {
		g.verbs = append([]string(nil), r.Verbs...)
	}
	switch {
	case len(r.Resources) > 0 || len(r.Namespaces) > 0:
		g.kind = kindResource
		if len(r.Namespaces) > 0 {
			g.namespaces = append([]string(nil), r.Namespaces...)
		}
		for _, gr := range r.Resources {
			if len(gr.Resources) == 0 {
				g.resources = append(g.resources, resPat{group: gr.Group, kind: patAll})
				continue
			}
			for _, s := range gr.Resources {
				p, _ := parseResPat(gr.Group, s)
				g.resources = append(g.resources, p)
			}
		}
		if len(r.ResourceNames) > 0 {
			g.names = append([]string(nil), r.ResourceNames...)
		}
	case len(r.NonResourceURLs) > 0:
		g.kind = kindNonResource
		for _, s := range r.NonResourceURLs {
			u, _ := parseURLPat(s)
			if u.kind == urlAll {
				g.urls = nil
				break
			}
			g.urls = append(g.urls, u)
		}
	}
	g.cluster = r.Cluster
	for _, v := range r.VirtualClusters {
		g.vclusters = append(g.vclusters, vcSel{name: v.Name, namespace: v.Namespace})
	}
	return g
}

// serviceCliGrants are the grants of allowServiceCli: GET of /version and of the
// discovery documents, creating a DirectClusterEndpointToken, and get/list/watch of
// projects and of virtual cluster instances in every project the scope names.
func serviceCliGrants(s *resource.AccessKeyScope) []grant {
	entry := scopePath.Child("allowServiceCli").String()
	allowed := "allowed by " + entry + " (a read-only request of the service's command-line client)"
	gs := []grant{
		{entry: entry, allowed: allowed, targets: bitManagement, verbs: []string{"get"}, kind: kindNonResource,
			urls: []urlPat{
				{kind: urlExact, s: "/version"},
				{kind: urlExact, s: "/api"},
				{kind: urlSegments, s: "/api/", min: 1, max: 1},
				{kind: urlExact, s: "/apis"},
				{kind: urlSegments, s: "/apis/", min: 1, max: 2},
			}},
		{entry: entry, allowed: "allowed by " + entry + " (creating a DirectClusterEndpointToken; the issuer keeps it within the scope)",
			targets: bitManagement, verbs: []string{"create"}, kind: kindResource,
			resources:  []resPat{{group: resource.Group, kind: patResource, res: resourceDirectClusterEndpointTokens}},
			namespaces: []string{""}},
	}
	for _, p := range namedProjects(s) {
		gs = append(gs, grant{entry: entry, allowed: allowed, targets: bitManagement,
			verbs: []string{"get", "list", "watch"}, kind: kindResource,
			resources: []resPat{
				{group: resource.Group, kind: patResource, res: resourceProjects},
				{group: resource.Group, kind: patResource, res: resourceVirtualClusterInstances},
			},
			project: exact(p)})
	}
	return gs
}

// namedProjects returns, once each and in order of appearance, the projects a scope
// names in its projects, spaces and virtualClusters entries, without "*" (every
// project is already open to a projects entry "*").
func namedProjects(s *resource.AccessKeyScope) []string {
	var out []string
	add := func(p string) {
		if p != "*" && !contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range s.Projects {
		add(p.Project)
	}
	for _, sp := range s.Spaces {
		add(sp.Project)
	}
	for _, vc := range s.VirtualClusters {
		add(vc.Project)
	}
	return out
}

// grantIndex narrows the grants a request has to be checked against. Every grant is
// in exactly one family: keyed by the project it requires, keyed by the resources its
// patterns name, or in the rest (for resource requests, non-resource requests or
// both). Each list holds grant indexes in ascending order.
type grantIndex struct {
	byProject       map[string][]int32
	byResource      map[string][]int32
	resourceRest    []int32
	nonResourceRest []int32
}

// resourceKeys returns the resource names a grant's patterns all name, or nil when
// the grant can match a resource request for a resource it does not name.
func resourceKeys(g *grant) []string {
	if g.kind != kindResource || g.resources == nil {
		return nil
	}
	var keys []string
	for _, p := range g.resources {
		if p.kind == patAll || p.kind == patSubOfAll {
			return nil
		}
		if !contains(keys, p.res) {
			keys = append(keys, p.res)
		}
	}
	return keys
}

func buildIndex(gs []grant) grantIndex {
	ix := grantIndex{byProject: map[string][]int32{}, byResource: map[string][]int32{}}
	for i := range gs {
		g, n := &gs[i], int32(i)
		if g.project.mode == selExact {
			ix.byProject[g.project.value] = append(ix.byProject[g.project.value], n)
			continue
		}
		if keys := resourceKeys(g); keys != nil {
			for _, k := range keys {
				ix.byResource[k] = append(ix.byResource[k], n)
			}
			continue
		}
		if g.kind != kindNonResource {
			ix.resourceRest = append(ix.resourceRest, n)
		}
		if g.kind != kindResource {
			ix.nonResourceRest = append(ix.nonResourceRest, n)
		}
	}
	return ix
}
