package token

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func TestIssuer_Issue_returnsTokenAndRecordWithoutIt(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	out := e.issue(dcet(3600, nil), alice())

	require.True(t, strings.HasPrefix(out.Name, "dcet-"), out.Name)
	require.Len(t, out.Name, len("dcet-")+5)
	require.NotEmpty(t, out.UID)
	require.NotEmpty(t, out.ResourceVersion)
	require.Equal(t, int64(3600), out.Spec.TTL)
	require.Equal(t, alice().Scope, out.Spec.Scope, "no requested scope: the caller's")
	require.Equal(t, storeNow(e).Add(time.Hour), out.Status.ExpirationTimestamp.Time)
	require.Equal(t, "User:alice", out.Annotations[AnnotationSubject])
	require.Equal(t, alice().UID, out.Annotations[AnnotationSubjectUID])
	require.Equal(t, e.keys.SigningKey().ID(), out.Annotations[AnnotationKeyID])

	// The stored record holds everything but the token.
	rec := &resource.DirectClusterEndpointToken{}
	require.NoError(t, e.f.Get(ctx, "", out.Name, rec, store.GetOptions{}))
	require.Empty(t, rec.Status.Token)
	require.Equal(t, out.Status.ExpirationTimestamp, rec.Status.ExpirationTimestamp)
	require.Equal(t, out.Spec, rec.Spec)
	require.Equal(t, out.UID, rec.UID)
	raw, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NotContains(t, string(raw), out.Status.Token)
	require.NotContains(t, string(raw), strings.Split(out.Status.Token, ".")[2], "not even the signature")

	// The claims.
	c, err := e.online.Verify(ctx, out.Status.Token)
	require.NoError(t, err)
	assert.Equal(t, testIssuer, c.Issuer)
	assert.Equal(t, "User:alice", c.Subject)
	assert.Empty(t, c.Audience)
	assert.Equal(t, storeNow(e), c.IssuedAt.UTC())
	assert.Equal(t, c.IssuedAt, c.NotBefore)
	assert.Equal(t, rec.Status.ExpirationTimestamp.Time, c.Expiry.UTC())
	assert.Equal(t, rec.UID, c.ID, "jti is the record's uid")
	assert.Equal(t, ManagementClaim{UID: alice().UID, Name: "alice", Kind: "User", Generation: 1, Record: out.Name,
		Scope: alice().Scope}, c.Management)
	assert.Equal(t, e.keys.SigningKey().ID(), c.KeyID)
	assert.Equal(t, EdDSA, c.Algorithm)

	h := decodePart(t, out.Status.Token, 0)
	assert.Equal(t, map[string]any{"alg": "EdDSA", "kid": e.keys.SigningKey().ID(), "typ": TokenType}, h)
	p := decodePart(t, out.Status.Token, 1)
	for _, k := range []string{"iss", "sub", "iat", "nbf", "exp", "jti", ClaimName} {
		assert.Contains(t, p, k)
	}
	assert.NotContains(t, p, "aud")
}

func storeNow(e *env) time.Time { return e.f.Clock.Now().UTC().Truncate(time.Second) }

func TestIssuer_Issue_nameAndAudience(t *testing.T) {
	e := newEnv(t, &envOptions{issuer: IssuerOptions{Audience: []string{"cluster-a"}}})
	ctx := context.Background()

	named := dcet(0, nil)
	named.Name = "my-token"
	out, err := e.issuer.Issue(ctx, named, alice(), IssueOptions{})
	require.NoError(t, err)
	require.Equal(t, "my-token", out.Name)
	require.Equal(t, "cluster-a", decodePart(t, out.Status.Token, 1)["aud"])

	_, err = e.issuer.Issue(ctx, named, alice(), IssueOptions{})
	require.ErrorIs(t, err, resource.ErrAlreadyExists, "the name is taken")

	gen := dcet(0, nil)
	gen.GenerateName = "ci-"
	out, err = e.issuer.Issue(ctx, gen, alice(), IssueOptions{Audience: []string{"cluster-b", "cluster-c"}})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out.Name, "ci-"))
	require.Equal(t, []any{"cluster-b", "cluster-c"}, decodePart(t, out.Status.Token, 1)["aud"])

	out, err = e.issuer.Issue(ctx, dcet(0, nil), alice(), IssueOptions{Audience: []string{}})
	require.NoError(t, err)
	require.NotContains(t, decodePart(t, out.Status.Token, 1), "aud", "an empty, non-nil audience means none")
}

// SEC-TOK-TTL: default, bounds (422 naming the bound), overflow, the cap at the
// caller's key, and exp - iat never above the maximum.
func TestIssuer_Issue_TTL(t *testing.T) {
	e := newEnv(t, &envOptions{issuer: IssuerOptions{MinTTL: 10 * time.Minute}})
	ctx := context.Background()
	maxS := int64(DefaultMaxTTL / time.Second)

	t.Run("omitted or 0 gives the default of 24 h", func(t *testing.T) {
		out := e.issue(dcet(0, nil), alice())
		require.Equal(t, int64(86400), out.Spec.TTL)
		require.Equal(t, storeNow(e).Add(24*time.Hour), out.Status.ExpirationTimestamp.Time)
	})
	for _, tc := range []struct {
		name   string
		ttl    int64
		detail string
	}{
		{"negative", -1, "must not be negative"},
		{"very negative", math.MinInt64, "must not be negative"},
		{"below the minimum", 599, "must be at least 600 seconds"},
		{"above the maximum", maxS + 1, "must be at most 7776000 seconds (90 days)"},
		{"near int64 overflow", math.MaxInt64, "must be at most 7776000 seconds (90 days)"},
	} {
		t.Run(tc.name+" is 422 at spec.ttl", func(t *testing.T) {
			_, err := e.issuer.Issue(ctx, dcet(tc.ttl, nil), alice(), IssueOptions{})
			require.ErrorIs(t, err, resource.ErrInvalid)
			st := resource.StatusOf(err)
			require.EqualValues(t, 422, st.Code)
			require.Len(t, st.Details.Causes, 1)
			require.Equal(t, "spec.ttl", st.Details.Causes[0].Field)
			require.Contains(t, st.Details.Causes[0].Message, tc.detail)
		})
	}
	t.Run("exp - iat never above the maximum", func(t *testing.T) {
		for _, ttl := range []int64{600, 601, 86400, maxS - 1, maxS} {
			out := e.issue(dcet(ttl, nil), alice())
			c, err := e.offline.Verify(ctx, out.Status.Token)
			require.NoError(t, err)
			require.Equal(t, ttl, int64(c.Expiry.Sub(c.IssuedAt)/time.Second))
			require.LessOrEqual(t, c.Expiry.Sub(c.IssuedAt), DefaultMaxTTL)
		}
	})
	t.Run("capped at what the caller's key has left", func(t *testing.T) {
		c := alice()
		c.KeyExpiry = e.f.Clock.Now().Add(2*time.Hour + 500*time.Millisecond)
		out := e.issue(dcet(86400, nil), c)
		require.Equal(t, int64(7200), out.Spec.TTL, "the granted ttl is written back")
		require.Equal(t, storeNow(e).Add(2*time.Hour), out.Status.ExpirationTimestamp.Time)
		cl, err := e.offline.Verify(ctx, out.Status.Token)
		require.NoError(t, err)
		require.False(t, cl.Expiry.After(c.KeyExpiry))

		short := e.issue(dcet(600, nil), c)
		require.Equal(t, int64(600), short.Spec.TTL, "a shorter ttl is kept")
	})
	t.Run("a caller whose key has expired is 401", func(t *testing.T) {
		c := alice()
		c.KeyExpiry = e.f.Clock.Now().Add(-time.Second)
		_, err := e.issuer.Issue(ctx, dcet(0, nil), c, IssueOptions{})
		require.ErrorIs(t, err, resource.ErrUnauthorized)
	})
}

func TestNewIssuer_refusesContradictions(t *testing.T) {
	e := newEnv(t, nil)
	_, err := NewIssuer(e.f.Store, e.keys, IssuerOptions{})
	require.Error(t, err, "issuer required")
	_, err = NewIssuer(e.f.Store, e.keys, IssuerOptions{Issuer: testIssuer, MaxTTL: 365 * 24 * time.Hour})
	require.ErrorContains(t, err, "retired keys", "retention shorter than MaxTTL + leeway")
	_, err = NewIssuer(e.f.Store, e.keys, IssuerOptions{Issuer: testIssuer, MaxTTL: time.Hour})
	require.ErrorContains(t, err, "DefaultTTL")
	_, err = NewIssuer(e.f.Store, e.keys, IssuerOptions{Issuer: testIssuer, MaxTTL: time.Hour, DefaultTTL: time.Hour})
	require.NoError(t, err)
}

func TestIssuer_Issue_scopeValidation(t *testing.T) {
	e := newEnv(t, nil)
	bad := &resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: ""}},
		Rules:    []resource.AccessKeyScopeRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"/a*"}}},
	}
	_, err := e.issuer.Issue(context.Background(), dcet(-5, bad), Caller{Name: "root"}, IssueOptions{})
	require.ErrorIs(t, err, resource.ErrInvalid)
	var fields []string
	for _, c := range resource.StatusOf(err).Details.Causes {
		fields = append(fields, c.Field)
	}
	require.Contains(t, fields, "spec.ttl")
	require.Contains(t, fields, "spec.scope.projects[0].project")
	require.Contains(t, fields, "spec.scope.rules[0].verbs[0]")
	require.Contains(t, fields, "spec.scope.rules[0].nonResourceURLs[0]")
}

// SEC-TOK-SCOPE-ESCALATION: a requested scope the caller's does not cover is 403
// naming what is not covered; the issued scope is always covered by the caller's.
func TestIssuer_Issue_scopeEscalation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	own := &resource.AccessKeyScope{
		Projects:        []resource.AccessKeyScopeProject{{Project: "web"}},
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "ops", VirtualCluster: "dev"}},
		Rules: []resource.AccessKeyScopeRule{{
			Verbs:      []string{"get", "list"},
			Resources:  []resource.GroupResources{{Resources: []string{"pods"}}},
			Namespaces: []string{"team-a"}, RequestTargets: []resource.RequestTarget{resource.RequestTargetCluster},
			Cluster: "c1",
		}},
	}
	caller := alice()
	caller.Scope = own
	rule := func(mut func(r *resource.AccessKeyScopeRule)) *resource.AccessKeyScope {
		r := own.Rules[0]
		r.Verbs = append([]string(nil), r.Verbs...)
		r.Resources = []resource.GroupResources{{Resources: append([]string(nil), r.Resources[0].Resources...)}}
		r.Namespaces = append([]string(nil), r.Namespaces...)
		mut(&r)
		return &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{r}}
	}
	for _, tc := range []struct {
		name    string
		scope   *resource.AccessKeyScope
		field   string
		mention string
	}{
		{"every project", &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "*"}}}, "spec.scope.projects[0]", ""},
		{"another project", &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}, {Project: "db"}}}, "spec.scope.projects[1]", ""},
		{"another virtual cluster", &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "ops", VirtualCluster: "prod"}}}, "spec.scope.virtualClusters[0]", ""},
		{"every virtual cluster", &resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "ops", VirtualCluster: "*"}}}, "spec.scope.virtualClusters[0]", ""},
		{"an extra verb", rule(func(r *resource.AccessKeyScopeRule) { r.Verbs = append(r.Verbs, "delete") }), "spec.scope.rules[0]", "delete"},
		{"every verb", rule(func(r *resource.AccessKeyScopeRule) { r.Verbs = nil }), "spec.scope.rules[0]", ""},
		{"another namespace", rule(func(r *resource.AccessKeyScopeRule) { r.Namespaces = []string{"team-b"} }), "spec.scope.rules[0]", "team-b"},
		{"an extra subresource", rule(func(r *resource.AccessKeyScopeRule) { r.Resources[0].Resources = []string{"pods/log"} }), "spec.scope.rules[0]", "pods/log"},
		{"every resource", rule(func(r *resource.AccessKeyScopeRule) { r.Resources[0].Resources = []string{"*"} }), "spec.scope.rules[0]", ""},
		{"another cluster", rule(func(r *resource.AccessKeyScopeRule) { r.Cluster = "c2" }), "spec.scope.rules[0]", "c2"},
		{"allowServiceCli", &resource.AccessKeyScope{AllowServiceCli: true}, "spec.scope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.issuer.Issue(ctx, dcet(0, tc.scope), caller, IssueOptions{})
			require.ErrorIs(t, err, resource.ErrForbidden)
			st := resource.StatusOf(err)
			require.EqualValues(t, 403, st.Code)
			require.Contains(t, st.Message, "wider than the caller's own scope")
			require.Contains(t, st.Message, tc.field)
			require.Contains(t, st.Message, tc.mention)
			require.NotEmpty(t, st.Details.Causes)
			require.True(t, strings.HasPrefix(st.Details.Causes[0].Field, tc.field), st.Details.Causes[0].Field)
		})
	}
	var list resource.DirectClusterEndpointTokenList
	require.NoError(t, e.f.List(ctx, &list, store.ListOptions{}))
	require.Empty(t, list.Items, "no record for a refused request")

	t.Run("narrower scopes are granted as asked, and always covered", func(t *testing.T) {
		for _, s := range []*resource.AccessKeyScope{
			{Projects: []resource.AccessKeyScopeProject{{Project: "web"}}},
			{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "web", VirtualCluster: "x"}, {Project: "ops", VirtualCluster: "dev"}}},
			rule(func(r *resource.AccessKeyScopeRule) { r.Verbs = []string{"get"} }),
			{},
			nil,
		} {
			out := e.issue(dcet(0, s), caller)
			c, err := e.offline.Verify(ctx, out.Status.Token)
			require.NoError(t, err)
			want := s
			if s == nil {
				want = own
			}
			require.Equal(t, want, c.Scope())
			ok, gaps := policy.Covers(own, c.Scope())
			require.True(t, ok, "%v", gaps)
		}
	})
	t.Run("an unrestricted caller may ask for anything; no request gives no restriction", func(t *testing.T) {
		admin := Caller{Name: "admin"}
		out := e.issue(dcet(0, &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "*"}}}), admin)
		require.Len(t, out.Spec.Scope.Projects, 1)
		out = e.issue(dcet(0, nil), admin)
		require.Nil(t, out.Spec.Scope)
		c, err := e.offline.Verify(ctx, out.Status.Token)
		require.NoError(t, err)
		require.Nil(t, c.Scope())
		require.NotContains(t, decodePart(t, out.Status.Token, 1)[ClaimName], "scope")
	})
	t.Run("a caller whose scope allows nothing gets nothing", func(t *testing.T) {
		none := Caller{Name: "nobody", Scope: &resource.AccessKeyScope{}}
		_, err := e.issuer.Issue(ctx, dcet(0, &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}}}), none, IssueOptions{})
		require.ErrorIs(t, err, resource.ErrForbidden)
		out := e.issue(dcet(0, nil), none)
		require.NotNil(t, out.Spec.Scope)
		c, err := e.offline.Verify(ctx, out.Status.Token)
		require.NoError(t, err)
		require.Equal(t, &resource.AccessKeyScope{}, c.Scope(), "an empty scope stays empty, not unrestricted")
		require.False(t, c.Evaluate(policy.Request{Verb: "get", Path: "/version", Target: resource.RequestTargetManagement}).Allowed)
	})
	t.Run("a caller whose own scope is invalid gets 403", func(t *testing.T) {
		broken := Caller{Name: "broken", Scope: &resource.AccessKeyScope{Spaces: []resource.AccessKeyScopeSpace{{Project: "a/b", Space: "c"}}}}
		_, err := e.issuer.Issue(ctx, dcet(0, nil), broken, IssueOptions{})
		require.ErrorIs(t, err, resource.ErrForbidden)
		require.Contains(t, err.Error(), "caller's own scope is invalid")
	})
}

func TestIssuer_Issue_dryRun(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	out, err := e.issuer.Issue(ctx, dcet(120, nil), alice(), IssueOptions{WriteOptions: store.WriteOptions{DryRun: true}})
	require.NoError(t, err)
	require.Empty(t, out.Status.Token, "no token signed")
	require.True(t, strings.HasPrefix(out.Name, "dcet-"))
	require.NotEmpty(t, out.UID)
	require.NotZero(t, out.CreationTimestamp)
	require.Empty(t, out.ResourceVersion, "nothing stored")
	require.Equal(t, int64(120), out.Spec.TTL)
	require.Equal(t, alice().Scope, out.Spec.Scope)
	require.Equal(t, storeNow(e).Add(2*time.Minute), out.Status.ExpirationTimestamp.Time)
	var list resource.DirectClusterEndpointTokenList
	require.NoError(t, e.f.List(ctx, &list, store.ListOptions{}))
	require.Empty(t, list.Items)

	_, err = e.issuer.Issue(ctx, dcet(-1, nil), alice(), IssueOptions{WriteOptions: store.WriteOptions{DryRun: true}})
	require.ErrorIs(t, err, resource.ErrInvalid, "a dry run runs every check")
}

func TestIssuer_Issue_throughAdmission(t *testing.T) {
	scheme := resource.NewScheme()
	require.NoError(t, RegisterKinds(scheme))
	var seen []string
	hook := store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
		if req.Kind.Kind != resource.KindDirectClusterEndpointToken {
			return nil
		}
		tok := req.Object.(*resource.DirectClusterEndpointToken)
		seen = append(seen, req.User.Name)
		if tok.Status.Token != "" {
			return resource.NewInternalError(nil)
		}
		if tok.Spec.TTL > 3600 {
			return resource.NewForbidden(req.Kind, tok.Name, "policy: at most an hour here")
		}
		return nil
	})
	e := newEnvWithStoreOptions(t, &store.Options{Scheme: scheme, Validating: []store.ValidatingAdmitter{hook}})
	ctx := context.Background()
	user := &store.UserInfo{Name: "alice"}
	_, err := e.issuer.Issue(ctx, dcet(7200, nil), alice(), IssueOptions{WriteOptions: store.WriteOptions{User: user}})
	require.ErrorIs(t, err, resource.ErrForbidden)
	out, err := e.issuer.Issue(ctx, dcet(3600, nil), alice(), IssueOptions{WriteOptions: store.WriteOptions{User: user, FieldManager: "kubectl"}})
	require.NoError(t, err)
	require.NotEmpty(t, out.Status.Token)
	require.Equal(t, []string{"alice", "alice"}, seen)
	require.Equal(t, "kubectl", out.ManagedFields[0].Manager)
}

func TestIssuer_Issue_badRequests(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	_, err := e.issuer.Issue(ctx, nil, alice(), IssueOptions{})
	require.ErrorIs(t, err, resource.ErrBadRequest)
	other := dcet(0, nil)
	other.Kind, other.APIVersion = "Project", resource.GroupVersion
	_, err = e.issuer.Issue(ctx, other, alice(), IssueOptions{})
	require.ErrorIs(t, err, resource.ErrBadRequest)
	_, err = e.issuer.Issue(ctx, dcet(0, nil), Caller{}, IssueOptions{})
	require.ErrorIs(t, err, resource.ErrUnauthorized)

	sent := dcet(0, nil)
	sent.Status.Token = "client-sent"
	out := e.issue(sent, alice())
	require.NotEqual(t, "client-sent", out.Status.Token)
	require.Equal(t, "client-sent", sent.Status.Token, "the request is not modified")
}

// The token stays under 1 KiB for a ten-entry scope of every shape, for both
// algorithms, with an issuer URL of typical length.
func TestIssuer_Issue_tokenSize(t *testing.T) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		e := newEnv(t, &envOptions{keys: KeySetOptions{Algorithm: alg}})
		for name, s := range tenEntryScopes() {
			c := alice()
			c.Scope = s
			out := e.issue(dcet(0, s), c)
			t.Logf("RESULT token-size alg=%s scope=%q bytes=%d", alg, name, len(out.Status.Token))
			require.LessOrEqual(t, len(out.Status.Token), 1024, "%s, %s", alg, name)
		}
	}
}

func TestIssuer_DeleteExpired(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	short := e.issue(dcet(60, nil), alice())
	long := e.issue(dcet(3600, nil), alice())
	e.f.Step(119 * time.Second) // 59 s after the expiry
	n, err := e.issuer.DeleteExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "within the leeway")
	e.f.Step(time.Second)
	n, err = e.issuer.DeleteExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.ErrorIs(t, e.f.Get(ctx, "", short.Name, &resource.DirectClusterEndpointToken{}, store.GetOptions{}), resource.ErrNotFound)
	require.NoError(t, e.f.Get(ctx, "", long.Name, &resource.DirectClusterEndpointToken{}, store.GetOptions{}))
}

// When signing fails after the record was written, the record is taken back.
func TestIssuer_Issue_signFailureRemovesTheRecord(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	snap := e.keys.snap.Load()
	broken := *snap.signing
	broken.signer = nil
	keys := append([]*Key{&broken}, snap.keys[1:]...)
	require.NoError(t, e.keys.publishLocked(keys, broken.id))

	_, err := e.issuer.Issue(ctx, dcet(0, nil), alice(), IssueOptions{})
	require.ErrorIs(t, err, resource.ErrInternal)
	var list resource.DirectClusterEndpointTokenList
	require.NoError(t, e.f.List(ctx, &list, store.ListOptions{}))
	require.Empty(t, list.Items)
}
