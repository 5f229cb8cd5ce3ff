package token

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
)

// TestAuthorize_scopedKeySeesOnlyItsSubjectsKeys checks that a scoped key allowed to
// work on accesskeys sees only the keys of its own subject (so a request about
// another subject's key answers as for a missing one), and that a key without a scope
// sees every key.
func TestAuthorize_scopedKeySeesOnlyItsSubjectsKeys(t *testing.T) {
	manage := &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get", "update"},
		Resources: []resource.GroupResources{{Group: resource.Group, Resources: []string{"accesskeys"}}}}}}
	scoped := NewUserInfo(NewIdentity(accessKey("mgr", "s-0123456789abcdef", "mallory", manage)))
	admin := NewUserInfo(NewIdentity(accessKey("admin", "a-0123456789abcdef", "admin", nil)))
	a := NewAuthorizer(AuthorizerOptions{})
	req := policy.Request{Verb: "update", APIGroup: resource.Group, Resource: "accesskeys", Name: "x",
		Target: resource.RequestTargetManagement}

	tests := []struct {
		name   string
		key    *resource.AccessKey
		scoped bool // seen by the scoped key
	}{
		{"same subject", accessKey("k1", "", "mallory", nil), true},
		{"another subject", accessKey("k2", "", "admin", nil), false},
		{"a key acting for itself", accessKey("mallory", "", "", nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := a.Authorize(context.Background(), scoped, req)
			require.NoError(t, err)
			require.NotNil(t, d.Visible)
			assert.Equal(t, tt.scoped, d.Visible(tt.key))
			d, err = a.Authorize(context.Background(), admin, req)
			require.NoError(t, err)
			assert.Nil(t, d.Visible, "a key without a scope sees every key")
		})
	}
	d, err := a.Authorize(context.Background(), scoped, policy.Request{Verb: "get", APIGroup: resource.Group,
		Resource: "accesskeys", Name: "x", Target: resource.RequestTargetManagement})
	require.NoError(t, err)
	assert.False(t, d.Visible(&resource.Project{}), "only AccessKeys can be seen through it")
}
