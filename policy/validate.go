package policy

import (
	"strconv"

	"github.com/management-service/mgmt/resource"
)

// Details of the validation errors that recur.
const (
	detailNoStar       = `"*" is not a wildcard here`
	detailResourceForm = `must be "name", "name/sub", "*", "name/*" or "*/sub"`
	detailURLForm      = `must be "*" or a clean absolute path, with "*" only as the whole last step ("/apis/*")`
	detailName         = "must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters"
	detailLabel        = "must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
)

// Validate checks a scope as it is written into an object, with field paths under
// fldPath (usually spec.scope), and returns every problem found; nil means valid. A
// nil scope is valid. It rejects:
//
//   - an empty project, space or virtual cluster name, and names that are not DNS-1123
//     subdomains; "*" is allowed as a projects entry's project and as a space or
//     virtual cluster name, and nowhere else in these entries;
//   - in rules: an empty verb or "*" as a verb (an empty list means every verb); an
//     API group "*"; a resources entry that is not "name", "name/sub", "*", "name/*"
//     or "*/sub"; overlapping entries of one API group when one of them is a wildcard
//     (the spec's rule; a group entry with an empty resources list counts as "*");
//     resourceNames without resources, and empty or "*" resource names; a namespace
//     that is "*" or not a DNS-1123 label ("" is allowed: cluster-scoped);
//     nonResourceURLs that are not "*" or a clean absolute path with "*" only as the
//     whole last step, or that are set together with resources or namespaces (the rule
//     would ignore them); an unknown request target; a cluster or virtual cluster name
//     "*" or not a DNS-1123 name; and rules that can match nothing because their
//     cluster or virtualClusters contradict their requestTargets or each other.
func Validate(scope *resource.AccessKeyScope, fldPath resource.Path) resource.ErrorList {
	if scope == nil {
		return nil
	}
	var errs resource.ErrorList
	for i, p := range scope.Projects {
		f := fldPath.Child("projects").Index(i).Child("project")
		switch {
		case p.Project == "":
			errs = append(errs, resource.Required(f, `a project name, or "*" for every project`))
		case p.Project != "*" && !isDNS1123Subdomain(p.Project):
			errs = append(errs, resource.Invalid(f, p.Project, detailName))
		}
	}
	for i, s := range scope.Spaces {
		f := fldPath.Child("spaces").Index(i)
		errs = append(errs, validateProjectOf(f.Child("project"), s.Project, "spaces")...)
		errs = append(errs, validateInstance(f.Child("space"), s.Space, "space")...)
	}
	for i, v := range scope.VirtualClusters {
		f := fldPath.Child("virtualClusters").Index(i)
		errs = append(errs, validateProjectOf(f.Child("project"), v.Project, "virtualClusters")...)
		errs = append(errs, validateInstance(f.Child("virtualCluster"), v.VirtualCluster, "virtual cluster")...)
	}
	for i := range scope.Rules {
		errs = append(errs, validateRule(&scope.Rules[i], fldPath.Child("rules").Index(i))...)
	}
	return errs
}

func validateProjectOf(f resource.Path, project, list string) resource.ErrorList {
	switch {
	case project == "":
		return resource.ErrorList{resource.Required(f, "the project the entry belongs to")}
	case project == "*":
		return resource.ErrorList{resource.Invalid(f, project,
			detailNoStar+": an entry of "+list+" names one project (a projects entry \"*\" selects every project)")}
	case !isDNS1123Subdomain(project):
		return resource.ErrorList{resource.Invalid(f, project, detailName)}
	}
	return nil
}

func validateInstance(f resource.Path, name, what string) resource.ErrorList {
	switch {
	case name == "":
		return resource.ErrorList{resource.Required(f, "a "+what+" name, or \"*\" for every "+what+" of the project")}
	case name != "*" && !isDNS1123Subdomain(name):
		return resource.ErrorList{resource.Invalid(f, name, detailName)}
	}
	return nil
}

func validateRule(r *resource.AccessKeyScopeRule, f resource.Path) resource.ErrorList {
	var errs resource.ErrorList
	for j, v := range r.Verbs {
		fv := f.Child("verbs").Index(j)
		switch {
		case v == "":
			errs = append(errs, resource.Invalid(fv, v, "must not be empty"))
		case v == "*":
			errs = append(errs, resource.Invalid(fv, v, detailNoStar+": an empty verbs list means every verb"))
		case !plainValue(v) || hasSpace(v):
			errs = append(errs, resource.Invalid(fv, v, "must be a request verb such as \"get\""))
		}
	}

	// Resources, and the overlap rule: within one API group, no two entries may match
	// a common resource or subresource when either of them is a wildcard.
	byGroup := map[string][]seenPat{}
	for k, gr := range r.Resources {
		fg := f.Child("resources").Index(k)
		if gr.Group == "*" || !plainValue(gr.Group) || hasSpace(gr.Group) {
			errs = append(errs, resource.Invalid(fg.Child("group"), gr.Group,
				detailNoStar+`: name one API group ("" is the core group)`))
			continue
		}
		if len(gr.Resources) == 0 {
			p, fr := resPat{group: gr.Group, kind: patAll}, fg.Child("resources")
			if o, ok := firstOverlap(byGroup[gr.Group], p); ok {
				errs = append(errs, resource.Invalid(fr, nil, "an empty resources list selects every resource of the group and overlaps "+
					o.path.String()+" ("+strconv.Quote(o.pat.String())+"): when wildcards are present, entries must not overlap"))
			}
			byGroup[gr.Group] = append(byGroup[gr.Group], seenPat{p, fr})
			continue
		}
		for m, s := range gr.Resources {
			fr := fg.Child("resources").Index(m)
			p, ok := parseResPat(gr.Group, s)
			if !ok {
				errs = append(errs, resource.Invalid(fr, s, detailResourceForm))
				continue
			}
			if o, ok := firstOverlap(byGroup[gr.Group], p); ok {
				errs = append(errs, resource.Invalid(fr, s, "overlaps "+o.path.String()+
					" ("+strconv.Quote(o.pat.String())+"): when wildcards are present, entries must not overlap"))
			}
			byGroup[gr.Group] = append(byGroup[gr.Group], seenPat{p, fr})
		}
	}

	if len(r.ResourceNames) > 0 && len(r.Resources) == 0 {
		errs = append(errs, resource.Invalid(f.Child("resourceNames"), r.ResourceNames,
			"requires resources to be specified"))
	}
	for j, n := range r.ResourceNames {
		fn := f.Child("resourceNames").Index(j)
		switch {
		case n == "":
			errs = append(errs, resource.Invalid(fn, n, "must not be empty (an empty resourceNames list means every name)"))
		case n == "*":
			errs = append(errs, resource.Invalid(fn, n, detailNoStar+": an empty resourceNames list means every name"))
		case !plainValue(n):
			errs = append(errs, resource.Invalid(fn, n, "must be an object name"))
		}
	}
	for j, ns := range r.Namespaces {
		fn := f.Child("namespaces").Index(j)
		switch {
		case ns == "":
			// cluster-scoped resources (and requests across all namespaces)
		case ns == "*":
			errs = append(errs, resource.Invalid(fn, ns, detailNoStar+": an empty namespaces list means every namespace"))
		case !isDNS1123Label(ns):
			errs = append(errs, resource.Invalid(fn, ns, detailLabel))
		}
	}
	for j, u := range r.NonResourceURLs {
		if _, ok := parseURLPat(u); !ok {
			errs = append(errs, resource.Invalid(f.Child("nonResourceURLs").Index(j), u, detailURLForm))
		}
	}
	if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
		errs = append(errs, resource.Invalid(f.Child("nonResourceURLs"), r.NonResourceURLs,
			"a rule applies either to resources (resources, namespaces) or to non-resource URLs, not both"))
	}

	var targets uint8
	for j, t := range r.RequestTargets {
		b := targetBit(t)
		if b == 0 {
			allowed := make([]string, len(allTargets))
			for i, a := range allTargets {
				allowed[i] = string(a)
			}
			errs = append(errs, resource.NotSupported(f.Child("requestTargets").Index(j), string(t), allowed))
		}
		targets |= b
	}
	if len(r.RequestTargets) == 0 {
		targets = bitsAll
	}

	switch {
	case r.Cluster == "":
	case r.Cluster == "*":
		errs = append(errs, resource.Invalid(f.Child("cluster"), r.Cluster, detailNoStar+": leave cluster empty for every cluster"))
	case !isDNS1123Subdomain(r.Cluster):
		errs = append(errs, resource.Invalid(f.Child("cluster"), r.Cluster, detailName))
	case targets&bitCluster == 0:
		errs = append(errs, resource.Invalid(f.Child("cluster"), r.Cluster,
			"cluster applies only to Cluster requests, and requestTargets does not include Cluster: the rule would match nothing"))
	}
	for j, v := range r.VirtualClusters {
		fv := f.Child("virtualClusters").Index(j)
		switch {
		case v.Name == "*":
			errs = append(errs, resource.Invalid(fv.Child("name"), v.Name, detailNoStar+": an empty name means every virtual cluster"))
		case v.Name != "" && !isDNS1123Subdomain(v.Name):
			errs = append(errs, resource.Invalid(fv.Child("name"), v.Name, detailName))
		}
		switch {
		case v.Namespace == "*":
			errs = append(errs, resource.Invalid(fv.Child("namespace"), v.Namespace, detailNoStar+": an empty namespace means every namespace"))
		case v.Namespace != "" && !isDNS1123Label(v.Namespace):
			errs = append(errs, resource.Invalid(fv.Child("namespace"), v.Namespace, detailLabel))
		}
	}
	if len(r.VirtualClusters) > 0 {
		switch {
		case r.Cluster != "":
			errs = append(errs, resource.Invalid(f.Child("virtualClusters"), nil,
				"virtualClusters applies only to virtual cluster requests, and cluster only to Cluster requests: the rule would match nothing"))
		case targets&bitsVirtualCluster == 0:
			errs = append(errs, resource.Invalid(f.Child("virtualClusters"), nil,
				"virtualClusters applies only to VirtualCluster and ProjectVirtualCluster requests, and requestTargets includes neither: the rule would match nothing"))
		}
	}
	return errs
}

// seenPat is a resource pattern already seen in a rule, with its field path.
type seenPat struct {
	pat  resPat
	path resource.Path
}

// firstOverlap returns the first entry of seen that p overlaps while either of them is
// a wildcard.
func firstOverlap(seen []seenPat, p resPat) (seenPat, bool) {
	for _, o := range seen {
		if (isWildcard(p) || isWildcard(o.pat)) && overlap(p, o.pat) {
			return o, true
		}
	}
	return seenPat{}, false
}

func isWildcard(p resPat) bool {
	return p.kind == patAll || p.kind == patAllSubs || p.kind == patSubOfAll
}

// overlap reports whether some resource or subresource is matched by both p and q
// (which belong to the same API group).
func overlap(p, q resPat) bool {
	if p.kind == patAll || q.kind == patAll {
		return true
	}
	if p.kind > q.kind {
		p, q = q, p
	}
	// p.kind <= q.kind, in the order patResource, patSub, patAllSubs, patSubOfAll
	switch p.kind {
	case patResource:
		return q.kind == patResource && q.res == p.res
	case patSub:
		switch q.kind {
		case patSub:
			return q.res == p.res && q.sub == p.sub
		case patAllSubs:
			return q.res == p.res
		case patSubOfAll:
			return q.sub == p.sub
		}
	case patAllSubs:
		switch q.kind {
		case patAllSubs:
			return q.res == p.res
		case patSubOfAll:
			return true // p.res/q.sub
		}
	case patSubOfAll:
		return q.sub == p.sub
	}
	return false
}

func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			return true
		}
	}
	return false
}

// isDNS1123Label reports whether s is a DNS-1123 label: at most 63 lower-case
// letters, digits and '-', starting and ending with a letter or digit.
func isDNS1123Label(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isDNS1123Subdomain reports whether s is a DNS-1123 subdomain: at most 253
// characters, DNS-1123 labels joined by '.'.
func isDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isDNS1123Label(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}
