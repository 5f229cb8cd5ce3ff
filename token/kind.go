package token

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"

	"github.com/management-service/mgmt/resource"
)

// The host kind in which a [KeySet] persists its keys.
const (
	// KeyGroup is the API group of [TokenSigningKey]. It is not the management API's
	// group: the kind belongs to this package, not to the spec.
	KeyGroup = "token.management.service"
	// KeyVersion is the API version of [TokenSigningKey].
	KeyVersion = "v1"
	// KindTokenSigningKey is the kind name of [TokenSigningKey].
	KindTokenSigningKey = "TokenSigningKey"
	// KeyResource is the resource name of [TokenSigningKey].
	KeyResource = "tokensigningkeys"
)

// Encryption values of [TokenSigningKeySpec.PrivateKeyEncryption].
const (
	// KeyEncryptionNone means PrivateKey is the base64 PKCS #8 DER of the key, in clear.
	KeyEncryptionNone = ""
	// KeyEncryptionA256GCM means PrivateKey is base64(nonce || AES-256-GCM ciphertext) of
	// the PKCS #8 DER, sealed with [KeySetOptions.EncryptionKey] and the key ID as
	// additional data (so a sealed key cannot be moved to another record).
	KeyEncryptionA256GCM = "A256GCM"
)

// TokenSigningKey is one key of a persisted [KeySet], stored as a cluster-scoped object
// of the host kind token.management.service/v1 TokenSigningKey, named "tsk-" followed
// by the hex SHA-256 of the public key's PKIX DER (so the same key is never stored
// twice).
//
// It holds a private key. It is meant for the store only: a server must not serve this
// kind over its API (or only to administrators), since a get or list would show the
// private key, in clear unless [KeySetOptions.EncryptionKey] is set. The public halves
// are published through [KeySet.JWKS].
type TokenSigningKey struct {
	// TypeMeta is the kind and apiVersion: token.management.service/v1 TokenSigningKey.
	resource.TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata; creationTimestamp is when the key was added.
	resource.ObjectMeta `json:"metadata"`
	// Spec is the key.
	Spec TokenSigningKeySpec `json:"spec"`
}

// TokenSigningKeySpec is a stored key.
type TokenSigningKeySpec struct {
	// KeyID is the key ID (see [KeyID]); it is checked against PublicKey on load.
	KeyID string `json:"keyID"`
	// Algorithm is "EdDSA" or "ES256".
	Algorithm string `json:"algorithm"`
	// PublicKey is the base64 (standard, padded) PKIX DER of the public key.
	PublicKey string `json:"publicKey"`
	// PrivateKey is the private key as PrivateKeyEncryption says; empty for a
	// verify-only key.
	PrivateKey string `json:"privateKey,omitempty"`
	// PrivateKeyEncryption is "" (clear) or "A256GCM".
	PrivateKeyEncryption string `json:"privateKeyEncryption,omitempty"`
	// Signing marks the key new tokens are signed with; at most one key has it.
	Signing bool `json:"signing,omitempty"`
	// RetiredAt is when the key stopped signing; a retired key verifies until
	// [KeySet.Prune] removes it after the retention period.
	RetiredAt *resource.Time `json:"retiredAt,omitempty"`
}

// TokenSigningKeyList is a list of [TokenSigningKey].
type TokenSigningKeyList = resource.List[TokenSigningKey, *TokenSigningKey]

// KeyKindInfo returns the KindInfo of [TokenSigningKey]: cluster-scoped, without a
// status subresource.
func KeyKindInfo() resource.KindInfo {
	return resource.KindInfo{
		Group: KeyGroup, Version: KeyVersion, Kind: KindTokenSigningKey, ListKind: KindTokenSigningKey + "List",
		Resource: KeyResource,
		New:      func() resource.Object { return &TokenSigningKey{} },
		NewList:  func() resource.ObjectList { return &TokenSigningKeyList{} },
	}
}

// RegisterKinds registers the package's internal kinds in a scheme: [TokenSigningKey],
// [AccessKeySecret] and [AccessKeyBinding]; a kind registered already is left alone.
// Register them before building the store (store.Options.Scheme), so that the store's
// index knows them from the start; [OpenKeySet] registers TokenSigningKey itself when
// it is missing. None of them may be served over the API: a server serves only the
// kinds it lists.
func RegisterKinds(s *resource.Scheme) error {
	for _, k := range []resource.KindInfo{KeyKindInfo(), AccessKeySecretKindInfo(), AccessKeyBindingKindInfo()} {
		if err := registerKind(s, k); err != nil {
			return err
		}
	}
	return nil
}

// registerKind registers k unless it is registered already with the same Go type.
func registerKind(s *resource.Scheme, k resource.KindInfo) error {
	if have, ok := s.KindFor(k.Group+"/"+k.Version, k.Kind); ok {
		if reflect.TypeOf(have.New()) == reflect.TypeOf(k.New()) {
			return nil
		}
		return fmt.Errorf("token: kind %s/%s %s is registered with another Go type", k.Group, k.Version, k.Kind)
	}
	if err := s.Register(k); err != nil {
		return fmt.Errorf("token: register %s: %w", k.Kind, err)
	}
	return nil
}

// AccessKeySecretKindInfo returns the KindInfo of [AccessKeySecret]: cluster-scoped,
// without a status subresource.
func AccessKeySecretKindInfo() resource.KindInfo {
	return resource.KindInfo{
		Group: KeyGroup, Version: KeyVersion, Kind: KindAccessKeySecret, ListKind: KindAccessKeySecret + "List",
		Resource: AccessKeySecretResource,
		New:      func() resource.Object { return &AccessKeySecret{} },
		NewList:  func() resource.ObjectList { return &AccessKeySecretList{} },
	}
}

// AccessKeyBindingKindInfo returns the KindInfo of [AccessKeyBinding]: cluster-scoped,
// without a status subresource.
func AccessKeyBindingKindInfo() resource.KindInfo {
	return resource.KindInfo{
		Group: KeyGroup, Version: KeyVersion, Kind: KindAccessKeyBinding, ListKind: KindAccessKeyBinding + "List",
		Resource: AccessKeyBindingResource,
		New:      func() resource.Object { return &AccessKeyBinding{} },
		NewList:  func() resource.ObjectList { return &AccessKeyBindingList{} },
	}
}

// keyObjectName is the name of the object that stores the key with this ID.
func keyObjectName(kid string) string {
	raw, err := base64.RawURLEncoding.DecodeString(kid)
	if err != nil || len(raw) != sha256.Size {
		sum := sha256.Sum256([]byte(kid))
		raw = sum[:]
	}
	return "tsk-" + hex.EncodeToString(raw)
}

// toObject returns the stored form of k.
func toObject(k *Key, signing bool, sealKey []byte) (*TokenSigningKey, error) {
	der, err := x509.MarshalPKIXPublicKey(k.public)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	o := &TokenSigningKey{
		ObjectMeta: resource.ObjectMeta{Name: keyObjectName(k.id)},
		Spec: TokenSigningKeySpec{KeyID: k.id, Algorithm: string(k.alg),
			PublicKey: base64.StdEncoding.EncodeToString(der), Signing: signing},
	}
	if !k.retired.IsZero() {
		o.Spec.RetiredAt = resource.NewTimePtr(k.retired)
	}
	if k.private != nil {
		pk, err := x509.MarshalPKCS8PrivateKey(k.private)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		if sealKey != nil {
			pk, err = seal(sealKey, k.id, pk)
			if err != nil {
				return nil, err
			}
			o.Spec.PrivateKeyEncryption = KeyEncryptionA256GCM
		}
		o.Spec.PrivateKey = base64.StdEncoding.EncodeToString(pk)
	}
	return o, nil
}

// fromObject reads a stored key and checks it: the key ID must be the public key's,
// and the private key must belong to the public key.
func fromObject(o *TokenSigningKey, sealKey []byte) (*Key, error) {
	der, err := base64.StdEncoding.DecodeString(o.Spec.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: public key: %w", ErrKey, o.Name, err)
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: public key: %w", ErrKey, o.Name, err)
	}
	k, err := NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	if k.id != o.Spec.KeyID || string(k.alg) != o.Spec.Algorithm {
		return nil, fmt.Errorf("%w: %s: stored key ID %q / algorithm %q do not match the public key (%s)",
			ErrKey, o.Name, o.Spec.KeyID, o.Spec.Algorithm, k)
	}
	if o.Spec.PrivateKey != "" {
		raw, err := base64.StdEncoding.DecodeString(o.Spec.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: private key: %w", ErrKey, o.Name, err)
		}
		switch o.Spec.PrivateKeyEncryption {
		case KeyEncryptionNone:
		case KeyEncryptionA256GCM:
			if sealKey == nil {
				return nil, fmt.Errorf("%w: %s: the private key is encrypted and no EncryptionKey is configured", ErrKey, o.Name)
			}
			if raw, err = unseal(sealKey, k.id, raw); err != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, err)
			}
		default:
			return nil, fmt.Errorf("%w: %s: unknown private key encryption %q", ErrKey, o.Name, o.Spec.PrivateKeyEncryption)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: private key: %w", ErrKey, o.Name, err)
		}
		signer, ok := parsed.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: %s: private key of type %T cannot sign", ErrKey, o.Name, parsed)
		}
		pk, err := NewKey(signer)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
		if pk.id != k.id {
			return nil, fmt.Errorf("%w: %s: the private key does not belong to the public key", ErrKey, o.Name)
		}
		k = pk
	}
	var retired resource.Time
	if o.Spec.RetiredAt != nil {
		retired = *o.Spec.RetiredAt
	}
	return k.withTimes(o.CreationTimestamp.Time, retired.Time), nil
}

func newGCM(sealKey []byte) (cipher.AEAD, error) {
	if len(sealKey) != 32 {
		return nil, fmt.Errorf("%w: EncryptionKey must have 32 bytes (AES-256), it has %d", ErrKey, len(sealKey))
	}
	b, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return g, nil
}

func seal(sealKey []byte, kid string, plain []byte) ([]byte, error) {
	g, err := newGCM(sealKey)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(plain)+g.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("token: nonce: %w", err)
	}
	return g.Seal(nonce, nonce, plain, []byte(kid)), nil
}

func unseal(sealKey []byte, kid string, sealed []byte) ([]byte, error) {
	g, err := newGCM(sealKey)
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize()+g.Overhead() {
		return nil, fmt.Errorf("%w: sealed private key is too short", ErrKey)
	}
	plain, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], []byte(kid))
	if err != nil {
		return nil, fmt.Errorf("%w: the private key cannot be decrypted with the configured EncryptionKey: %w", ErrKey, err)
	}
	return plain, nil
}
