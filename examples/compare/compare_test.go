package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err, logs.String())
	for _, l := range rep.lines() {
		for _, col := range []string{l.ours[1], l.def, l.defU, l.plain, l.plnU, l.raw, l.raw2} {
			if col != "" {
				assert.Positive(t, rep.ns(l.ours[0], col), "%s: no result for %s", l.op, col)
			}
		}
	}
	for _, col := range []string{colOursMem, colFakeDefault, colFakePlain} {
		if w := rep.watch[col]; w.p50 <= 0 || w.p99 < w.p50 {
			assert.Fail(t, fmt.Sprintf("watch %s: p50 %v p99 %v", col, w.p50, w.p99))
		}
	}
	assert.NotZero(t, rep.tokenBytes, "no token issued")
	assert.GreaterOrEqual(t, len(rep.targets()), 20, "only %d targets checked", len(rep.targets()))
	var out bytes.Buffer
	rep.print(&out)
	for _, want := range []string{"| create, memdb |", "| list 200, label selector matching 1%, memdb |", "| watch: 1 write reaches 3 watchers", "Targets of issue 11:"} {
		assert.Contains(t, out.String(), want, "report lacks %q:\n%s", want, out.String())
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
		assert.Equal(t, want, got, "%+v: RulesAllow-equivalent says %v, Covers %v", tc, got, want)
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
	require.NoError(t, err)
	if s := res["sign"]; s.ratio != 1.0 || s.ours != 81 || s.jose != 80 || s.samples != 3 {
		assert.Fail(t, fmt.Sprintf("sign: %+v", s))
	}
	if v := res["verify"]; v.ratio != 0.98 || v.samples != 1 {
		assert.Fail(t, fmt.Sprintf("verify: %+v", v))
	}
	_, err = parsePaired("PASS\n")
	assert.Error(t, err, "no error for an output without results")
}

func TestHelpers(t *testing.T) {
	assert.Equal(t, 3.0, percentile([]float64{5, 1, 4, 2, 3}, 50), "p50")
	assert.Equal(t, 5.0, percentile([]float64{5, 1, 4, 2, 3}, 99), "p99")
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}), "median")
	assert.Equal(t, "10,000", thousands(10000), "thousands")
	assert.Equal(t, "1.5 µs", fmtDur(1500), "fmtDur")
}
