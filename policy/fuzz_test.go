package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// fuzzInput turns fuzzer bytes into choices among small vocabularies, so that random
// scopes and requests meet often enough to match.
type fuzzInput struct{ b []byte }

func (f *fuzzInput) next() int {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return int(c)
}

func (f *fuzzInput) pick(list ...string) string { return list[f.next()%len(list)] }

func (f *fuzzInput) some(max int, list ...string) []string {
	n := f.next() % (max + 1)
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, f.pick(list...))
	}
	return out
}

var (
	fuzzProjects  = []string{"a", "b", "*"}
	fuzzInstances = []string{"s1", "vc1", "*"}
	fuzzVerbs     = []string{"get", "list", "watch", "create", "delete"}
	fuzzGroups    = []string{"", "apps", mgmtG}
	fuzzResources = []string{"pods", "pods/status", "pods/*", "*/status", "*", "deployments", "projects",
		"virtualclusterinstances", "virtualclusterinstances/*", "directclusterendpointtokens"}
	fuzzNames      = []string{"a", "vc1", "s1"}
	fuzzNamespaces = []string{"", "default", "p-a", "p-b"}
	fuzzURLs       = []string{"*", "/version", "/api/*", "/apis/*", "/healthz", "/healthz/*", "/apis/apps/*", "/"}
	fuzzTargets    = []string{"Management", "Cluster", "VirtualCluster", "ProjectSpace", "ProjectVirtualCluster"}
	fuzzPaths      = []string{"/", "/version", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1",
		"/apis/apps/v1/deployments", "/healthz", "/healthz/ready", "/healthzfoo", "/version/../api", "//version",
		"/api/%2e%2e", "/healthz/", "/version;x", "/api/v1#x"}
)

func (f *fuzzInput) rule() resource.AccessKeyScopeRule {
	var r resource.AccessKeyScopeRule
	r.Verbs = f.some(2, fuzzVerbs...)
	switch f.next() % 5 {
	case 1, 3:
		for i, n := 0, 1+f.next()%2; i < n; i++ {
			r.Resources = append(r.Resources, gr(f.pick(fuzzGroups...), f.some(2, fuzzResources...)...))
		}
		r.ResourceNames = f.some(1, fuzzNames...)
		if f.next()%2 == 0 {
			r.Namespaces = f.some(2, fuzzNamespaces...)
		}
	case 2:
		r.Namespaces = append(f.some(1, fuzzNamespaces...), f.pick(fuzzNamespaces...))
	case 4:
		r.NonResourceURLs = append(f.some(1, fuzzURLs...), f.pick(fuzzURLs...))
	}
	for _, t := range f.some(2, fuzzTargets...) {
		r.RequestTargets = append(r.RequestTargets, resource.RequestTarget(t))
	}
	switch f.next() % 6 {
	case 1:
		r.Cluster = "c1"
	case 2:
		r.VirtualClusters = []resource.AccessKeyVirtualCluster{{Name: f.pick("", "vc1", "vc2"), Namespace: f.pick("", "p-a", "host")}}
	}
	return r
}

func (f *fuzzInput) scope() *resource.AccessKeyScope {
	flags := f.next()
	if flags%11 == 0 {
		return nil
	}
	s := &resource.AccessKeyScope{AllowServiceCli: flags%3 == 0}
	for i, n := 0, f.next()%3; i < n; i++ {
		s.Projects = append(s.Projects, resource.AccessKeyScopeProject{Project: f.pick(fuzzProjects...)})
	}
	for i, n := 0, f.next()%3; i < n; i++ {
		s.Spaces = append(s.Spaces, resource.AccessKeyScopeSpace{Project: f.pick("a", "b"), Space: f.pick(fuzzInstances...)})
	}
	for i, n := 0, f.next()%3; i < n; i++ {
		s.VirtualClusters = append(s.VirtualClusters, resource.AccessKeyScopeVirtualCluster{Project: f.pick("a", "b"), VirtualCluster: f.pick(fuzzInstances...)})
	}
	for i, n := 0, f.next()%4; i < n; i++ {
		s.Rules = append(s.Rules, f.rule())
	}
	return s
}

func (f *fuzzInput) request() Request {
	r := requestContexts[f.next()%len(requestContexts)]
	r.Verb = f.pick(fuzzVerbs...)
	switch f.next() % 4 {
	case 0:
		r.Path = f.pick(fuzzPaths...)
	case 1:
		r.Path = "/" + string(f.b) // raw bytes: the canonical-path check is fuzzed too
		f.b = nil
	default:
		r.APIGroup = f.pick(fuzzGroups...)
		r.Resource = f.pick("pods", "deployments", "projects", "virtualclusterinstances", "spaceinstances", "directclusterendpointtokens")
		r.Namespace = f.pick(fuzzNamespaces...)
		r.Name = f.pick("", "a", "vc1", "s1")
		if r.Name != "" {
			r.Subresource = f.pick("", "status", "log")
		}
		if r.Target == tMgmt {
			r.Project = projectOf(r)
		}
	}
	return r
}

// extend returns a copy of s with one more entry (or allowServiceCli turned on).
func extend(s *resource.AccessKeyScope, f *fuzzInput) *resource.AccessKeyScope {
	if s == nil {
		return nil
	}
	t := *s
	t.Projects = append([]resource.AccessKeyScopeProject(nil), s.Projects...)
	t.Spaces = append([]resource.AccessKeyScopeSpace(nil), s.Spaces...)
	t.VirtualClusters = append([]resource.AccessKeyScopeVirtualCluster(nil), s.VirtualClusters...)
	t.Rules = append([]resource.AccessKeyScopeRule(nil), s.Rules...)
	switch f.next() % 5 {
	case 0:
		t.Projects = append(t.Projects, resource.AccessKeyScopeProject{Project: f.pick(fuzzProjects...)})
	case 1:
		t.Spaces = append(t.Spaces, resource.AccessKeyScopeSpace{Project: f.pick("a", "b"), Space: f.pick(fuzzInstances...)})
	case 2:
		t.VirtualClusters = append(t.VirtualClusters, resource.AccessKeyScopeVirtualCluster{Project: f.pick("a", "b"), VirtualCluster: f.pick(fuzzInstances...)})
	case 3:
		t.Rules = append(t.Rules, f.rule())
	case 4:
		t.AllowServiceCli = true
	}
	return &t
}

// narrow returns a copy of s with every wildcard replaced by one of the values it
// stands for.
func narrow(s *resource.AccessKeyScope) *resource.AccessKeyScope {
	if s == nil {
		return nil
	}
	t := &resource.AccessKeyScope{AllowServiceCli: s.AllowServiceCli}
	star := func(v, instead string) string {
		if v == "*" {
			return instead
		}
		return v
	}
	for _, p := range s.Projects {
		t.Projects = append(t.Projects, resource.AccessKeyScopeProject{Project: star(p.Project, "a")})
	}
	for _, sp := range s.Spaces {
		t.Spaces = append(t.Spaces, resource.AccessKeyScopeSpace{Project: sp.Project, Space: star(sp.Space, "s1")})
	}
	for _, v := range s.VirtualClusters {
		t.VirtualClusters = append(t.VirtualClusters, resource.AccessKeyScopeVirtualCluster{Project: v.Project, VirtualCluster: star(v.VirtualCluster, "vc1")})
	}
	for _, r := range s.Rules {
		n := r
		n.Resources = nil
		for _, g := range r.Resources {
			ng := resource.GroupResources{Group: g.Group}
			for _, res := range g.Resources {
				switch {
				case res == "*":
					res = "pods"
				case strings.HasPrefix(res, "*/"):
					res = "pods" + res[1:]
				case strings.HasSuffix(res, "/*"):
					res = res[:len(res)-1] + "status"
				}
				ng.Resources = append(ng.Resources, res)
			}
			n.Resources = append(n.Resources, ng)
		}
		n.NonResourceURLs = nil
		for _, u := range r.NonResourceURLs {
			switch {
			case u == "*" || u == "/*":
				u = "/version"
			case strings.HasSuffix(u, "/*"):
				u = u[:len(u)-1] + "v1"
			}
			n.NonResourceURLs = append(n.NonResourceURLs, u)
		}
		t.Rules = append(t.Rules, n)
	}
	return t
}

func allowed(t *testing.T, s *resource.AccessKeyScope, req Request) bool {
	t.Helper()
	c, err := Compile(s)
	if err != nil {
		require.NoError(t, err, "compile of a validated scope failed")
	}
	return c.Evaluate(req).Allowed
}

// FuzzEvaluate checks the invariants of reliability-security §4.6 on random scopes
// and requests:
//  1. adding an entry never removes an allow;
//  2. removing "*" (replacing a wildcard by one value it stands for) never adds one;
//  3. Covers(A, B) and B allows r imply A allows r; every scope covers itself and what
//     it grows into covers it;
//  4. a non-resource path that is not canonical is never allowed, so the decision is
//     the one for the canonical path the router used;
//  5. the compiled engine, the one-shot Evaluate, Explain and the naive reference
//     implementation (a direct reading of doc.go) agree.
func FuzzEvaluate(f *testing.F) {
	for _, seed := range []string{
		"", "\x01\x01\x00\x00\x01\x00\x00\x02\x00",
		"\x03\x02\x02\x01\x01\x01\x00\x02\x00\x01\x01\x04\x02\x02\x00\x05\x03",
		"\x05\x00\x00\x00\x01\x02\x01\x01\x02\x03\x04\x00\x01\x02\x03\x00\x00\x00\x07\x02\x00",
		"\x06\x01\x02\x01\x00\x01\x01\x01\x01\x00\x02\x03\x01\x00\x00\x01\x02\x03\x04",
		"\x09\x02\x00\x02\x00\x01\x03\x01\x02\x01\x00\x01\x04\x01\x00\x00\x03\x04\x05\x06\x07\x08",
		"\x0c\x00\x00\x00\x03\x02\x04\x01\x05\x02\x01\x00\x03\x04\x02\x01\x01\x00\x02\x01\x02\x00\x02\x02",
		"\x03\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{b: data}
		scope := in.scope()
		other := in.scope()
		grow := extend(scope, in)
		req := in.request()

		c, err := Compile(scope)
		if err != nil {
			// An invalid scope allows nothing.
			if d := Evaluate(scope, req); d.Allowed {
				require.FailNow(t, fmt.Sprintf("invalid scope %+v allowed %s", scope, req))
			}
			return
		}
		d := c.Evaluate(req)

		// 5: the implementations agree.
		if want := refAllows(scope, req); d.Allowed != want {
			require.FailNow(t, fmt.Sprintf("scope %+v, %s: engine %v (%s), reference %v", scope, req, d.Allowed, c.Explain(req).Reason, want))
		}
		if e := Evaluate(scope, req); e.Allowed != d.Allowed || e.Entry != d.Entry {
			require.FailNow(t, fmt.Sprintf("Evaluate %+v differs from Compiled.Evaluate %+v", e, d))
		}
		if e := c.Explain(req); e.Allowed != d.Allowed || (d.Allowed && e != d) {
			require.FailNow(t, fmt.Sprintf("Explain %+v differs from Evaluate %+v", e, d))
		}
		if (d.Allowed && d.Entry == "" && scope != nil) || (!d.Allowed && d.Entry != "") {
			require.FailNow(t, fmt.Sprintf("an allow names its entry, a denial none: %+v", d))
		}

		// 4: only canonical paths are ever allowed.
		if d.Allowed && (req.Validate() != nil || (req.Resource == "" && !canonicalPath(req.Path))) {
			require.FailNow(t, fmt.Sprintf("%s is allowed although it is malformed", req))
		}

		// 3: every scope covers itself.
		if ok, gaps := Covers(scope, scope); !ok {
			require.FailNow(t, fmt.Sprintf("scope %+v does not cover itself: %v", scope, gaps))
		}

		// 1: adding an entry never removes an allow (and the grown scope covers the old).
		if grow != nil && len(Validate(grow, root)) == 0 {
			if d.Allowed && !allowed(t, grow, req) {
				require.FailNow(t, fmt.Sprintf("adding an entry removed an allow: %+v -> %+v, %s", scope, grow, req))
			}
			if ok, gaps := Covers(grow, scope); !ok {
				require.FailNow(t, fmt.Sprintf("%+v does not cover %+v, from which it grew: %v", grow, scope, gaps))
			}
		}

		// 2: removing "*" never adds an allow.
		if n := narrow(scope); n != nil && len(Validate(n, root)) == 0 {
			if allowed(t, n, req) && !d.Allowed {
				require.FailNow(t, fmt.Sprintf("replacing wildcards added an allow: %+v -> %+v, %s", scope, n, req))
			}
			if ok, gaps := Covers(scope, n); !ok {
				require.FailNow(t, fmt.Sprintf("%+v does not cover its narrowing %+v: %v", scope, n, gaps))
			}
		}

		// 3: Covers is sound on this request, both ways round.
		if len(Validate(other, root)) == 0 {
			otherAllows := allowed(t, other, req)
			if ok, _ := Covers(scope, other); ok && otherAllows && !d.Allowed {
				require.FailNow(t, fmt.Sprintf("Covers(%+v, %+v) but %s is allowed by the inner only", scope, other, req))
			}
			if ok, _ := Covers(other, scope); ok && d.Allowed && !otherAllows {
				require.FailNow(t, fmt.Sprintf("Covers(%+v, %+v) but %s is allowed by the inner only", other, scope, req))
			}
		}
	})
}
