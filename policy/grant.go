package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// A grant is the compiled form of one thing a scope allows: a conjunction of
// constraints on a request. Every scope entry compiles to one or more grants, and a
// scope allows a request when one of its grants matches it. A nil list means "no
// constraint"; a constraint list is never empty.
type grant struct {
	entry   string // field path of the entry the grant comes from, e.g. "spec.scope.rules[2]"
	allowed string // the reason of an allow by this grant

	targets uint8    // request targets matched (bits)
	verbs   []string // nil: every verb
	kind    reqKind

	// resource requests (kind == kindResource)
	namespaces []string // nil: every namespace
	resources  []resPat // nil: every resource
	names      []string // nil: every name; "" stands for requests without a name

	// non-resource requests (kind == kindNonResource)
	urls []urlPat // nil: every path

	cluster   string  // when set: Cluster requests to this cluster only
	vclusters []vcSel // when set: virtual cluster requests to one of these only

	project  sel // the request's Project
	space    sel // the request's Space
	vcluster sel // the request's VirtualCluster
}

// reqKind says which requests a grant can match: resource, non-resource or both.
type reqKind uint8

const (
	kindAny reqKind = iota
	kindResource
	kindNonResource
)

// selMode is how a sel constrains a request field.
type selMode uint8

const (
	selNone  selMode = iota // no constraint
	selAny                  // any non-empty value
	selExact                // exactly value
)

// sel constrains one request field (Project, Space or VirtualCluster).
type sel struct {
	mode  selMode
	value string
}

func exact(v string) sel { return sel{mode: selExact, value: v} }

// selOf returns the selector of a scope entry's value: "*" is any non-empty value.
func selOf(v string) sel {
	if v == "*" {
		return sel{mode: selAny}
	}
	return exact(v)
}

func (s sel) match(v string) bool {
	switch s.mode {
	case selAny:
		return v != ""
	case selExact:
		return v == s.value
	}
	return true
}

// covers reports whether every value s matches is matched by o.
func (o sel) covers(s sel) bool {
	switch o.mode {
	case selNone:
		return true
	case selAny:
		return s.mode != selNone
	}
	return s.mode == selExact && s.value == o.value
}

// resPatKind is the form of a resource pattern.
type resPatKind uint8

const (
	patAll      resPatKind = iota // "*" or an empty resources list: every resource and subresource of the group
	patResource                   // "name": the resource, no subresource
	patSub                        // "name/sub": that subresource
	patAllSubs                    // "name/*": every subresource of name (not name itself)
	patSubOfAll                   // "*/sub": that subresource of every resource
)

// resPat is one resource pattern of one API group.
type resPat struct {
	group string
	kind  resPatKind
	res   string
	sub   string
}

func (p *resPat) match(group, res, sub string) bool {
	if p.group != group {
		return false
	}
	switch p.kind {
	case patAll:
		return true
	case patResource:
		return sub == "" && res == p.res
	case patSub:
		return res == p.res && sub == p.sub
	case patAllSubs:
		return sub != "" && res == p.res
	case patSubOfAll:
		return sub != "" && sub == p.sub
	}
	return false
}

// covers reports whether every (resource, subresource) q matches is matched by p.
func (p resPat) covers(q resPat) bool {
	if p.group != q.group {
		return false
	}
	switch p.kind {
	case patAll:
		return true
	case patResource:
		return q.kind == patResource && q.res == p.res
	case patSub:
		return q.kind == patSub && q.res == p.res && q.sub == p.sub
	case patAllSubs:
		return (q.kind == patSub || q.kind == patAllSubs) && q.res == p.res
	case patSubOfAll:
		return (q.kind == patSub || q.kind == patSubOfAll) && q.sub == p.sub
	}
	return false
}

func (p resPat) String() string {
	var s string
	switch p.kind {
	case patAll:
		s = "*"
	case patResource:
		s = p.res
	case patSub:
		s = p.res + "/" + p.sub
	case patAllSubs:
		s = p.res + "/*"
	case patSubOfAll:
		s = "*/" + p.sub
	}
	if p.group == "" {
		return s
	}
	return s + "." + p.group
}

// parseResPat parses one entry of a GroupResources' resources list. ok is false when
// the entry has none of the five forms.
func parseResPat(group, s string) (p resPat, ok bool) {
	p.group = group
	if s == "*" {
		p.kind = patAll
		return p, true
	}
	res, sub, hasSub := strings.Cut(s, "/")
	if !plainStep(res, true) {
		return p, false
	}
	if !hasSub {
		p.kind, p.res = patResource, res // res is not "*": s == "*" returned above
		return p, true
	}
	if !plainStep(sub, true) || (res == "*" && sub == "*") {
		return p, false
	}
	switch {
	case res == "*":
		p.kind, p.sub = patSubOfAll, sub
	case sub == "*":
		p.kind, p.res = patAllSubs, res
	default:
		p.kind, p.res, p.sub = patSub, res, sub
	}
	return p, true
}

// plainStep reports whether s is a non-empty path step without '/', control characters
// or a '*' (a whole "*" is allowed when star is true).
func plainStep(s string, star bool) bool {
	if s == "" {
		return false
	}
	if s == "*" {
		return star
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '/' || c == '*' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// urlKind is the form of a non-resource URL pattern.
type urlKind uint8

const (
	urlAll      urlKind = iota // "*" (or "/*"): every path
	urlExact                   // exactly s
	urlPrefix                  // s ends with "/": every path below s ("/api/*" is prefix "/api/")
	urlSegments                // s ends with "/": paths below s with min..max more non-empty steps
)

// urlPat is one non-resource URL pattern.
type urlPat struct {
	kind     urlKind
	s        string
	min, max int
}

func (u *urlPat) match(p string) bool {
	switch u.kind {
	case urlAll:
		return true
	case urlExact:
		return p == u.s
	case urlPrefix:
		return strings.HasPrefix(p, u.s)
	case urlSegments:
		if !strings.HasPrefix(p, u.s) {
			return false
		}
		rest := p[len(u.s):]
		if rest == "" {
			return false
		}
		n := 1
		for i := 0; i < len(rest); i++ {
			if rest[i] == '/' {
				if i == 0 || i == len(rest)-1 || rest[i-1] == '/' {
					return false // an empty step
				}
				n++
			}
		}
		return n >= u.min && n <= u.max
	}
	return false
}

// covers reports whether every path q matches is matched by u.
func (u urlPat) covers(q urlPat) bool {
	switch u.kind {
	case urlAll:
		return true
	case urlExact:
		return q.kind == urlExact && q.s == u.s
	case urlPrefix:
		switch q.kind {
		case urlExact, urlPrefix, urlSegments:
			return strings.HasPrefix(q.s, u.s)
		}
		return false
	case urlSegments:
		switch q.kind {
		case urlExact:
			return u.match(q.s)
		case urlSegments:
			return q.s == u.s && q.min >= u.min && q.max <= u.max
		}
	}
	return false
}

func (u urlPat) String() string {
	switch u.kind {
	case urlAll:
		return "*"
	case urlPrefix:
		return u.s + "*"
	case urlSegments:
		if u.min == u.max {
			return fmt.Sprintf("%s<%d steps>", u.s, u.min)
		}
		return fmt.Sprintf("%s<%d to %d steps>", u.s, u.min, u.max)
	}
	return u.s
}

// parseURLPat parses a rule's nonResourceURLs entry: "*", an exact clean absolute path,
// or a clean absolute path whose last step is "*". ok is false otherwise.
func parseURLPat(s string) (u urlPat, ok bool) {
	if s == "*" || s == "/*" {
		return urlPat{kind: urlAll}, true
	}
	if head, ok := strings.CutSuffix(s, "/*"); ok {
		if head == "/" || !canonicalPath(head) {
			return u, false
		}
		return urlPat{kind: urlPrefix, s: head + "/"}, true
	}
	if !canonicalPath(s) {
		return u, false
	}
	return urlPat{kind: urlExact, s: s}, true
}

// vcSel selects virtual clusters in a rule; an empty field matches every value.
type vcSel struct {
	name, namespace string
}

func (v *vcSel) match(name, namespace string) bool {
	return (v.name == "" || v.name == name) && (v.namespace == "" || v.namespace == namespace)
}

func (v vcSel) covers(w vcSel) bool {
	return (v.name == "" || v.name == w.name) && (v.namespace == "" || v.namespace == w.namespace)
}

func (v vcSel) String() string {
	n, ns := v.name, v.namespace
	if n == "" {
		n = "*"
	}
	if ns == "" {
		ns = "*"
	}
	return ns + "/" + n
}

// failure names the first constraint of a grant that a request does not meet.
type failure uint8

const (
	failNone failure = iota
	failTarget
	failVerb
	failKind
	failProject
	failSpace
	failVirtualCluster
	failCluster
	failVClusters
	failNamespace
	failResource
	failName
	failURL
)

// check returns failNone when g matches r (whose target bit is tbit), or the first
// constraint r does not meet. r must be well formed. It never allocates.
func (g *grant) check(r *Request, tbit uint8) failure {
	if g.targets&tbit == 0 {
		return failTarget
	}
	if g.verbs != nil && !contains(g.verbs, r.Verb) {
		return failVerb
	}
	switch g.kind {
	case kindResource:
		if r.Resource == "" {
			return failKind
		}
	case kindNonResource:
		if r.Resource != "" {
			return failKind
		}
	}
	if !g.project.match(r.Project) {
		return failProject
	}
	if !g.space.match(r.Space) {
		return failSpace
	}
	if !g.vcluster.match(r.VirtualCluster) {
		return failVirtualCluster
	}
	if g.cluster != "" && (tbit != bitCluster || r.Cluster != g.cluster) {
		return failCluster
	}
	if g.vclusters != nil {
		if tbit&bitsVirtualCluster == 0 {
			return failVClusters
		}
		ok := false
		for i := range g.vclusters {
			if g.vclusters[i].match(r.VirtualCluster, r.VirtualClusterNamespace) {
				ok = true
				break
			}
		}
		if !ok {
			return failVClusters
		}
	}
	switch g.kind {
	case kindResource:
		if g.namespaces != nil && !contains(g.namespaces, r.Namespace) {
			return failNamespace
		}
		if g.resources != nil {
			ok := false
			for i := range g.resources {
				if g.resources[i].match(r.APIGroup, r.Resource, r.Subresource) {
					ok = true
					break
				}
			}
			if !ok {
				return failResource
			}
		}
		if g.names != nil && !contains(g.names, r.Name) {
			return failName
		}
	case kindNonResource:
		if g.urls != nil {
			ok := false
			for i := range g.urls {
				if g.urls[i].match(r.Path) {
					ok = true
					break
				}
			}
			if !ok {
				return failURL
			}
		}
	}
	return failNone
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// explain says in words why g does not match r, given the failure check returned.
func (g *grant) explain(r *Request, f failure) string {
	switch f {
	case failTarget:
		return "it allows " + targetsString(g.targets) + " requests, not " + string(r.Target) + " requests"
	case failVerb:
		return "it allows verbs " + quoteList(g.verbs) + ", not " + strconv.Quote(r.Verb)
	case failKind:
		if g.kind == kindResource {
			return "it allows resource requests only"
		}
		return "it allows non-resource requests only"
	case failProject:
		if r.Project == "" {
			return "it allows requests about a project, and this one is about none"
		}
		return "it is for project " + strconv.Quote(g.project.value) + ", not " + strconv.Quote(r.Project)
	case failSpace:
		return "it is for space " + strconv.Quote(g.space.value) + ", not " + strconv.Quote(r.Space)
	case failVirtualCluster:
		return "it is for virtual cluster " + strconv.Quote(g.vcluster.value) + ", not " + strconv.Quote(r.VirtualCluster)
	case failCluster:
		if r.Target != resource.RequestTargetCluster {
			return "it allows requests to cluster " + strconv.Quote(g.cluster) + " only"
		}
		return "it is for cluster " + strconv.Quote(g.cluster) + ", not " + strconv.Quote(r.Cluster)
	case failVClusters:
		parts := make([]string, len(g.vclusters))
		for i, v := range g.vclusters {
			parts[i] = v.String()
		}
		return "it allows requests to the virtual clusters [" + strings.Join(parts, " ") + "] only"
	case failNamespace:
		return "it allows namespaces " + quoteList(g.namespaces) + ", not " + strconv.Quote(r.Namespace)
	case failResource:
		combined := r.Resource
		if r.Subresource != "" {
			combined += "/" + r.Subresource
		}
		if r.APIGroup != "" {
			combined += "." + r.APIGroup
		}
		return "it allows resources " + resList(g.resources) + ", not " + strconv.Quote(combined)
	case failName:
		if r.Name == "" {
			return "it allows the names " + quoteList(g.names) + " only, not requests without a name"
		}
		return "it allows the names " + quoteList(g.names) + ", not " + strconv.Quote(r.Name)
	case failURL:
		parts := make([]string, len(g.urls))
		for i, u := range g.urls {
			parts[i] = u.String()
		}
		return "it allows the paths [" + strings.Join(parts, " ") + "], not " + strconv.Quote(r.Path)
	}
	return "it allows the request"
}

// describe says in words what g allows, for the gaps Covers reports.
func (g *grant) describe() string {
	var b strings.Builder
	if g.verbs == nil {
		b.WriteString("every verb")
	} else {
		b.WriteString("verbs ")
		b.WriteString(quoteList(g.verbs))
	}
	switch g.kind {
	case kindAny:
		b.WriteString(" on every resource and path")
	case kindResource:
		if g.resources == nil {
			b.WriteString(" on every resource")
		} else {
			b.WriteString(" on resources ")
			b.WriteString(resList(g.resources))
		}
		if g.names != nil {
			b.WriteString(" named ")
			b.WriteString(quoteList(g.names))
		}
		if g.namespaces != nil {
			b.WriteString(" in namespaces ")
			b.WriteString(quoteList(g.namespaces))
		}
	case kindNonResource:
		if g.urls == nil {
			b.WriteString(" on every non-resource path")
		} else {
			parts := make([]string, len(g.urls))
			for i, u := range g.urls {
				parts[i] = u.String()
			}
			b.WriteString(" on the paths [" + strings.Join(parts, " ") + "]")
		}
	}
	b.WriteString(" in ")
	b.WriteString(targetsString(g.targets))
	b.WriteString(" requests")
	for _, s := range [...]struct {
		what string
		sel  sel
	}{{"project", g.project}, {"space", g.space}, {"virtual cluster", g.vcluster}} {
		switch s.sel.mode {
		case selAny:
			b.WriteString(" of any " + s.what)
		case selExact:
			b.WriteString(" of " + s.what + " " + strconv.Quote(s.sel.value))
		}
	}
	if g.cluster != "" {
		b.WriteString(" to cluster " + strconv.Quote(g.cluster))
	}
	if g.vclusters != nil {
		parts := make([]string, len(g.vclusters))
		for i, v := range g.vclusters {
			parts[i] = v.String()
		}
		b.WriteString(" to the virtual clusters [" + strings.Join(parts, " ") + "]")
	}
	return b.String()
}

func targetsString(bits uint8) string {
	var parts []string
	for i, t := range allTargets {
		if bits&(1<<i) != 0 {
			parts = append(parts, string(t))
		}
	}
	if len(parts) == 0 {
		return "no"
	}
	return strings.Join(parts, "|")
}

func quoteList(l []string) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func resList(l []resPat) string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}
