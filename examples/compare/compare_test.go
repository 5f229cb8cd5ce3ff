package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// TestSmoke runs every workload once, at a tiny size, on every contender: each
// workload checks its own results (a list returns the expected count, a get the
// object asked for, an update the revision it expects), and the report must have a
// figure in every cell it prints.
func TestSmoke(t *testing.T) {
	cfg := defaultConfig()
	cfg.count, cfg.iterations = 1, 2
	cfg.small, cfg.large = 100, 200
	cfg.watchers, cfg.watchWrites, cfg.writers = 3, 3, 4
	cfg.tokenBench, cfg.gc = false, false
	cfg.tmp = t.TempDir()
	var logs bytes.Buffer
	rep, err := measureAll(context.Background(), cfg, &logs)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	for _, l := range rep.lines() {
		for _, col := range []string{l.ours[1], l.def, l.defU, l.plain, l.plnU, l.raw, l.raw2} {
			if col != "" && rep.ns(l.ours[0], col) <= 0 {
				t.Errorf("%s: no result for %s", l.op, col)
			}
		}
	}
	for _, col := range []string{colOursMem, colFakeDefault, colFakePlain} {
		if w := rep.watch[col]; w.p50 <= 0 || w.p99 < w.p50 {
			t.Errorf("watch %s: p50 %v p99 %v", col, w.p50, w.p99)
		}
	}
	if rep.tokenBytes == 0 {
		t.Error("no token issued")
	}
	if len(rep.targets()) < 20 {
		t.Errorf("only %d targets checked", len(rep.targets()))
	}
	var out bytes.Buffer
	rep.print(&out)
	for _, want := range []string{"| create, memdb |", "| list 200, label selector matching 1%, memdb |", "| watch: 1 write reaches 3 watchers", "Targets of issue 11:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRulesAllowEquivalent checks the RBAC baseline against Kubernetes' own rule
// matcher on requests it must allow and deny alike.
func TestRulesAllowEquivalent(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/status"}},
		{Verbs: []string{"*"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}, ResourceNames: []string{"web"}},
		{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	}
	for _, tc := range []struct {
		verb, group, res, sub, name string
	}{
		{"get", "", "pods", "", "a"}, {"get", "", "pods", "status", "a"}, {"get", "", "pods", "log", "a"},
		{"delete", "", "pods", "", "a"}, {"patch", "apps", "deployments", "scale", "web"},
		{"patch", "apps", "deployments", "scale", "db"}, {"patch", "apps", "deployments", "", "web"},
		{"update", "batch", "jobs", "", "x"}, {"get", "batch", "jobs", "", "x"},
	} {
		full := tc.res
		if tc.sub != "" {
			full += "/" + tc.sub
		}
		want, _ := rbacvalidation.Covers(rules, []rbacv1.PolicyRule{{Verbs: []string{tc.verb}, APIGroups: []string{tc.group},
			Resources: []string{full}, ResourceNames: []string{tc.name}}})
		got := rbacRulesAllow(&rbacRequest{verb: tc.verb, group: tc.group, resource: tc.res, subresource: tc.sub, name: tc.name}, rules...)
		if got != want {
			t.Errorf("%+v: RulesAllow-equivalent says %v, Covers %v", tc, got, want)
		}
	}
}

func TestParsePaired(t *testing.T) {
	out := `goos: linux
BenchmarkPaired/EdDSA/sign-2         	    7395	    160123 ns/op	        78.00 go-jose-µs/op	        81.00 ours-µs/op	         1.040 ratio
BenchmarkPaired/EdDSA/sign-2         	    7000	    160123 ns/op	        80.00 go-jose-µs/op	        80.00 ours-µs/op	         1.000 ratio
BenchmarkPaired/EdDSA/sign-2         	    7000	    160123 ns/op	        90.00 go-jose-µs/op	        85.00 ours-µs/op	         0.940 ratio
BenchmarkPaired/EdDSA/verify-2       	    5000	    240000 ns/op	       120.0 go-jose-µs/op	       118.0 ours-µs/op	         0.980 ratio
PASS
`
	res, err := parsePaired(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := res["sign"]; s.ratio != 1.0 || s.ours != 81 || s.jose != 80 || s.samples != 3 {
		t.Errorf("sign: %+v", s)
	}
	if v := res["verify"]; v.ratio != 0.98 || v.samples != 1 {
		t.Errorf("verify: %+v", v)
	}
	if _, err := parsePaired("PASS\n"); err == nil {
		t.Error("no error for an output without results")
	}
}

func TestHelpers(t *testing.T) {
	if got := percentile([]float64{5, 1, 4, 2, 3}, 50); got != 3 {
		t.Errorf("p50 = %v", got)
	}
	if got := percentile([]float64{5, 1, 4, 2, 3}, 99); got != 5 {
		t.Errorf("p99 = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
	if got := thousands(10000); got != "10,000" {
		t.Errorf("thousands = %q", got)
	}
	if got := fmtDur(1500); got != "1.5 µs" {
		t.Errorf("fmtDur = %q", got)
	}
}
