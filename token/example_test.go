package token_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
	"github.com/management-service/mgmt/token"
)

const exampleIssuer = "https://mgmt.example.com/kubernetes/management"

// exampleSetup builds a store (in memory, with a clock that stands still at
// 2026-01-01), its key set and an issuer.
func exampleSetup() (*store.Store, *token.KeySet, *token.Issuer, func()) {
	ctx := context.Background()
	scheme := resource.NewScheme()
	if err := token.RegisterKinds(scheme); err != nil {
		panic(err)
	}
	b := memdb.New(memdb.Options{})
	s, err := store.New(b, store.Options{Scheme: scheme, Clock: storetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		panic(err)
	}
	keys, err := token.OpenKeySet(ctx, s, token.KeySetOptions{})
	if err != nil {
		panic(err)
	}
	iss, err := token.NewIssuer(s, keys, token.IssuerOptions{Issuer: exampleIssuer})
	if err != nil {
		panic(err)
	}
	return s, keys, iss, func() { _ = s.Close(); _ = b.Close() }
}

// The caller, authenticated by the host from its access key.
var exampleCaller = token.Caller{
	Kind: "User", Name: "alice", UID: "5a1f0c1e-0000-4000-8000-000000000001", TokenGeneration: 1,
	Scope: &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}, {Project: "ops"}}},
}

func ExampleIssuer_Issue() {
	s, _, iss, done := exampleSetup()
	defer done()
	ctx := context.Background()

	req := &resource.DirectClusterEndpointToken{Spec: resource.DirectClusterEndpointTokenSpec{
		TTL:   3600,
		Scope: &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}}},
	}}
	out, err := iss.Issue(ctx, req, exampleCaller, token.IssueOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("name:", strings.HasPrefix(out.Name, "dcet-"))
	fmt.Println("ttl:", out.Spec.TTL)
	fmt.Println("expires:", out.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
	fmt.Println("token:", len(strings.Split(out.Status.Token, ".")), "parts")

	// The stored record never holds the token.
	rec := &resource.DirectClusterEndpointToken{}
	if err := s.Get(ctx, "", out.Name, rec, store.GetOptions{}); err != nil {
		panic(err)
	}
	fmt.Printf("stored token: %q\n", rec.Status.Token)

	// A scope wider than the caller's is refused, naming what is not covered.
	req.Spec.Scope = &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "*"}}}
	_, err = iss.Issue(ctx, req, exampleCaller, token.IssueOptions{})
	fmt.Println(resource.CodeOf(err), resource.StatusOf(err).Details.Causes[0].Field)

	// A lifetime above the maximum is invalid.
	req.Spec.Scope, req.Spec.TTL = nil, 100*24*3600
	_, err = iss.Issue(ctx, req, exampleCaller, token.IssueOptions{})
	fmt.Println(err)
	// Output:
	// name: true
	// ttl: 3600
	// expires: 2026-01-01T01:00:00Z
	// token: 3 parts
	// stored token: ""
	// 403 spec.scope.projects[0]
	// DirectClusterEndpointToken.management.service "" is invalid: spec.ttl: Invalid value: 8640000: must be at most 7776000 seconds (90 days)
}

func ExampleVerifier_Verify() {
	s, keys, iss, done := exampleSetup()
	defer done()
	ctx := context.Background()
	out, err := iss.Issue(ctx, &resource.DirectClusterEndpointToken{}, exampleCaller, token.IssueOptions{})
	if err != nil {
		panic(err)
	}

	// Online: the verifier also asks the store whether the token was revoked.
	v, err := token.NewVerifier(keys, token.VerifierOptions{
		Issuer:     exampleIssuer,
		Now:        s.Clock().Now,
		Revocation: token.NewStoreRevocation(s, nil),
	})
	if err != nil {
		panic(err)
	}
	c, err := v.Verify(ctx, out.Status.Token)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Subject, c.ID == out.UID, c.Expiry.UTC().Format(time.RFC3339))
	d := c.Evaluate(policy.Request{Verb: "get", Resource: "virtualclusterinstances", APIGroup: resource.Group,
		Namespace: "p-web", Name: "dev", Project: "web", Target: resource.RequestTargetManagement})
	fmt.Println("get a virtual cluster instance of web:", d.Allowed)

	// Deleting the record revokes the token.
	if _, err := s.Delete(ctx, &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: out.Name}}, store.DeleteOptions{}); err != nil {
		panic(err)
	}
	_, err = v.Verify(ctx, out.Status.Token)
	fmt.Println(errors.Is(err, token.ErrRevoked))
	st := token.StatusFor(err).Status()
	fmt.Println(st.Code, st.Message)
	// Output:
	// User:alice true 2026-01-02T00:00:00Z
	// get a virtual cluster instance of web: true
	// true
	// 401 the token has been revoked
}

func ExampleParseJWKS() {
	s, keys, iss, done := exampleSetup()
	defer done()
	ctx := context.Background()
	out, err := iss.Issue(ctx, &resource.DirectClusterEndpointToken{}, exampleCaller, token.IssueOptions{})
	if err != nil {
		panic(err)
	}

	// A connected cluster has the JWKS document served at /openid/v1/jwks, and
	// verifies offline: no store, no call back.
	published := keys.JWKS()
	cached, err := token.ParseJWKS(published)
	if err != nil {
		panic(err)
	}
	v, err := token.NewVerifier(cached, token.VerifierOptions{Issuer: exampleIssuer, Now: s.Clock().Now})
	if err != nil {
		panic(err)
	}
	c, err := v.Verify(ctx, out.Status.Token)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Management.Name, c.Management.Kind, len(c.Scope().Projects))

	// A token in which one character changed is refused, as a signature error.
	tampered := []byte(out.Status.Token)
	tampered[len(tampered)/2] ^= 'A' ^ 'B'
	_, err = v.Verify(ctx, string(tampered))
	fmt.Println(errors.Is(err, token.ErrSignature) || errors.Is(err, token.ErrMalformed))
	// Output:
	// alice User 2
	// true
}

func ExampleKeySet_Rotate() {
	ctx := context.Background()
	keys, err := token.NewKeySet(token.KeySetOptions{}, nil) // in memory, a new EdDSA key
	if err != nil {
		panic(err)
	}
	first := keys.SigningKey()

	// Publish the next key ahead of its use, then switch to it.
	next, err := keys.Stage(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("signing with the first key:", keys.SigningKey().ID() == first.ID())
	if _, err := keys.Rotate(ctx); err != nil {
		panic(err)
	}
	fmt.Println("signing with the staged key:", keys.SigningKey().ID() == next.ID())
	old, _ := keys.Key(first.ID())
	fmt.Println("first key retired:", !old.Retired().IsZero())
	jwks, err := token.ParseJWKS(keys.JWKS())
	if err != nil {
		panic(err)
	}
	fmt.Println("published keys:", jwks.Len())
	// Output:
	// signing with the first key: true
	// signing with the staged key: true
	// first key retired: true
	// published keys: 2
}

func ExampleNewDiscovery() {
	keys, err := token.NewKeySet(token.KeySetOptions{Algorithm: token.ES256}, nil)
	if err != nil {
		panic(err)
	}
	d, err := token.NewDiscovery(keys, token.DiscoveryOptions{Issuer: exampleIssuer})
	if err != nil {
		panic(err)
	}
	b, err := d.JSON()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output:
	// {"issuer":"https://mgmt.example.com/kubernetes/management","jwks_uri":"https://mgmt.example.com/kubernetes/management/openid/v1/jwks","authorization_endpoint":"urn:kubernetes:programmatic_authorization","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}
}
