package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithm is a JWS signature algorithm this package signs and verifies with.
type Algorithm string

// The algorithms of this package.
const (
	// EdDSA is Ed25519 (RFC 8037), the default.
	EdDSA Algorithm = "EdDSA"
	// ES256 is ECDSA on P-256 with SHA-256.
	ES256 Algorithm = "ES256"
)

// ErrKey is the class of the errors about keys: an unsupported key type or curve, a
// key that does not match its stored key ID, a private key that cannot be decrypted.
var ErrKey = errors.New("token: bad key")

func (a Algorithm) valid() bool { return a == EdDSA || a == ES256 }

// Key is one key of a [KeySet]: a public key with its key ID and algorithm, and the
// private key when this process may sign with it. A Key is immutable; a KeySet
// replaces it with a copy when it retires it.
type Key struct {
	id      string
	alg     Algorithm
	public  crypto.PublicKey
	private crypto.Signer
	created time.Time
	retired time.Time
	signer  jose.Signer
}

// ID returns the key ID: the base64url (unpadded) SHA-256 of the public key's PKIX DER
// encoding, as Kubernetes derives service-account key IDs. It is derived one way from
// the key, so a kid can never be used as a key or a path.
func (k *Key) ID() string { return k.id }

// Algorithm returns the key's algorithm.
func (k *Key) Algorithm() Algorithm { return k.alg }

// Public returns the public key: an ed25519.PublicKey or a *ecdsa.PublicKey.
func (k *Key) Public() crypto.PublicKey { return k.public }

// CanSign reports whether the key holds its private part.
func (k *Key) CanSign() bool { return k.private != nil }

// Created returns when the key was added to its key set (zero for a key not in one).
func (k *Key) Created() time.Time { return k.created }

// Retired returns when the key stopped signing; zero while it signs or has never
// signed.
func (k *Key) Retired() time.Time { return k.retired }

// String returns "<alg> key <kid>"; it never shows key material.
func (k *Key) String() string { return string(k.alg) + " key " + k.id }

// GenerateKey returns a new key pair for alg (EdDSA or ES256) from crypto/rand.
func GenerateKey(alg Algorithm) (*Key, error) {
	switch alg {
	case EdDSA:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("token: generate Ed25519 key: %w", err)
		}
		return NewKey(priv)
	case ES256:
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("token: generate P-256 key: %w", err)
		}
		return NewKey(priv)
	default:
		return nil, fmt.Errorf("%w: algorithm %q is not supported (use %s or %s)", ErrKey, alg, EdDSA, ES256)
	}
}

// NewKey returns the key of an existing private key: an ed25519.PrivateKey (EdDSA) or
// a *ecdsa.PrivateKey on P-256 (ES256).
func NewKey(private crypto.Signer) (*Key, error) {
	if private == nil {
		return nil, fmt.Errorf("%w: private key is nil", ErrKey)
	}
	switch p := private.(type) {
	case ed25519.PrivateKey:
		if len(p) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("%w: Ed25519 private key has %d bytes", ErrKey, len(p))
		}
	case *ecdsa.PrivateKey:
	default:
		return nil, fmt.Errorf("%w: private key type %T is not supported (use Ed25519 or ECDSA P-256)", ErrKey, private)
	}
	k, err := NewPublicKey(private.Public())
	if err != nil {
		return nil, err
	}
	k.private = private
	k.signer, err = jose.NewSigner(
		jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.alg), Key: jose.JSONWebKey{Key: private, KeyID: k.id}},
		(&jose.SignerOptions{}).WithType(TokenType))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return k, nil
}

// NewPublicKey returns a verify-only key: an ed25519.PublicKey (EdDSA) or a
// *ecdsa.PublicKey on P-256 (ES256).
func NewPublicKey(public crypto.PublicKey) (*Key, error) {
	var alg Algorithm
	switch p := public.(type) {
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: Ed25519 public key has %d bytes", ErrKey, len(p))
		}
		alg = EdDSA
	case *ecdsa.PublicKey:
		if p == nil || p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: only the P-256 curve is supported for ECDSA", ErrKey)
		}
		alg = ES256
	default:
		return nil, fmt.Errorf("%w: public key type %T is not supported (use Ed25519 or ECDSA P-256)", ErrKey, public)
	}
	id, err := KeyID(public)
	if err != nil {
		return nil, err
	}
	return &Key{id: id, alg: alg, public: public}, nil
}

// ParsePrivateKeyPEM loads a private key from PEM: a PKCS #8 "PRIVATE KEY" block
// (Ed25519 or ECDSA P-256) or a SEC 1 "EC PRIVATE KEY" block.
func ParsePrivateKeyPEM(data []byte) (*Key, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block found", ErrKey)
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: PKCS #8 key of type %T cannot sign", ErrKey, k)
		}
		return NewKey(s)
	case "EC PRIVATE KEY":
		k, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		return NewKey(k)
	default:
		return nil, fmt.Errorf("%w: PEM block type %q is not a private key", ErrKey, block.Type)
	}
}

// KeyID returns the key ID of a public key: base64url(SHA-256(PKIX DER)), unpadded.
func KeyID(public crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(public)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// jwk returns the key's public JWK with kid, alg and use "sig".
func (k *Key) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.public, KeyID: k.id, Algorithm: string(k.alg), Use: "sig"}
}

// withTimes returns a copy of k with the given times.
func (k *Key) withTimes(created, retired time.Time) *Key {
	c := *k
	c.created, c.retired = created, retired
	return &c
}

// sign returns the compact JWS of payload, signed with k.
func (k *Key) sign(payload []byte) (string, error) {
	if k.signer == nil {
		return "", fmt.Errorf("%w: %s has no private key", ErrKey, k)
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("token: sign with %s: %w", k, err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("token: serialize: %w", err)
	}
	return s, nil
}
