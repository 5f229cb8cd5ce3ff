package token

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"time"

	"github.com/management-service/mgmt/resource"
)

// Bounds of an AccessKey.
const (
	// MaxAccessKeyBytes is the longest secret (spec.key) an AccessKey may have: it must
	// fit in an Authorization header.
	MaxAccessKeyBytes = 1024
	// MaxAccessKeyTTL is the longest spec.ttl of an AccessKey, in seconds (100 years);
	// a longer one is 422 naming this bound, and 0 means no expiry.
	//
	// The bound keeps the expiry arithmetic far from overflowing: creationTimestamp
	// plus the ttl always fits a time.Time and a time.Duration (which ends near 292
	// years), so a key never expires by wrapping around ([KeyExpiry]).
	//
	// A DirectClusterEndpointToken minted with a key never outlives it: the issuer cuts
	// the token's lifetime to what the key has left ([Caller.KeyExpiry]). What offline
	// verification cannot see: a connected cluster that verifies a token from the JWKS
	// alone keeps accepting it until its exp, even after the key that minted it was
	// deleted, re-created or rotated, the token's record was deleted, or the subject's
	// token generation was raised; only the online check ([StoreRevocation]) sees those.
	// So the time a revoked token can still be used offline is at most its own
	// lifetime, itself at most the issuer's MaxTTL (90 days by default) and the key's
	// remaining life.
	MaxAccessKeyTTL int64 = 100 * 365 * 24 * 3600
)

// AnnotationLastApplied is the annotation in which client-side "kubectl apply" keeps
// the applied manifest; the AccessKey admission removes spec.key from it.
const AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// The internal kinds that keep the secrets of AccessKeys. They belong to this package
// and are never served over the API.
const (
	// KindAccessKeySecret is the kind of [AccessKeySecret].
	KindAccessKeySecret = "AccessKeySecret"
	// AccessKeySecretResource is the resource name of [AccessKeySecret].
	AccessKeySecretResource = "accesskeysecrets"
	// KindAccessKeyBinding is the kind of [AccessKeyBinding].
	KindAccessKeyBinding = "AccessKeyBinding"
	// AccessKeyBindingResource is the resource name of [AccessKeyBinding].
	AccessKeyBindingResource = "accesskeybindings"
)

// AccessKeySecret says which AccessKey holds a secret: it is named by the secret's
// hash ([SecretName]) and holds the key's name and uid. It is the index that
// authenticates a bearer and keeps secrets unique; it is written only by the AccessKey
// admission ([AccessKeyAdmission]) in the transaction of the key's own write.
//
// It is internal: a server must never serve this kind (its names are the hashes of
// every secret). Cluster-scoped, of the group [KeyGroup].
type AccessKeySecret struct {
	// TypeMeta is token.management.service/v1 AccessKeySecret.
	resource.TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata; the name is the secret's hash.
	resource.ObjectMeta `json:"metadata"`
	// Spec names the key.
	Spec AccessKeyRef `json:"spec"`
}

// AccessKeyBinding says which secret an AccessKey holds: it is named like the key and
// holds the name of the key's [AccessKeySecret] and the key's uid, so that rotating or
// deleting the key finds the secret it had. Internal, like [AccessKeySecret].
type AccessKeyBinding struct {
	// TypeMeta is token.management.service/v1 AccessKeyBinding.
	resource.TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata; the name is the AccessKey's.
	resource.ObjectMeta `json:"metadata"`
	// Spec names the secret record and the key's uid.
	Spec AccessKeyBindingSpec `json:"spec"`
}

// AccessKeyRef names one AccessKey, by name and uid (the uid tells a re-created key
// from the one the record was written for).
type AccessKeyRef struct {
	// Name is the AccessKey's name.
	Name string `json:"name"`
	// UID is the AccessKey's uid.
	UID string `json:"uid"`
}

// AccessKeyBindingSpec is the secret an AccessKey holds.
type AccessKeyBindingSpec struct {
	// Secret is the name of the key's [AccessKeySecret] (its [SecretName]).
	Secret string `json:"secret"`
	// UID is the AccessKey's uid.
	UID string `json:"uid"`
}

// AccessKeySecretList is a list of [AccessKeySecret].
type AccessKeySecretList = resource.List[AccessKeySecret, *AccessKeySecret]

// AccessKeyBindingList is a list of [AccessKeyBinding].
type AccessKeyBindingList = resource.List[AccessKeyBinding, *AccessKeyBinding]

// SecretName returns the name of the [AccessKeySecret] of an access key's secret:
// "sha256-" and the hex SHA-256 of the secret. Secrets are random strings of high
// entropy, so an unsalted hash does; the store compares hashes, never secrets.
func SecretName(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// KeyExpiry returns when an AccessKey expires: creationTimestamp plus spec.ttl
// seconds, or the zero time (never) for a ttl of 0 or less. It never overflows: a ttl
// above [MaxAccessKeyTTL] (which admission refuses, but an older store may hold)
// counts as MaxAccessKeyTTL.
func KeyExpiry(k *resource.AccessKey) time.Time {
	ttl := k.Spec.TTL
	if ttl <= 0 {
		return time.Time{}
	}
	ttl = min(ttl, MaxAccessKeyTTL, int64(math.MaxInt64/int64(time.Second)))
	return k.CreationTimestamp.Add(time.Duration(ttl) * time.Second)
}

// subjectOf is who a key acts for: spec.subject, else the key itself (its name).
func subjectOf(k *resource.AccessKey) string {
	if k.Spec.Subject != "" {
		return k.Spec.Subject
	}
	return k.Name
}
