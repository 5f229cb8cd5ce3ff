package token

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

func TestKey_IDIsTheSHA256OfThePKIXDER(t *testing.T) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		k, err := GenerateKey(alg)
		require.NoError(t, err)
		der, err := x509.MarshalPKIXPublicKey(k.Public())
		require.NoError(t, err)
		sum := sha256.Sum256(der)
		require.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), k.ID())
		require.Len(t, k.ID(), 43)
		require.Equal(t, alg, k.Algorithm())
		require.True(t, k.CanSign())
		require.NotContains(t, k.String(), "PRIVATE")
	}
	_, err := GenerateKey("RS256")
	require.ErrorIs(t, err, ErrKey)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, err = NewKey(rk)
	require.ErrorIs(t, err, ErrKey)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	_, err = NewKey(p384)
	require.ErrorIs(t, err, ErrKey)
	_, err = NewPublicKey(ed25519.PublicKey{1, 2, 3})
	require.ErrorIs(t, err, ErrKey)
}

func TestParsePrivateKeyPEM(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	sec1, err := x509.MarshalECPrivateKey(ecPriv)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		pem []byte
		alg Algorithm
	}{
		"PKCS #8 Ed25519": {pkcs8(edPriv), EdDSA},
		"PKCS #8 P-256":   {pkcs8(ecPriv), ES256},
		"SEC 1 P-256":     {pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), ES256},
	} {
		t.Run(name, func(t *testing.T) {
			k, err := ParsePrivateKeyPEM(tc.pem)
			require.NoError(t, err)
			require.Equal(t, tc.alg, k.Algorithm())
			ks, err := NewKeySet(KeySetOptions{}, k)
			require.NoError(t, err)
			require.Equal(t, k.ID(), ks.SigningKey().ID())
		})
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"no PEM":      []byte("hello"),
		"public key":  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}),
		"RSA PKCS #8": pkcs8(rk),
		"garbage":     pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
	} {
		_, err := ParsePrivateKeyPEM(data)
		require.ErrorIs(t, err, ErrKey, name)
	}
}

func TestKeySet_inMemory(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ks, err := NewKeySet(KeySetOptions{Algorithm: ES256, Now: clock, Retention: 2 * time.Hour}, nil)
	require.NoError(t, err)
	k1 := ks.SigningKey()
	require.Equal(t, ES256, k1.Algorithm())
	require.Equal(t, now, k1.Created())
	require.Equal(t, []Algorithm{ES256}, ks.Algorithms())

	verifyOnly, err := GenerateKey(EdDSA)
	require.NoError(t, err)
	pub, err := NewPublicKey(verifyOnly.Public())
	require.NoError(t, err)
	require.NoError(t, ks.Add(ctx, pub))
	require.ErrorIs(t, ks.Add(ctx, pub), resource.ErrAlreadyExists)
	require.Equal(t, []Algorithm{ES256, EdDSA}, ks.Algorithms(), "sorted")

	now = now.Add(time.Minute)
	k2, err := ks.Rotate(ctx)
	require.NoError(t, err)
	require.Equal(t, k2.ID(), ks.SigningKey().ID())
	old, _ := ks.Key(k1.ID())
	require.Equal(t, now, old.Retired())
	require.Len(t, ks.Keys(), 3)

	now = now.Add(2*time.Hour - time.Second)
	gone, err := ks.Prune(ctx)
	require.NoError(t, err)
	require.Empty(t, gone)
	now = now.Add(time.Second)
	gone, err = ks.Prune(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{k1.ID()}, gone)
	_, _, ok := ks.VerificationKey(k1.ID())
	require.False(t, ok)

	require.ErrorIs(t, ks.Remove(ctx, k2.ID()), resource.ErrConflict, "the signing key stays")
	require.ErrorIs(t, ks.Remove(ctx, "nope"), resource.ErrNotFound)
	require.NoError(t, ks.Remove(ctx, pub.ID()), "a verify-only key can be removed at once")
	require.Len(t, ks.Keys(), 1)
	require.NoError(t, ks.Refresh(ctx), "no-op in memory")

	_, err = NewKeySet(KeySetOptions{}, pub)
	require.ErrorIs(t, err, ErrKey, "a signing key needs its private part")
	_, err = NewKeySet(KeySetOptions{EncryptionKey: []byte("short")}, nil)
	require.ErrorIs(t, err, ErrKey)
	_, err = NewKeySet(KeySetOptions{Algorithm: "HS256"}, nil)
	require.ErrorIs(t, err, ErrKey)
}

// restartable is a memdb backend with stores opened and closed over it, as a
// process restart over durable storage would.
type restartable struct {
	t      *testing.T
	b      *memdb.Backend
	clock  *storetest.FakeClock
	scheme *resource.Scheme
}

func newRestartable(t *testing.T) *restartable {
	b := memdb.New(memdb.Options{})
	t.Cleanup(func() { _ = b.Close() })
	return &restartable{t: t, b: b, clock: storetest.NewFakeClock(storetest.FixtureStart)}
}

func (r *restartable) open() *store.Store {
	r.t.Helper()
	scheme := resource.NewScheme() // a new process: a new scheme, the kind registered by OpenKeySet
	s, err := store.New(r.b, store.Options{Scheme: scheme, Clock: r.clock})
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestKeySet_persistedAcrossRestart(t *testing.T) {
	ctx := context.Background()
	r := newRestartable(t)
	sealKey := make([]byte, 32)
	_, _ = rand.Read(sealKey)

	s1 := r.open()
	ks1, err := OpenKeySet(ctx, s1, KeySetOptions{EncryptionKey: sealKey})
	require.NoError(t, err)
	iss1, err := NewIssuer(s1, ks1, IssuerOptions{Issuer: testIssuer})
	require.NoError(t, err)
	tok1, err := iss1.Issue(ctx, dcet(0, nil), alice(), IssueOptions{})
	require.NoError(t, err)
	r.clock.Step(time.Hour)
	_, err = ks1.Rotate(ctx)
	require.NoError(t, err)
	tok2, err := iss1.Issue(ctx, dcet(0, nil), alice(), IssueOptions{})
	require.NoError(t, err)
	require.NoError(t, s1.Close())

	// The stored objects hold the private keys sealed, never in clear.
	s2 := r.open()
	ks2, err := OpenKeySet(ctx, s2, KeySetOptions{EncryptionKey: sealKey})
	require.NoError(t, err)
	var list TokenSigningKeyList
	require.NoError(t, s2.List(ctx, &list, store.ListOptions{}))
	require.Len(t, list.Items, 2)
	for _, o := range list.Items {
		require.Equal(t, KeyEncryptionA256GCM, o.Spec.PrivateKeyEncryption)
		require.True(t, strings.HasPrefix(o.Name, "tsk-"))
		k, ok := ks2.Key(o.Spec.KeyID)
		require.True(t, ok)
		der, err := x509.MarshalPKCS8PrivateKey(k.private)
		require.NoError(t, err)
		raw, _ := json.Marshal(o)
		require.NotContains(t, string(raw), base64.StdEncoding.EncodeToString(der))
		require.NotContains(t, string(raw), base64.StdEncoding.EncodeToString(der[len(der)-32:])[:40])
	}
	require.Equal(t, ks1.SigningKey().ID(), ks2.SigningKey().ID())
	require.Equal(t, ks1.JWKS(), ks2.JWKS())
	v, err := NewVerifier(ks2, VerifierOptions{Issuer: testIssuer, Now: r.clock.Now, Revocation: NewStoreRevocation(s2, nil)})
	require.NoError(t, err)
	for _, tok := range []string{tok1.Status.Token, tok2.Status.Token} {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err, "a restart keeps verifying earlier tokens")
	}

	_, err = OpenKeySet(ctx, s2, KeySetOptions{})
	require.ErrorIs(t, err, ErrKey, "no EncryptionKey")
	wrong := make([]byte, 32)
	_, err = OpenKeySet(ctx, s2, KeySetOptions{EncryptionKey: wrong})
	require.ErrorIs(t, err, ErrKey, "the wrong EncryptionKey")
}

func TestKeySet_clearPrivateKeysAndTamperedRecords(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	var list TokenSigningKeyList
	require.NoError(t, e.f.List(ctx, &list, store.ListOptions{}))
	require.Len(t, list.Items, 1)
	o := list.Items[0]
	require.Equal(t, KeyEncryptionNone, o.Spec.PrivateKeyEncryption, "documented: in clear without an EncryptionKey")
	require.True(t, o.Spec.Signing)
	require.Equal(t, string(EdDSA), o.Spec.Algorithm)

	// A record whose key ID does not match its key is refused on load.
	other, err := GenerateKey(EdDSA)
	require.NoError(t, err)
	o.Spec.KeyID = other.ID()
	require.NoError(t, e.f.Update(ctx, &o, store.UpdateOptions{}))
	_, err = OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.ErrorIs(t, err, ErrKey)
	require.ErrorIs(t, e.keys.Refresh(ctx), ErrKey)
	require.NotNil(t, e.keys.SigningKey(), "a failed refresh keeps the keys it had")

	// A private key of another key pair is refused.
	o.Spec.KeyID = e.keys.SigningKey().ID()
	pk, err := x509.MarshalPKCS8PrivateKey(other.private)
	require.NoError(t, err)
	o.Spec.PrivateKey = base64.StdEncoding.EncodeToString(pk)
	require.NoError(t, e.f.Update(ctx, &o, store.UpdateOptions{}))
	_, err = OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.ErrorContains(t, err, "does not belong")
}

func TestKeySet_twoProcessesOnOneStore(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	other, err := OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.NoError(t, err)
	require.Equal(t, e.keys.SigningKey().ID(), other.SigningKey().ID(), "the second process takes the stored key")

	_, err = e.keys.Rotate(ctx)
	require.NoError(t, err)
	_, err = other.Rotate(ctx)
	require.ErrorIs(t, err, resource.ErrConflict, "a stale set cannot rotate")
	require.NoError(t, other.Refresh(ctx))
	require.Equal(t, e.keys.SigningKey().ID(), other.SigningKey().ID())
	_, err = other.Rotate(ctx)
	require.NoError(t, err)
	require.NoError(t, e.keys.Refresh(ctx))
	require.Equal(t, e.keys.SigningKey().ID(), other.SigningKey().ID())
	require.Len(t, e.keys.Keys(), 3)
}

func TestKeySet_JWKS(t *testing.T) {
	ctx := context.Background()
	ks, err := NewKeySet(KeySetOptions{}, nil)
	require.NoError(t, err)
	es, err := GenerateKey(ES256)
	require.NoError(t, err)
	require.NoError(t, ks.Add(ctx, es))

	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(ks.JWKS(), &doc))
	require.Len(t, doc.Keys, 2)
	for _, k := range doc.Keys {
		require.NotContains(t, k, "d", "no private key material")
		require.Equal(t, "sig", k["use"])
		require.Contains(t, []any{"EdDSA", "ES256"}, k["alg"])
		require.Len(t, k["kid"], 43)
	}
	sk, err := ParseJWKS(ks.JWKS())
	require.NoError(t, err)
	require.Equal(t, 2, sk.Len())
	for _, k := range ks.Keys() {
		pub, alg, ok := sk.VerificationKey(k.ID())
		require.True(t, ok)
		require.Equal(t, k.Algorithm(), alg)
		require.Equal(t, k.Public(), pub)
	}

	priv := jose.JSONWebKey{Key: es.private, KeyID: es.ID(), Algorithm: "ES256", Use: "sig"}
	privJSON, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{priv}})
	require.NoError(t, err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	set := func(keys ...jose.JSONWebKey) []byte {
		b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		require.NoError(t, err)
		return b
	}
	good := es.jwk()
	wrongKid, wrongAlg, wrongUse := good, good, good
	wrongKid.KeyID = "../../etc/passwd"
	wrongAlg.Algorithm = "EdDSA"
	wrongUse.Use = "enc"
	many := make([]jose.JSONWebKey, MaxJWKSKeys+1)
	for i := range many {
		many[i] = good
	}
	for name, doc := range map[string][]byte{
		"private key":     privJSON,
		"RSA key":         set(jose.JSONWebKey{Key: &rk.PublicKey, KeyID: "r", Algorithm: "RS256", Use: "sig"}),
		"kid not derived": set(wrongKid),
		"alg mismatch":    set(wrongAlg),
		"use enc":         set(wrongUse),
		"duplicate":       set(good, good),
		"too many keys":   set(many...),
		"not JSON":        []byte("{"),
		"too large":       []byte(`{"keys":[],"x":"` + strings.Repeat("a", MaxJWKSBytes) + `"}`),
	} {
		_, err := ParseJWKS(doc)
		require.ErrorIs(t, err, ErrKey, name)
	}
}

func TestNewDiscovery(t *testing.T) {
	ks, err := NewKeySet(KeySetOptions{}, nil)
	require.NoError(t, err)
	es, err := GenerateKey(ES256)
	require.NoError(t, err)
	require.NoError(t, ks.Add(context.Background(), es))
	d, err := NewDiscovery(ks, DiscoveryOptions{Issuer: testIssuer})
	require.NoError(t, err)
	b, err := d.JSON()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Equal(t, map[string]any{
		"issuer":                                testIssuer,
		"jwks_uri":                              testIssuer + "/openid/v1/jwks",
		"authorization_endpoint":                "urn:kubernetes:programmatic_authorization",
		"response_types_supported":              []any{"id_token"},
		"subject_types_supported":               []any{"public"},
		"id_token_signing_alg_values_supported": []any{"ES256", "EdDSA"},
	}, m)

	d, err = NewDiscovery(ks, DiscoveryOptions{Issuer: "https://a.example.com/", JWKSURI: "https://keys.example.com/jwks"})
	require.NoError(t, err)
	require.Equal(t, "https://keys.example.com/jwks", d.JWKSURI)
	for _, bad := range []string{"", "mgmt", "http://a.example.com", "https://", "https://a.example.com?x=1", "https://a.example.com#f", "https://u:p@a.example.com", "ftp://a"} {
		_, err := NewDiscovery(ks, DiscoveryOptions{Issuer: bad})
		require.Error(t, err, bad)
	}
	_, err = NewDiscovery(ks, DiscoveryOptions{Issuer: "http://127.0.0.1:8080/kubernetes/management", AllowHTTP: true})
	require.NoError(t, err)
	_, err = NewDiscovery(ks, DiscoveryOptions{Issuer: testIssuer, JWKSURI: "http://keys.example.com"})
	require.Error(t, err)
}

func TestRegisterKinds(t *testing.T) {
	s := resource.NewScheme()
	require.NoError(t, RegisterKinds(s))
	require.NoError(t, RegisterKinds(s), "idempotent")
	k, ok := s.KindFor(KeyGroup+"/"+KeyVersion, KindTokenSigningKey)
	require.True(t, ok)
	require.False(t, k.Namespaced)
	require.Equal(t, "tokensigningkeys.token.management.service", k.GroupResource())
}

// OpenKeySet on a store whose keys do not name exactly one signer: none (every key
// retired, one staged) promotes the staged key; two (two processes that started on an
// empty store at once) takes the newer.
func TestOpenKeySet_repairsTheSigner(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	first := e.keys.SigningKey()
	e.f.Step(time.Second)
	staged, err := e.keys.Stage(ctx)
	require.NoError(t, err)
	o := &TokenSigningKey{}
	require.NoError(t, e.f.Get(ctx, "", keyObjectName(first.ID()), o, store.GetOptions{}))
	o.Spec.Signing = false
	o.Spec.RetiredAt = resource.NewTimePtr(e.f.Clock.Now())
	require.NoError(t, e.f.Update(ctx, o, store.UpdateOptions{}))

	ks, err := OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.NoError(t, err)
	require.Equal(t, staged.ID(), ks.SigningKey().ID(), "the staged key is promoted")
	require.Len(t, ks.Keys(), 2)

	// Mark the retired key signing again: two signers, the newer (the staged one) wins.
	require.NoError(t, e.f.Get(ctx, "", keyObjectName(first.ID()), o, store.GetOptions{}))
	o.Spec.Signing, o.Spec.RetiredAt = true, nil
	require.NoError(t, e.f.Update(ctx, o, store.UpdateOptions{}))
	ks, err = OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.NoError(t, err)
	require.Equal(t, staged.ID(), ks.SigningKey().ID())

	_, err = OpenKeySet(ctx, nil, KeySetOptions{})
	require.Error(t, err)
}
