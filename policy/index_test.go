package policy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// scanEvaluate is Compiled.Evaluate without the index: every grant, in order.
func scanEvaluate(c *Compiled, req Request) Decision {
	if err := req.Validate(); err != nil {
		return Decision{Reason: err.(*malformedError).reason}
	}
	tbit := targetBit(req.Target)
	for i := range c.grants {
		if g := &c.grants[i]; g.check(&req, tbit) == failNone {
			return Decision{Allowed: true, Entry: g.entry, Reason: g.allowed}
		}
	}
	return Decision{Reason: c.deny}
}

// The index must find the same first allowing entry as a scan of every grant in scope
// order, so that the decision names the same entry.
func TestIndexFindsTheSameFirstEntryAsAScan(t *testing.T) {
	scopes := append(truthTableScopes(),
		&resource.AccessKeyScope{
			AllowServiceCli: true,
			Projects:        projects("b", "*", "a"),
			Spaces:          spaces("a", "s1", "b", "*"),
			VirtualClusters: vcs("a", "vc1", "a", "*"),
			Rules: []resource.AccessKeyScopeRule{
				{Resources: []resource.GroupResources{gr("", "pods"), gr(mgmtG, "virtualclusterinstances/*")}},
				{Verbs: []string{"get"}},
				{Resources: []resource.GroupResources{gr(mgmtG, "projects", "virtualclusterinstances")}, Namespaces: []string{"p-a"}},
				{NonResourceURLs: []string{"/apis/*"}},
				{Resources: []resource.GroupResources{gr("", "*/status")}},
			},
		},
		&resource.AccessKeyScope{Rules: benchRules(30)},
	)
	for i, s := range scopes {
		c := MustCompile(s)
		for _, req := range allRequests() {
			if want, got := scanEvaluate(c, req), c.Evaluate(req); want != got {
				require.FailNow(t, fmt.Sprintf("scope %d: %s: scan %+v, index %+v", i, req, want, got))
			}
		}
	}
}
