package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Paths at which a server publishes the documents of this file, under its base path
// (Kubernetes serves the same two for service-account tokens).
const (
	// JWKSPath is the path of the JWKS document ([KeySet.JWKS]).
	JWKSPath = "/openid/v1/jwks"
	// DiscoveryPath is the path of the discovery document ([NewDiscovery]).
	DiscoveryPath = "/.well-known/openid-configuration"
)

// Limits of [ParseJWKS].
const (
	// MaxJWKSBytes is the largest JWKS document ParseJWKS reads.
	MaxJWKSBytes = 1 << 20
	// MaxJWKSKeys is the most keys ParseJWKS accepts.
	MaxJWKSKeys = 100
)

// StaticKeys is a fixed set of public keys, read from a JWKS document: what a
// connected cluster verifies with, offline. It implements [KeySource]. Build it with
// [ParseJWKS]; to follow a rotation, parse the document again and swap it in.
type StaticKeys struct {
	byID map[string]staticKey
}

type staticKey struct {
	key crypto.PublicKey
	alg Algorithm
}

// ParseJWKS reads a JWKS document as [KeySet.JWKS] writes it. Each key must be an
// Ed25519 (EdDSA) or P-256 (ES256) public key, with "use" absent or "sig", an "alg"
// absent or matching the key type, and a "kid" equal to the key ID derived from the
// key ([KeyID]); a key with private parameters, another type, or a kid that does not
// match is an error, and so is a document larger than [MaxJWKSBytes] or with more than
// [MaxJWKSKeys] keys.
func ParseJWKS(data []byte) (*StaticKeys, error) {
	if len(data) > MaxJWKSBytes {
		return nil, fmt.Errorf("%w: JWKS document of %d bytes is larger than %d", ErrKey, len(data), MaxJWKSBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%w: JWKS: %w", ErrKey, err)
	}
	if len(set.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("%w: JWKS has %d keys, more than %d", ErrKey, len(set.Keys), MaxJWKSKeys)
	}
	sk := &StaticKeys{byID: make(map[string]staticKey, len(set.Keys))}
	for i, j := range set.Keys {
		if !j.Valid() || !j.IsPublic() {
			return nil, fmt.Errorf("%w: JWKS key %d is not a valid public key", ErrKey, i)
		}
		if j.Use != "" && j.Use != "sig" {
			return nil, fmt.Errorf("%w: JWKS key %d has use %q, not \"sig\"", ErrKey, i, j.Use)
		}
		var pub crypto.PublicKey
		switch p := j.Key.(type) {
		case ed25519.PublicKey:
			pub = p
		case *ecdsa.PublicKey:
			pub = p
		default:
			return nil, fmt.Errorf("%w: JWKS key %d has type %T (Ed25519 or P-256 only)", ErrKey, i, j.Key)
		}
		k, err := NewPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("JWKS key %d: %w", i, err)
		}
		if j.Algorithm != "" && Algorithm(j.Algorithm) != k.alg {
			return nil, fmt.Errorf("%w: JWKS key %d says alg %q but is an %s key", ErrKey, i, j.Algorithm, k.alg)
		}
		if j.KeyID != k.id {
			return nil, fmt.Errorf("%w: JWKS key %d has kid %q, the key's ID is %q", ErrKey, i, j.KeyID, k.id)
		}
		if _, dup := sk.byID[k.id]; dup {
			return nil, fmt.Errorf("%w: JWKS key %s appears twice", ErrKey, k.id)
		}
		sk.byID[k.id] = staticKey{key: pub, alg: k.alg}
	}
	return sk, nil
}

// VerificationKey implements [KeySource].
func (s *StaticKeys) VerificationKey(kid string) (crypto.PublicKey, Algorithm, bool) {
	k, ok := s.byID[kid]
	return k.key, k.alg, ok
}

// Len returns the number of keys.
func (s *StaticKeys) Len() int { return len(s.byID) }

// Discovery is the OpenID-style discovery document served at
// /.well-known/openid-configuration, in the shape Kubernetes serves for its
// service-account issuer: it names the issuer and where its keys are, so that a
// connected cluster can find and cache the JWKS.
type Discovery struct {
	// Issuer is the "iss" of the tokens.
	Issuer string `json:"issuer"`
	// JWKSURI is the absolute URL of the JWKS document.
	JWKSURI string `json:"jwks_uri"`
	// AuthorizationEndpoint is required by OpenID discovery; tokens are not issued by
	// an OAuth flow, so it is the URN Kubernetes uses for the same case.
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	// ResponseTypesSupported is ["id_token"].
	ResponseTypesSupported []string `json:"response_types_supported"`
	// SubjectTypesSupported is ["public"].
	SubjectTypesSupported []string `json:"subject_types_supported"`
	// IDTokenSigningAlgValuesSupported lists the algorithms of the published keys.
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
}

// DiscoveryOptions configure [NewDiscovery].
type DiscoveryOptions struct {
	// Issuer is the issuer URL, as in [IssuerOptions.Issuer]: https, with a host, no
	// query and no fragment. Required.
	Issuer string
	// JWKSURI is the URL of the JWKS; "" means Issuer + JWKSPath.
	JWKSURI string
	// AllowHTTP accepts an http issuer (for a server run with plain HTTP in
	// development); verifiers fetching keys over plain HTTP can be fooled.
	AllowHTTP bool
}

// NewDiscovery returns the discovery document for a key set.
func NewDiscovery(keys *KeySet, opts DiscoveryOptions) (*Discovery, error) {
	if err := checkIssuerURL(opts.Issuer, opts.AllowHTTP); err != nil {
		return nil, err
	}
	jwksURI := opts.JWKSURI
	if jwksURI == "" {
		jwksURI = strings.TrimSuffix(opts.Issuer, "/") + JWKSPath
	} else if err := checkIssuerURL(jwksURI, opts.AllowHTTP); err != nil {
		return nil, fmt.Errorf("token: jwks_uri: %w", err)
	}
	d := &Discovery{
		Issuer:                 opts.Issuer,
		JWKSURI:                jwksURI,
		AuthorizationEndpoint:  "urn:kubernetes:programmatic_authorization",
		ResponseTypesSupported: []string{"id_token"},
		SubjectTypesSupported:  []string{"public"},
	}
	for _, a := range keys.Algorithms() {
		d.IDTokenSigningAlgValuesSupported = append(d.IDTokenSigningAlgValuesSupported, string(a))
	}
	slices.Sort(d.IDTokenSigningAlgValuesSupported)
	return d, nil
}

// JSON returns the document's JSON.
func (d *Discovery) JSON() ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("token: render discovery document: %w", err)
	}
	return b, nil
}

func checkIssuerURL(s string, allowHTTP bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("token: issuer %q is not a URL: %w", s, err)
	}
	switch {
	case u.Scheme != "https" && !(allowHTTP && u.Scheme == "http"):
		return fmt.Errorf("token: issuer %q must be an https URL", s)
	case u.Host == "":
		return fmt.Errorf("token: issuer %q has no host", s)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Errorf("token: issuer %q must have no query and no fragment", s)
	case u.User != nil:
		return fmt.Errorf("token: issuer %q must have no user information", s)
	}
	return nil
}
