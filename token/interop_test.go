package token_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
	"github.com/management-service/mgmt/token"
)

// clusterVerifier is what a connected cluster runs: it knows the issuer URL, fetches
// the discovery document and the JWKS it points to once, and verifies tokens offline
// with go-jose alone. It uses nothing of package token.
type clusterVerifier struct {
	issuer string
	keys   jose.JSONWebKeySet
}

func newClusterVerifier(ctx context.Context, client *http.Client, issuer string) (*clusterVerifier, error) {
	get := func(url string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	raw, err := get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		return nil, err
	}
	var disc struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.Unmarshal(raw, &disc); err != nil {
		return nil, err
	}
	if disc.Issuer != issuer {
		return nil, fmt.Errorf("discovery names issuer %q, expected %q", disc.Issuer, issuer)
	}
	raw, err = get(disc.JWKSURI)
	if err != nil {
		return nil, err
	}
	cv := &clusterVerifier{issuer: issuer}
	if err := json.Unmarshal(raw, &cv.keys); err != nil {
		return nil, err
	}
	return cv, nil
}

type clusterClaims struct {
	jwt.Claims
	Management struct {
		Name  string          `json:"name"`
		Kind  string          `json:"kind"`
		Gen   int64           `json:"gen"`
		Rec   string          `json:"rec"`
		Scope json.RawMessage `json:"scope"`
	} `json:"management.service"`
}

func (cv *clusterVerifier) verify(tok string, now time.Time) (*clusterClaims, error) {
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256})
	if err != nil {
		return nil, err
	}
	if len(parsed.Headers) != 1 {
		return nil, errors.New("one signature expected")
	}
	h := parsed.Headers[0]
	if h.JSONWebKey != nil || len(h.ExtraHeaders) != 1 {
		return nil, errors.New("unexpected header parameters")
	}
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dcet+jwt" {
		return nil, fmt.Errorf("typ %q", typ)
	}
	keys := cv.keys.Key(h.KeyID)
	if len(keys) != 1 || keys[0].Algorithm != h.Algorithm || !keys[0].IsPublic() {
		return nil, fmt.Errorf("no key %q for %s", h.KeyID, h.Algorithm)
	}
	var c clusterClaims
	if err := parsed.Claims(keys[0].Key, &c); err != nil {
		return nil, err
	}
	if c.Expiry == nil || c.IssuedAt == nil {
		return nil, errors.New("exp and iat are required")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: cv.issuer, Time: now}, time.Minute); err != nil {
		return nil, err
	}
	return &c, nil
}

// A connected cluster verifies our tokens from the published documents alone, with
// go-jose and no code of this package, across a rotation to another algorithm.
func TestJWKSOnlyVerifier(t *testing.T) {
	ctx := context.Background()
	scheme := resource.NewScheme()
	require.NoError(t, token.RegisterKinds(scheme))
	f := storetest.NewFixture(t, &store.Options{Scheme: scheme})
	keys, err := token.OpenKeySet(ctx, f.Store, token.KeySetOptions{})
	require.NoError(t, err)

	var issuerURL string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kubernetes/management"+token.DiscoveryPath, func(w http.ResponseWriter, _ *http.Request) {
		d, err := token.NewDiscovery(keys, token.DiscoveryOptions{Issuer: issuerURL})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b, _ := d.JSON()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /kubernetes/management"+token.JWKSPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(keys.JWKS())
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	issuerURL = srv.URL + "/kubernetes/management"

	iss, err := token.NewIssuer(f.Store, keys, token.IssuerOptions{Issuer: issuerURL})
	require.NoError(t, err)
	ours, err := token.NewVerifier(keys, token.VerifierOptions{Issuer: issuerURL, Now: f.Clock.Now})
	require.NoError(t, err)
	caller := token.Caller{Kind: "User", Name: "alice", UID: "u-1", TokenGeneration: 2, Scope: &resource.AccessKeyScope{
		Projects:        []resource.AccessKeyScopeProject{{Project: "web"}},
		VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "ops", VirtualCluster: "dev"}},
	}}
	issue := func() string {
		out, err := iss.Issue(ctx, &resource.DirectClusterEndpointToken{}, caller, token.IssueOptions{})
		require.NoError(t, err)
		return out.Status.Token
	}
	edTok := issue()

	// Rotate to an ES256 key, published first.
	es, err := token.GenerateKey(token.ES256)
	require.NoError(t, err)
	require.NoError(t, keys.Add(ctx, es))
	_, err = keys.Rotate(ctx)
	require.NoError(t, err)
	require.Equal(t, token.ES256, keys.SigningKey().Algorithm())
	esTok := issue()

	cluster, err := newClusterVerifier(ctx, srv.Client(), issuerURL)
	require.NoError(t, err)
	require.Len(t, cluster.keys.Keys, 2)
	now := f.Clock.Now()
	for _, tok := range []string{edTok, esTok} {
		got, err := cluster.verify(tok, now)
		require.NoError(t, err)
		want, err := ours.Verify(ctx, tok)
		require.NoError(t, err)
		require.Equal(t, want.Issuer, got.Issuer)
		require.Equal(t, want.Subject, got.Subject)
		require.Equal(t, want.ID, got.ID)
		require.Equal(t, want.Expiry.Unix(), got.Expiry.Time().Unix())
		require.Equal(t, want.IssuedAt.Unix(), got.IssuedAt.Time().Unix())
		require.Equal(t, want.NotBefore.Unix(), got.NotBefore.Time().Unix())
		require.Equal(t, "alice", got.Management.Name)
		require.EqualValues(t, 2, got.Management.Gen)
		require.JSONEq(t, `{"projects":["web"],"virtualClusters":["ops/dev"]}`, string(got.Management.Scope))
	}

	// go-jose alone accepts another encoding of the same token (a '\n' in the payload,
	// which Go's base64 decoder skips); our verifier refuses it, so that an accepted
	// token is the string that was signed.
	parts := strings.Split(edTok, ".")
	malleated := parts[0] + "." + parts[1][:10] + "\n" + parts[1][10:] + "." + parts[2]
	_, err = cluster.verify(malleated, now)
	require.NoError(t, err, "if go-jose starts refusing this, the note in doc.go can go")
	_, err = ours.Verify(ctx, malleated)
	require.ErrorIs(t, err, token.ErrMalformed)

	// What the cluster refuses: a tampered token, a foreign key, an expired token.
	parts = strings.Split(esTok, ".")
	_, err = cluster.verify(parts[0]+"."+parts[1]+"."+strings.Repeat("A", len(parts[2])), now)
	require.Error(t, err)
	other := storetest.NewFixture(t, &store.Options{Scheme: scheme})
	otherKeys, err := token.OpenKeySet(ctx, other.Store, token.KeySetOptions{})
	require.NoError(t, err)
	otherIss, err := token.NewIssuer(other.Store, otherKeys, token.IssuerOptions{Issuer: issuerURL})
	require.NoError(t, err)
	forged, err := otherIss.Issue(ctx, &resource.DirectClusterEndpointToken{}, caller, token.IssueOptions{})
	require.NoError(t, err)
	_, err = cluster.verify(forged.Status.Token, now)
	require.ErrorContains(t, err, "no key")
	_, err = cluster.verify(edTok, now.Add(25*time.Hour))
	require.ErrorIs(t, err, jwt.ErrExpired)
}
