package policy

import (
	"math/bits"

	"github.com/management-service/mgmt/resource"
)

// Gap is one part of an inner scope that an outer scope does not allow.
type Gap struct {
	// Field is the path of the inner scope's entry, e.g. "spec.scope.rules[1]".
	Field string
	// Detail says what that entry allows that the outer scope does not, e.g.
	// `verbs ["delete"] on resources [pods] in Cluster requests to cluster "c1"`.
	Detail string
}

// String returns "<field>: <detail>".
func (g Gap) String() string { return g.Field + ": " + g.Detail }

// coverBudget bounds the work of checking one grant of the inner scope: the number of
// pieces it may be split into before Covers gives up and reports it as not covered.
const coverBudget = 1 << 14

// Covers reports whether outer allows every request that inner allows, and when it
// does not, names each entry of inner that goes beyond outer (one Gap per entry, with
// the first piece of it that outer does not allow), so that a token issuer can refuse
// a requested scope wider than the caller's with a 403 that names it.
//
// The answer is sound: when Covers returns true, every request inner allows is allowed
// by outer. It is checked piece by piece, the way Kubernetes checks role escalation:
// each entry of inner is split, where needed, into single verbs, resources, paths,
// namespaces, names, virtual clusters and request targets, and each piece must be
// allowed by one entry of outer. An enumeration never covers a wildcard: projects a
// and b do not cover projects "*", verbs get and list do not cover an empty verbs
// list. Covers may answer false for an inner scope that only the union of several
// outer entries would cover without such a split (for example a wildcard resource
// covered by listing every resource); that errs on the side of refusing.
//
// Special cases: a nil outer covers everything. A nil inner (no restriction) is covered
// only by a nil outer or by an outer that itself allows every request (a rule with no
// fields set). An invalid inner is not covered; its gaps are its validation errors. An
// invalid outer allows nothing and so covers only an inner scope that allows nothing.
func Covers(outer, inner *resource.AccessKeyScope) (bool, []Gap) {
	if outer == nil {
		return true, nil
	}
	var ci *Compiled
	if inner != nil {
		if errs := Validate(inner, scopePath); len(errs) > 0 {
			gaps := make([]Gap, len(errs))
			for i, e := range errs {
				gaps[i] = Gap{Field: e.Field, Detail: "invalid: " + e.ErrorBody()}
			}
			return false, gaps
		}
		ci = MustCompile(inner)
	}
	co, err := Compile(outer)
	if err != nil {
		if ci != nil && len(ci.grants) == 0 {
			return true, nil
		}
		return false, []Gap{{Field: scopePath.String(), Detail: "the outer scope is invalid, so it allows nothing: " + err.Error()}}
	}
	if inner == nil {
		budget := coverBudget
		if _, ok := coveredBy(co.grants, grant{targets: bitsAll}, &budget); ok {
			return true, nil
		}
		return false, []Gap{{Field: scopePath.String(),
			Detail: "no scope allows every request the subject may make, and the outer scope is narrower"}}
	}
	var gaps []Gap
	for i := range ci.grants {
		g := &ci.grants[i]
		if len(gaps) > 0 && gaps[len(gaps)-1].Field == g.entry {
			continue // one gap per entry
		}
		budget := coverBudget
		piece, ok := coveredBy(co.grants, *g, &budget)
		if ok {
			continue
		}
		d := "allows " + piece.describe() + ", which the outer scope does not allow"
		if budget <= 0 {
			d += " (or it is too wide to check piece by piece)"
		}
		gaps = append(gaps, Gap{Field: g.entry, Detail: d})
	}
	return len(gaps) == 0, gaps
}

// coveredBy reports whether the grants outs together allow everything in allows,
// trying one grant for the whole of in first and splitting in into pieces along one
// enumerated dimension when none does. When not, it returns a piece of in that no
// grant of outs covers.
func coveredBy(outs []grant, in grant, budget *int) (grant, bool) {
	*budget--
	if *budget < 0 {
		return in, false
	}
	eff := effectiveTargets(&in)
	if eff == 0 {
		return in, true // in matches no well-formed request
	}
	in.targets = eff
	for i := range outs {
		if grantCovers(&outs[i], &in) {
			return in, true
		}
	}
	pieces := split(in)
	if pieces == nil {
		return in, false
	}
	for _, p := range pieces {
		if piece, ok := coveredBy(outs, p, budget); !ok {
			return piece, false
		}
	}
	return in, true
}

// split returns in cut into pieces along its first dimension that holds more than one
// value, or nil when every dimension holds one value or cannot be enumerated.
func split(in grant) []grant {
	var out []grant
	switch {
	case bits.OnesCount8(in.targets) > 1:
		for b := uint8(1); b <= bitProjectVirtualCluster; b <<= 1 {
			if in.targets&b != 0 {
				p := in
				p.targets = b
				out = append(out, p)
			}
		}
	case in.kind == kindAny:
		r, n := in, in
		r.kind, n.kind = kindResource, kindNonResource
		out = append(out, r, n)
	case len(in.verbs) > 1:
		for _, v := range in.verbs {
			p := in
			p.verbs = []string{v}
			out = append(out, p)
		}
	case len(in.resources) > 1:
		for _, r := range in.resources {
			p := in
			p.resources = []resPat{r}
			out = append(out, p)
		}
	case len(in.urls) > 1:
		for _, u := range in.urls {
			p := in
			p.urls = []urlPat{u}
			out = append(out, p)
		}
	case len(in.namespaces) > 1:
		for _, ns := range in.namespaces {
			p := in
			p.namespaces = []string{ns}
			out = append(out, p)
		}
	case len(in.names) > 1:
		for _, n := range in.names {
			p := in
			p.names = []string{n}
			out = append(out, p)
		}
	case len(in.vclusters) > 1:
		for _, v := range in.vclusters {
			p := in
			p.vclusters = []vcSel{v}
			out = append(out, p)
		}
	}
	return out
}

// effectiveTargets returns the request targets g can match at all: a constraint on
// Project, Space, VirtualCluster, cluster or virtual clusters rules out the targets
// whose well-formed requests never meet it.
func effectiveTargets(g *grant) uint8 {
	t := g.targets
	if g.project.mode != selNone {
		t &= bitsProject
	}
	if g.space.mode != selNone {
		t &= bitProjectSpace
	}
	if g.vcluster.mode != selNone {
		t &= bitsVirtualCluster
	}
	if g.cluster != "" {
		t &= bitCluster
	}
	if g.vclusters != nil {
		t &= bitsVirtualCluster
	}
	return t
}

// grantCovers reports whether every request in matches is matched by out: each
// constraint of out must follow from the constraints of in. in.targets must already
// be its effective targets.
func grantCovers(out, in *grant) bool {
	if in.targets&^out.targets != 0 {
		return false
	}
	if out.verbs != nil && (in.verbs == nil || !subset(in.verbs, out.verbs)) {
		return false
	}
	if out.kind != kindAny && out.kind != in.kind {
		return false
	}
	if !out.project.covers(in.project) || !out.space.covers(in.space) || !out.vcluster.covers(in.vcluster) {
		return false
	}
	if out.cluster != "" && in.cluster != out.cluster {
		return false
	}
	if out.vclusters != nil {
		if in.vclusters == nil {
			return false
		}
		for _, w := range in.vclusters {
			ok := false
			for _, v := range out.vclusters {
				if v.covers(w) {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
	}
	switch out.kind {
	case kindResource:
		if out.namespaces != nil && (in.namespaces == nil || !subset(in.namespaces, out.namespaces)) {
			return false
		}
		if out.names != nil && (in.names == nil || !subset(in.names, out.names)) {
			return false
		}
		if out.resources != nil {
			if in.resources == nil {
				return false
			}
			for _, q := range in.resources {
				ok := false
				for _, p := range out.resources {
					if p.covers(q) {
						ok = true
						break
					}
				}
				if !ok {
					return false
				}
			}
		}
	case kindNonResource:
		if out.urls != nil {
			if in.urls == nil {
				return false
			}
			for _, q := range in.urls {
				ok := false
				for _, u := range out.urls {
					if u.covers(q) {
						ok = true
						break
					}
				}
				if !ok {
					return false
				}
			}
		}
	}
	return true
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, s := range a {
		if !contains(b, s) {
			return false
		}
	}
	return true
}
