package token

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// The attacks of issue 18, each against the library on a memdb store.

// keyManager is a scoped key that may write AccessKeys (its scope names only
// accesskeys), as in the issue's attacks.
func keyManager() *resource.AccessKey {
	return accessKey("manager", "s-manager", "mallory", &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{
		Verbs:     []string{"create", "update", "patch"},
		Resources: []resource.GroupResources{{Group: resource.Group, Resources: []string{"accesskeys"}}},
	}}})
}

func TestScenario_adminTakeoverViaSpecKeyIsRefused(t *testing.T) {
	e := newKeyEnv(t)
	e.seed(accessKey("admin", "s-admin", "", nil))
	e.seed(keyManager())
	mallory := e.login("s-manager")

	err := e.update(mallory, "admin", func(k *resource.AccessKey) { k.Spec.Key = "s-takeover" })
	require.Error(t, err)
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	// The issue's request: PATCH /accesskeys/admin {"spec":{"key":…}}.
	for _, p := range []struct{ typ, body string }{
		{store.PatchTypeMerge, `{"spec":{"key":"s-takeover"}}`},
		{store.PatchTypeJSON, `[{"op":"add","path":"/spec","value":{"key":"s-takeover"}}]`},
	} {
		err = e.f.Patch(context.Background(), &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "admin"}}, p.typ,
			[]byte(p.body), store.PatchOptions{WriteOptions: store.WriteOptions{User: mallory}})
		require.Error(t, err, p.typ)
		assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	}
	assert.Equal(t, "admin", e.authenticates("s-admin"), "the real admin key still works")
	assert.Equal(t, "", e.authenticates("s-takeover"), "the attacker's secret is nobody's")
}

func TestScenario_adminTakeoverViaTTLIsRefused(t *testing.T) {
	e := newKeyEnv(t)
	e.seed(accessKey("admin", "s-admin", "", nil))
	e.seed(keyManager())
	mallory := e.login("s-manager")

	err := e.update(mallory, "admin", func(k *resource.AccessKey) { k.Spec.TTL = 1 })
	require.Error(t, err)
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	e.f.Step(time.Hour)
	assert.Equal(t, "admin", e.authenticates("s-admin"), "the admin is not locked out")
}

func TestScenario_subjectSpoofingAndTokenGenerationAreRefused(t *testing.T) {
	e := newKeyEnv(t)
	e.seed(accessKey("admin", "s-admin", "", nil))
	e.seed(keyManager())
	mallory := e.login("s-manager")

	spoof := accessKey("spoof", "s-spoof", "admin", keyManager().Spec.Scope)
	err := e.create(mallory, spoof)
	require.Error(t, err)
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	assert.Contains(t, err.Error(), "User:admin")

	gen := accessKey("gen", "s-gen", "mallory", keyManager().Spec.Scope)
	gen.Spec.TokenGeneration = 1000000
	err = e.create(mallory, gen)
	require.Error(t, err)
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	assert.Contains(t, err.Error(), "tokenGeneration")

	// Neither key exists, and the subjects' generations did not move.
	assert.Equal(t, "", e.authenticates("s-spoof"))
	assert.Equal(t, "", e.authenticates("s-gen"))
	g, err := SubjectGeneration(context.Background(), e.f.Store, SubjectKindUser, "admin", "")
	require.NoError(t, err)
	assert.Zero(t, g)
}

func TestScenario_duplicateSecretIs409AndTheOriginalKeepsWorking(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	e.seed(accessKey("original", "s-shared", "", nil))
	e.seed(accessKey("other", "s-other", "", nil))

	err := e.create(nil, accessKey("duplicate", "s-shared", "", projects("a")))
	require.Error(t, err)
	assert.Equal(t, resource.ReasonConflict, resource.ReasonOf(err), "%v", err)
	assert.Equal(t, 409, resource.CodeOf(err))
	assert.NotContains(t, err.Error(), "original", "the holder is not named")

	// Rotating another key to it is refused the same way.
	err = e.update(nil, "other", func(k *resource.AccessKey) { k.Spec.Key = "s-shared" })
	assert.Equal(t, resource.ReasonConflict, resource.ReasonOf(err), "%v", err)

	// The duplicate does not exist; deleting a key with another secret, and a failed
	// delete of the duplicate, leave the original alone.
	_, err = e.f.Delete(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "duplicate"}}, store.DeleteOptions{})
	assert.True(t, errors.Is(err, resource.ErrNotFound), "%v", err)
	require.NoError(t, e.remove(nil, "other"))
	assert.Equal(t, "original", e.authenticates("s-shared"))

	// Once the original is gone, its secret is free again.
	require.NoError(t, e.remove(nil, "original"))
	assert.Equal(t, "", e.authenticates("s-shared"))
	require.NoError(t, e.create(nil, accessKey("successor", "s-shared", "", nil)))
	assert.Equal(t, "successor", e.authenticates("s-shared"))
	assertSecretsModel(t, e)
}

// tokenEnv is a keyEnv with an issuer and an online verifier on the same store.
func newTokenKeyEnv(t *testing.T) (*keyEnv, *env) {
	te := newEnv(t, &envOptions{store: keyStoreOptions(t)})
	so := te.f.Store
	ke := &keyEnv{t: t, f: te.f, auth: NewAuthenticator(so, AuthenticatorOptions{}),
		authz: NewAuthorizer(AuthorizerOptions{Scheme: so.Scheme()})}
	return ke, te
}

// mint issues a token as the key whose secret is given.
func mint(t *testing.T, ke *keyEnv, te *env, secret string, req *resource.DirectClusterEndpointToken) (*resource.DirectClusterEndpointToken, error) {
	t.Helper()
	ctx := context.Background()
	u := ke.login(secret)
	c, err := IdentityOf(u).TokenCaller(ctx, ke.f.Store, nil)
	require.NoError(t, err)
	return te.issuer.Issue(ctx, req, c, IssueOptions{WriteOptions: store.WriteOptions{User: u}})
}

func TestScenario_deletingAKeyRevokesItsTokensWhateverTheSubject(t *testing.T) {
	ctx := context.Background()
	for _, subject := range []string{"", "team"} {
		t.Run("subject "+subject, func(t *testing.T) {
			ke, te := newTokenKeyEnv(t)
			ke.seed(accessKey("k", "s-k", subject, projects("a")))
			out, err := mint(t, ke, te, "s-k", dcet(0, nil))
			require.NoError(t, err)
			c, err := te.online.Verify(ctx, out.Status.Token)
			require.NoError(t, err)
			assert.Equal(t, "k", c.Management.AccessKey, "the token names the key it was minted with")
			assert.Equal(t, ke.get("k").UID, c.Management.AccessKeyUID)
			assert.Equal(t, ke.get("k").UID, out.Labels[LabelMintedBy])

			require.NoError(t, ke.remove(nil, "k"))
			_, err = te.online.Verify(ctx, out.Status.Token)
			assert.ErrorIs(t, err, ErrRevoked)

			// Re-created under the same name, with the same secret: still revoked.
			ke.seed(accessKey("k", "s-k", subject, projects("a")))
			_, err = te.online.Verify(ctx, out.Status.Token)
			assert.ErrorIs(t, err, ErrRevoked)
			_, err = te.offline.Verify(ctx, out.Status.Token)
			assert.NoError(t, err, "offline verification cannot see it: valid until exp")
		})
	}
}

func TestScenario_markingAKeyForDeletionRevokesAndLocksIt(t *testing.T) {
	ctx := context.Background()
	ke, te := newTokenKeyEnv(t)
	k := accessKey("k", "s-k", "team", projects("a"))
	k.Finalizers = []string{"example.com/hold"}
	ke.seed(k)
	out, err := mint(t, ke, te, "s-k", dcet(0, nil))
	require.NoError(t, err)

	removed, err := ke.f.Delete(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "k"}}, store.DeleteOptions{})
	require.NoError(t, err)
	require.False(t, removed, "the finalizer holds it")
	assert.Equal(t, "", ke.authenticates("s-k"))
	_, err = te.online.Verify(ctx, out.Status.Token)
	assert.ErrorIs(t, err, ErrRevoked)
	err = ke.update(nil, "k", func(k *resource.AccessKey) { k.Spec.Key = "s-again" })
	assert.Equal(t, resource.ReasonInvalid, resource.ReasonOf(err), "no new secret for a key being deleted: %v", err)
	require.NoError(t, ke.update(nil, "k", func(k *resource.AccessKey) { k.Finalizers = nil }))
	assertSecretsModel(t, ke)
}

func TestScenario_ttlOverflowIs422NamingTheBound(t *testing.T) {
	e := newKeyEnv(t)
	for _, ttl := range []int64{9223372037, 1 << 62, MaxAccessKeyTTL + 1} {
		k := accessKey("k", "s-k", "", nil)
		k.Spec.TTL = ttl
		err := e.create(nil, k)
		require.Error(t, err)
		assert.Equal(t, resource.ReasonInvalid, resource.ReasonOf(err), "%v", err)
		assert.Contains(t, err.Error(), "spec.ttl")
		assert.Contains(t, err.Error(), "3153600000")
	}
	k := accessKey("k", "s-k", "", nil)
	k.Spec.TTL = MaxAccessKeyTTL
	require.NoError(t, e.create(nil, k))
	assert.Equal(t, "k", e.authenticates("s-k"), "the longest ttl is far in the future, not expired")

	// A stored ttl from before the bound never wraps around.
	legacy := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{CreationTimestamp: resource.NewTime(time.Now())},
		Spec: resource.AccessKeySpec{TTL: 1<<63 - 1}}
	assert.True(t, KeyExpiry(legacy).After(time.Now().Add(99*365*24*time.Hour)))
}

func TestScenario_keyExpiresAfterItsTTL(t *testing.T) {
	e := newKeyEnv(t)
	k := accessKey("k", "s-k", "", nil)
	k.Spec.TTL = 60
	e.seed(k)
	assert.Equal(t, "k", e.authenticates("s-k"))
	e.f.Step(61 * time.Second)
	_, err := e.auth.Authenticate(context.Background(), "s-k")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expired")
}

func TestScenario_neitherSecretNorHashIsEverReturned(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	w, err := e.f.Watch(ctx, &resource.AccessKey{}, store.WatchOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	defer w.Stop()

	const secret = "s-very-secret-value"
	hash := strings.TrimPrefix(SecretName(secret), "sha256-")
	k := accessKey("k", secret, "", nil)
	k.Annotations = map[string]string{AnnotationLastApplied: `{"apiVersion":"management.service/v1","kind":"AccessKey","spec":{"key":"` + secret + `"}}`}
	require.NoError(t, e.create(nil, k))
	require.NoError(t, e.update(nil, "k", func(k *resource.AccessKey) { k.Spec.Key = secret + "-2" }))
	require.NoError(t, e.update(nil, "k", func(k *resource.AccessKey) { k.Spec.Description = "x" }))

	seen := []any{k, e.get("k")}
	var list resource.AccessKeyList
	require.NoError(t, e.f.List(ctx, &list, store.ListOptions{}))
	seen = append(seen, &list)
	// Two events: the rotation changes no field of the key itself, so it writes only
	// the internal records.
	for i := 0; i < 2; i++ {
		select {
		case ev := <-w.ResultChan():
			seen = append(seen, ev.Object)
		case <-time.After(5 * time.Second):
			require.FailNow(t, fmt.Sprintf("no watch event after %d", i))
		}
	}
	for i, o := range seen {
		raw, err := json.Marshal(o)
		require.NoError(t, err)
		s := string(raw)
		assert.NotContains(t, s, secret, "result %d", i)
		assert.NotContains(t, s, hash, "result %d", i)
		assert.NotContains(t, s, "keyHash", "result %d", i)
		assert.NotContains(t, s, `"key"`, "result %d", i)
	}
	assert.Equal(t, "", e.authenticates(secret), "rotated away")
	assert.Equal(t, "k", e.authenticates(secret+"-2"))
}

func TestScenario_selfServiceMintsListsAndRevokesOnlyItsOwnTokens(t *testing.T) {
	ctx := context.Background()
	ke, te := newTokenKeyEnv(t)
	ke.seed(accessKey("a-key", "s-a", "alice", projects("a")))
	ke.seed(accessKey("b-key", "s-b", "bob", projects("b")))
	alice, bob := ke.login("s-a"), ke.login("s-b")
	dcetReq := func(verb, name string) policy.Request {
		return policy.Request{Verb: verb, APIGroup: resource.Group, Resource: "directclusterendpointtokens", Name: name,
			Target: resource.RequestTargetManagement}
	}

	// Minting: allowed by self-service, within the key's own scope only.
	d, err := ke.authz.Authorize(ctx, alice, dcetReq("create", ""))
	require.NoError(t, err)
	assert.Equal(t, "self-service", d.Entry)
	own, err := mint(t, ke, te, "s-a", dcet(0, nil))
	require.NoError(t, err)
	assert.Equal(t, projects("a"), own.Spec.Scope, "no requested scope: its own")
	_, err = mint(t, ke, te, "s-a", dcet(0, projects("a", "b")))
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "a wider scope: %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "Ask for a scope within your access key's own scope. "), "%v", err)
	theirs, err := mint(t, ke, te, "s-b", dcet(0, nil))
	require.NoError(t, err)

	// A list shows only its own records.
	d, err = ke.authz.Authorize(ctx, alice, dcetReq("list", ""))
	require.NoError(t, err)
	require.NotNil(t, d.Visible)
	var list resource.DirectClusterEndpointTokenList
	require.NoError(t, ke.f.List(ctx, &list, store.ListOptions{}))
	var visible []string
	for i := range list.Items {
		if d.Visible(&list.Items[i]) {
			visible = append(visible, list.Items[i].Name)
		}
	}
	assert.Equal(t, []string{own.Name}, visible)

	// Get and delete: its own record yes, another's is as if missing.
	for _, verb := range []string{"get", "delete"} {
		d, err := ke.authz.Authorize(ctx, alice, dcetReq(verb, theirs.Name))
		require.NoError(t, err)
		assert.False(t, d.Visible(theirs), verb)
		assert.True(t, d.Visible(own), verb)
	}
	// The issuer replaces a minted-by label the request carried.
	forged := dcet(0, nil)
	forged.Labels = map[string]string{LabelMintedBy: IdentityOf(bob).Key.UID}
	out, err := mint(t, ke, te, "s-a", forged)
	require.NoError(t, err)
	assert.Equal(t, IdentityOf(alice).Key.UID, out.Labels[LabelMintedBy])

	// Deleting its own record revokes the token.
	_, err = ke.f.Delete(ctx, &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: own.Name}},
		store.DeleteOptions{WriteOptions: store.WriteOptions{User: alice}})
	require.NoError(t, err)
	_, err = te.online.Verify(ctx, own.Status.Token)
	assert.ErrorIs(t, err, ErrRevoked)
	_, err = te.online.Verify(ctx, theirs.Status.Token)
	assert.NoError(t, err)

	// Nothing else follows from self-service.
	for _, req := range []policy.Request{
		dcetReq("update", own.Name), dcetReq("patch", own.Name), dcetReq("deletecollection", ""),
		{Verb: "list", APIGroup: resource.Group, Resource: "accesskeys", Target: resource.RequestTargetManagement},
		{Verb: "get", APIGroup: resource.Group, Resource: "projects", Name: "b", Target: resource.RequestTargetManagement},
		{Verb: "get", Path: "/healthz", Target: resource.RequestTargetManagement},
		{Verb: "post", Path: "/version", Target: resource.RequestTargetManagement},
	} {
		_, err := ke.authz.Authorize(ctx, alice, req)
		require.Error(t, err, req.String())
		assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), req.String())
		assert.True(t, strings.HasPrefix(err.Error(), LeadForbidden+" "), "%v", err)
		assert.Contains(t, err.Error(), `access key "a-key" cannot`, "keeps the precise explanation")
	}
}

func TestAuthorize_selfServiceDiscoveryForEveryKey(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	e.seed(accessKey("k", "s-k", "alice", projects("a")))
	u := e.login("s-k")
	for _, p := range []string{"/api", "/api/v1", "/apis", "/apis/management.service", "/apis/management.service/v1",
		"/version", "/openapi/v2", "/openapi/v3", "/openapi/v3/apis/management.service/v1"} {
		d, err := e.authz.Authorize(ctx, u, policy.Request{Verb: "get", Path: p, Target: resource.RequestTargetManagement})
		require.NoError(t, err, p)
		assert.Equal(t, "self-service", d.Entry, p)
		assert.Nil(t, d.Visible)
	}
	for _, p := range []string{"/apis/management.service/v1/projects", "/api/v1/namespaces", "/metrics", "/openapi"} {
		_, err := e.authz.Authorize(ctx, u, policy.Request{Verb: "get", Path: p, Target: resource.RequestTargetManagement})
		assert.Error(t, err, p)
	}
	_, err := e.authz.Authorize(ctx, nil, policy.Request{Verb: "get", Path: "/version"})
	assert.Equal(t, resource.ReasonUnauthorized, resource.ReasonOf(err))
}

func TestAuthorize_scopeDecidesWithTheProjectOfTheNamespace(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	e.seed(accessKey("k", "s-k", "alice", projects("a")))
	u := e.login("s-k")
	vci := func(ns string) policy.Request {
		return policy.Request{Verb: "list", APIGroup: resource.Group, Resource: "virtualclusterinstances", Namespace: ns,
			Target: resource.RequestTargetManagement}
	}
	d, err := e.authz.Authorize(ctx, u, vci("p-a"))
	require.NoError(t, err)
	assert.Equal(t, "spec.scope.projects[0]", d.Entry)
	assert.Nil(t, d.Visible, "the scope allows it: every object")
	_, err = e.authz.Authorize(ctx, u, vci("p-b"))
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err))

	custom := NewAuthorizer(AuthorizerOptions{NamespacePrefix: "project-"})
	assert.Equal(t, "a", custom.ProjectOf("virtualclusterinstances", "x", "project-a"))
	assert.Equal(t, "", custom.ProjectOf("virtualclusterinstances", "x", "p-a"))
	assert.Equal(t, "a", custom.ProjectOf("projects", "a", ""))
	_, err = custom.Authorize(ctx, u, vci("project-a"))
	assert.NoError(t, err)
}

func TestAuthorizer_CanDeleteOwnerFollowsTheCallersScope(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	e.seed(accessKey("k", "s-k", "alice", projects("a")))
	u := e.login("s-k")
	owner := func(name string) resource.OwnerReference {
		return resource.OwnerReference{APIVersion: resource.GroupVersion, Kind: resource.KindProject, Name: name, UID: "u"}
	}
	for _, c := range []struct {
		name  string
		user  *store.UserInfo
		owner resource.OwnerReference
		want  bool
	}{
		{"no caller: the host", nil, owner("b"), true},
		{"a project the scope names", u, owner("a"), true},
		{"a project the scope does not name", u, owner("b"), false},
		{"a caller without an identity", &store.UserInfo{Name: "x"}, owner("a"), false},
		{"an unknown kind", u, resource.OwnerReference{APIVersion: "x/v1", Kind: "Thing", Name: "a"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, err := e.authz.CanDeleteOwner(ctx, c.user, c.owner, "")
			require.NoError(t, err)
			assert.Equal(t, c.want, ok)
		})
	}
}

func TestAccessKeyAdmission_internalRecordsRefuseCallers(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	e.seed(accessKey("admin", "s-admin", "", nil))
	admin := e.login("s-admin")
	rec := &AccessKeySecret{ObjectMeta: resource.ObjectMeta{Name: SecretName("forged")}, Spec: AccessKeyRef{Name: "admin", UID: IdentityOf(admin).Key.UID}}
	err := e.f.Create(ctx, rec, store.CreateOptions{WriteOptions: store.WriteOptions{User: admin}})
	assert.Equal(t, resource.ReasonForbidden, resource.ReasonOf(err), "%v", err)
	assert.Equal(t, "", e.authenticates("forged"))
}
