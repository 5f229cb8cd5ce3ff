package token

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

const testIssuer = "https://mgmt.example.com/kubernetes/management"

// env is an issuer, its key set and verifiers over a fixture store with a fake clock.
type env struct {
	t       testing.TB
	f       *storetest.Fixture
	keys    *KeySet
	issuer  *Issuer
	offline *Verifier
	online  *Verifier
}

type envOptions struct {
	store  *store.Options
	keys   KeySetOptions
	issuer IssuerOptions
	verify VerifierOptions
}

func newEnv(t testing.TB, o *envOptions) *env {
	t.Helper()
	if o == nil {
		o = &envOptions{}
	}
	so := o.store
	if so == nil {
		scheme := resource.NewScheme()
		require.NoError(t, RegisterKinds(scheme))
		so = &store.Options{Scheme: scheme}
	}
	f := storetest.NewFixture(t, so)
	ctx := context.Background()
	keys, err := OpenKeySet(ctx, f.Store, o.keys)
	require.NoError(t, err)
	io := o.issuer
	if io.Issuer == "" {
		io.Issuer = testIssuer
	}
	iss, err := NewIssuer(f.Store, keys, io)
	require.NoError(t, err)
	vo := o.verify
	if vo.Issuer == "" {
		vo.Issuer = testIssuer
	}
	if vo.Now == nil {
		vo.Now = f.Clock.Now
	}
	off, err := NewVerifier(keys, vo)
	require.NoError(t, err)
	vo.Revocation = NewStoreRevocation(f.Store, nil)
	on, err := NewVerifier(keys, vo)
	require.NoError(t, err)
	return &env{t: t, f: f, keys: keys, issuer: iss, offline: off, online: on}
}

func newEnvWithStoreOptions(t testing.TB, so *store.Options) *env {
	t.Helper()
	return newEnv(t, &envOptions{store: so})
}

// alice is a caller with a project-wide scope.
func alice() Caller {
	return Caller{Kind: "User", Name: "alice", UID: "6f1d2c4e-8a2b-4c3d-9e0f-1a2b3c4d5e6f", TokenGeneration: 1,
		Scope: &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}, {Project: "ops"}}}}
}

func dcet(ttl int64, scope *resource.AccessKeyScope) *resource.DirectClusterEndpointToken {
	return &resource.DirectClusterEndpointToken{Spec: resource.DirectClusterEndpointTokenSpec{TTL: ttl, Scope: scope}}
}

func (e *env) issue(req *resource.DirectClusterEndpointToken, c Caller) *resource.DirectClusterEndpointToken {
	e.t.Helper()
	out, err := e.issuer.Issue(context.Background(), req, c, IssueOptions{})
	require.NoError(e.t, err)
	require.NotEmpty(e.t, out.Status.Token)
	return out
}

// token issues a default token for alice.
func (e *env) token() string {
	e.t.Helper()
	return e.issue(dcet(0, nil), alice()).Status.Token
}

// signRaw signs arbitrary header parameters and payload with the key k, through
// go-jose, the way a holder of our private key could. It returns the compact JWS.
func signRaw(t testing.TB, k *Key, extra map[string]any, payload []byte) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for name, v := range extra {
		opts.WithHeader(jose.HeaderKey(name), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.alg),
		Key: jose.JSONWebKey{Key: k.private, KeyID: k.id}}, opts)
	require.NoError(t, err)
	jws, err := s.Sign(payload)
	require.NoError(t, err)
	out, err := jws.CompactSerialize()
	require.NoError(t, err)
	return out
}

// handToken assembles header.payload.signature from raw JSON parts, each base64url
// encoded; sig is used as it is.
func handToken(header, payload string, sig string) string {
	return b64(header) + "." + b64(payload) + "." + sig
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// claimsJSON is a valid payload for env e at time now, with fields overridden (a nil
// value removes the field).
func (e *env) claimsJSON(now time.Time, override map[string]any) []byte {
	m := map[string]any{
		"iss": testIssuer, "sub": "User:alice",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": "0b8e7c1a-1111-4222-8333-944455556666",
		ClaimName: map[string]any{"uid": "u1", "name": "alice", "kind": "User", "gen": 1, "rec": "dcet-x",
			"scope": map[string]any{"projects": []string{"web"}}},
	}
	for k, v := range override {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(e.t, err)
	return b
}

// decodePart returns the decoded JSON of part i (0 header, 1 payload) of a token.
func decodePart(t testing.TB, tok string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[i])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// tenEntryScopes are ten-entry scopes of each shape, with realistic names.
func tenEntryScopes() map[string]*resource.AccessKeyScope {
	out := map[string]*resource.AccessKeyScope{}
	p, s, v, mixed := &resource.AccessKeyScope{}, &resource.AccessKeyScope{}, &resource.AccessKeyScope{}, &resource.AccessKeyScope{}
	for i := 0; i < 10; i++ {
		proj := fmt.Sprintf("team-%02d", i)
		p.Projects = append(p.Projects, resource.AccessKeyScopeProject{Project: proj})
		s.Spaces = append(s.Spaces, resource.AccessKeyScopeSpace{Project: proj, Space: fmt.Sprintf("space-%02d", i)})
		v.VirtualClusters = append(v.VirtualClusters, resource.AccessKeyScopeVirtualCluster{Project: proj, VirtualCluster: fmt.Sprintf("vcluster-%02d", i)})
	}
	mixed.AllowServiceCli = true
	mixed.Projects = p.Projects[:3]
	mixed.Spaces = s.Spaces[3:6]
	mixed.VirtualClusters = v.VirtualClusters[6:10]
	out["ten projects"], out["ten spaces"], out["ten virtual clusters"], out["mixed, with allowServiceCli"] = p, s, v, mixed
	return out
}
