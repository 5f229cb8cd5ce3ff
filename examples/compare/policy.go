package main

import (
	"errors"
	"strconv"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
)

// Policy evaluation: one request against n rules of which only the last allows it
// (the RBAC RulesAllow anchor of issue 11), for ours and two Kubernetes baselines.
//
// Kubernetes' RulesAllow lives in k8s.io/kubernetes (plugin/pkg/auth/authorizer/rbac),
// which cannot be required as a module. The baselines are:
//
//   - "RulesAllow-equivalent": the documented RBAC algorithm over rbacv1.PolicyRule,
//     written here: attributes read through an interface; per rule a verb match, an
//     API group match, a resource match on "resource/subresource" (with "*" and
//     "*/subresource") and a resource name match; the first rule that allows wins.
//   - "component-helpers Covers": k8s.io/component-helpers/auth/rbac/validation.Covers,
//     the Kubernetes-maintained rule matcher available as a module (it is what RBAC's
//     escalation check uses): the request as a rule of one verb, one resource and
//     one name, covered by the rules. It breaks rules down and allocates, so it is
//     slower than RulesAllow; the fair bar is the first baseline.

// policyRules returns ours and the RBAC form of n rules; the last allows get of
// pods and pods/status in the core group.
func policyRules(n int) ([]resource.AccessKeyScopeRule, []rbacv1.PolicyRule) {
	ours := make([]resource.AccessKeyScopeRule, n)
	theirs := make([]rbacv1.PolicyRule, n)
	for i := range ours {
		res := "resource" + strconv.Itoa(i)
		if i == n-1 {
			res = "pods"
		}
		verbs := []string{"get", "list", "watch"}
		ours[i] = resource.AccessKeyScopeRule{Verbs: verbs,
			Resources: []resource.GroupResources{{Group: "", Resources: []string{res, res + "/status"}}}}
		theirs[i] = rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{""}, Resources: []string{res, res + "/status"}}
	}
	return ours, theirs
}

// rbacAttributes is the part of Kubernetes' authorizer.Attributes that RBAC rule
// matching reads.
type rbacAttributes interface {
	GetVerb() string
	IsResourceRequest() bool
	GetAPIGroup() string
	GetResource() string
	GetSubresource() string
	GetName() string
	GetPath() string
}

type rbacRequest struct{ verb, group, resource, subresource, name, path string }

func (r *rbacRequest) GetVerb() string         { return r.verb }
func (r *rbacRequest) IsResourceRequest() bool { return r.path == "" }
func (r *rbacRequest) GetAPIGroup() string     { return r.group }
func (r *rbacRequest) GetResource() string     { return r.resource }
func (r *rbacRequest) GetSubresource() string  { return r.subresource }
func (r *rbacRequest) GetName() string         { return r.name }
func (r *rbacRequest) GetPath() string         { return r.path }

// rbacRulesAllow says whether one of rules allows the request.
func rbacRulesAllow(a rbacAttributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if rbacRuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

func rbacRuleAllows(a rbacAttributes, r *rbacv1.PolicyRule) bool {
	if !a.IsResourceRequest() {
		return containsOrStar(r.Verbs, a.GetVerb(), rbacv1.VerbAll) && pathMatches(r.NonResourceURLs, a.GetPath())
	}
	full := a.GetResource()
	if sub := a.GetSubresource(); sub != "" {
		full = a.GetResource() + "/" + sub
	}
	return containsOrStar(r.Verbs, a.GetVerb(), rbacv1.VerbAll) &&
		containsOrStar(r.APIGroups, a.GetAPIGroup(), rbacv1.APIGroupAll) &&
		resourceMatches(r.Resources, full, a.GetSubresource()) &&
		(len(r.ResourceNames) == 0 || containsOrStar(r.ResourceNames, a.GetName(), ""))
}

func containsOrStar(list []string, v, star string) bool {
	for _, s := range list {
		if s == v || (star != "" && s == star) {
			return true
		}
	}
	return false
}

func resourceMatches(list []string, full, sub string) bool {
	for _, s := range list {
		if s == rbacv1.ResourceAll || s == full {
			return true
		}
		if sub != "" && len(s) == len(sub)+2 && strings.HasPrefix(s, "*/") && s[2:] == sub {
			return true
		}
	}
	return false
}

func pathMatches(list []string, path string) bool {
	for _, s := range list {
		if s == rbacv1.NonResourceAll || s == path ||
			(strings.HasSuffix(s, "*") && strings.HasPrefix(path, strings.TrimSuffix(s, "*"))) {
			return true
		}
	}
	return false
}

// Columns of the policy rows.
const (
	colPolicyOurs   = "ours, compiled"
	colRulesAllowEq = "RulesAllow-equivalent"
	colCovers       = "component-helpers Covers"
)

func policyRow(n int, sub string) string {
	r := "policy, " + strconv.Itoa(n) + " rules, allow last"
	if sub != "" {
		r += " (subresource)"
	}
	return r
}

var decisionSink bool

// policyBenches returns the benches of one policy row, and ours' allocations per
// evaluation measured with testing.AllocsPerRun's method.
func policyBenches(n int, sub string) ([]*bench, error) {
	ours, theirs := policyRules(n)
	c, err := policy.Compile(&resource.AccessKeyScope{Rules: ours})
	if err != nil {
		return nil, err
	}
	req := policy.Request{Verb: "get", Resource: "pods", Subresource: sub, Namespace: "default", Name: "web",
		Target: resource.RequestTargetCluster, Cluster: "c1"}
	attrs := &rbacRequest{verb: "get", resource: "pods", subresource: sub, name: "web"}
	full := "pods"
	if sub != "" {
		full += "/" + sub
	}
	asRule := []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{full}, ResourceNames: []string{"web"}}}
	if !c.Evaluate(req).Allowed || !rbacRulesAllow(attrs, theirs...) {
		return nil, errors.New("policy: the request is not allowed")
	}
	if ok, _ := rbacvalidation.Covers(theirs, asRule); !ok {
		return nil, errors.New("policy: Covers does not allow the request")
	}
	// A near miss must be denied by all three.
	deny := req
	deny.Verb = "delete"
	denyAttrs := *attrs
	denyAttrs.verb = "delete"
	if c.Evaluate(deny).Allowed || rbacRulesAllow(&denyAttrs, theirs...) {
		return nil, errors.New("policy: delete is allowed")
	}
	row := policyRow(n, sub)
	check := func(ok bool) error {
		if !ok {
			return errors.New("denied")
		}
		return nil
	}
	return []*bench{
		{row: row, col: colPolicyOurs, allocs: true, run: func(k int) error {
			ok := true
			for i := 0; i < k; i++ {
				ok = ok && c.Evaluate(req).Allowed
			}
			decisionSink = ok
			return check(ok)
		}},
		{row: row, col: colRulesAllowEq, allocs: true, run: func(k int) error {
			ok := true
			for i := 0; i < k; i++ {
				var a rbacAttributes = attrs
				ok = ok && rbacRulesAllow(a, theirs...)
			}
			decisionSink = ok
			return check(ok)
		}},
		{row: row, col: colCovers, allocs: true, run: func(k int) error {
			ok := true
			for i := 0; i < k; i++ {
				covered, _ := rbacvalidation.Covers(theirs, asRule)
				ok = ok && covered
			}
			decisionSink = ok
			return check(ok)
		}},
	}, nil
}
