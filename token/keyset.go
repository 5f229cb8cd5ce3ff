package token

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// KeySource gives a verifier the public keys it may use, by key ID. A [KeySet] and the
// [StaticKeys] of a published JWKS implement it. A KeySource only looks kid up in
// memory: it never reads a file, a URL or anything else a kid could name.
type KeySource interface {
	// VerificationKey returns the public key with key ID kid and its algorithm; ok is
	// false when there is none.
	VerificationKey(kid string) (key crypto.PublicKey, alg Algorithm, ok bool)
}

// KeySetOptions configure a [KeySet]. The zero value generates EdDSA keys, keeps retired
// keys for 90 days and a minute, and stores private keys in clear.
type KeySetOptions struct {
	// Algorithm of the keys the set generates; "" means EdDSA.
	Algorithm Algorithm
	// Retention is how long a key keeps verifying after it stopped signing, before
	// [KeySet.Prune] removes it; 0 means DefaultMaxTTL + MaxLeeway. It must be at
	// least the issuer's maximum TTL plus the verifiers' leeway, or tokens would
	// outlive their key ([NewIssuer] checks this).
	Retention time.Duration
	// EncryptionKey, 32 bytes, seals the private keys the set stores with AES-256-GCM.
	// nil stores them in clear (base64 PKCS #8) in the TokenSigningKey objects, which
	// are then as secret as the keys themselves.
	EncryptionKey []byte
	// Now is the set's clock; nil means the store's clock for a persisted set, else
	// time.Now.
	Now func() time.Time
	// FieldManager names the set's writes in managedFields; "" means "token-keyset".
	FieldManager string
}

// KeySet holds one signing key and any number of verifying keys: the keys that signed
// before (retired, kept until pruned) and keys published ahead of their use (staged).
// It is safe for concurrent use; lookups for verification take no lock.
//
// A set built with [NewKeySet] lives in memory. A set opened with [OpenKeySet] keeps
// its keys in the store, as [TokenSigningKey] objects, so that a restarted process,
// or another process on the same store ([KeySet.Refresh]), verifies the tokens signed
// before.
//
// Rotation follows the Kubernetes rule for published keys: a verifier that caches the
// JWKS (for up to an hour, say) only learns of a new key when it refreshes, so a key
// should be published ([KeySet.Stage]) at least that long before it signs
// ([KeySet.Rotate]). A retired key keeps verifying for the retention period, which
// covers the longest token it can have signed, and [KeySet.Prune] then removes it.
type KeySet struct {
	mu    sync.Mutex // serialises writers
	snap  atomic.Pointer[keySnapshot]
	opts  KeySetOptions
	store *store.Store
}

type keySnapshot struct {
	signing *Key
	keys    []*Key // by creation time, then key ID
	byID    map[string]*Key
	jwks    []byte
	algs    []Algorithm
}

func (o *KeySetOptions) defaults() error {
	if o.Algorithm == "" {
		o.Algorithm = EdDSA
	}
	if !o.Algorithm.valid() {
		return fmt.Errorf("%w: algorithm %q is not supported (use %s or %s)", ErrKey, o.Algorithm, EdDSA, ES256)
	}
	if o.Retention <= 0 {
		o.Retention = DefaultMaxTTL + MaxLeeway
	}
	if o.EncryptionKey != nil && len(o.EncryptionKey) != 32 {
		return fmt.Errorf("%w: EncryptionKey must have 32 bytes (AES-256), it has %d", ErrKey, len(o.EncryptionKey))
	}
	if o.FieldManager == "" {
		o.FieldManager = "token-keyset"
	}
	return nil
}

// NewKeySet returns an in-memory key set that signs with signing (a new key of
// opts.Algorithm when nil) and also verifies with the verifying keys. Keys without a
// creation time get the set's current time.
func NewKeySet(opts KeySetOptions, signing *Key, verifying ...*Key) (*KeySet, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	ks := &KeySet{opts: opts}
	if signing == nil {
		var err error
		if signing, err = GenerateKey(opts.Algorithm); err != nil {
			return nil, err
		}
	}
	if !signing.CanSign() {
		return nil, fmt.Errorf("%w: the signing key %s has no private key", ErrKey, signing)
	}
	now := ks.now()
	stamp := func(k *Key) *Key {
		if k.created.IsZero() {
			return k.withTimes(now, k.retired)
		}
		return k
	}
	keys := []*Key{stamp(signing.withTimes(signing.created, time.Time{}))}
	for _, k := range verifying {
		if k == nil {
			return nil, fmt.Errorf("%w: nil verifying key", ErrKey)
		}
		keys = append(keys, stamp(k))
	}
	snap, err := buildSnapshot(keys, signing.id)
	if err != nil {
		return nil, err
	}
	ks.snap.Store(snap)
	return ks, nil
}

// OpenKeySet returns the key set kept in the store: it loads every [TokenSigningKey]
// and, when there is none yet, generates a signing key of opts.Algorithm and stores
// it. The kind is registered in the store's scheme if it is not already. A stored key
// that does not load (wrong key ID, undecryptable private key) is an error: the set
// does not start with a part of its keys.
func OpenKeySet(ctx context.Context, s *store.Store, opts KeySetOptions) (*KeySet, error) {
	if s == nil {
		return nil, errors.New("token: OpenKeySet needs a store")
	}
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := RegisterKinds(s.Scheme()); err != nil {
		return nil, err
	}
	ks := &KeySet{opts: opts, store: s}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if err := ks.loadLocked(ctx); err != nil {
		return nil, err
	}
	if snap := ks.snap.Load(); snap.signing != nil {
		return ks, nil
	}
	// No signing key: a new store, or every key retired. Promote a staged key, or make
	// one, and sign with it.
	if _, err := ks.rotateLocked(ctx, ks.stagedLocked()); err != nil {
		if !errors.Is(err, resource.ErrAlreadyExists) && !errors.Is(err, resource.ErrConflict) {
			return nil, err
		}
		// Another process got there first; take what it stored.
		if err := ks.loadLocked(ctx); err != nil {
			return nil, err
		}
		if ks.snap.Load().signing == nil {
			return nil, fmt.Errorf("%w: the store holds no signing key", ErrKey)
		}
	}
	return ks, nil
}

func (ks *KeySet) now() time.Time {
	switch {
	case ks.opts.Now != nil:
		return ks.opts.Now()
	case ks.store != nil:
		return ks.store.Clock().Now()
	}
	return time.Now()
}

// SigningKey returns the key new tokens are signed with.
func (ks *KeySet) SigningKey() *Key { return ks.snap.Load().signing }

// Keys returns every key of the set, the signing key among them, by creation time.
func (ks *KeySet) Keys() []*Key { return slices.Clone(ks.snap.Load().keys) }

// Key returns the key with the given ID.
func (ks *KeySet) Key(kid string) (*Key, bool) {
	k, ok := ks.snap.Load().byID[kid]
	return k, ok
}

// VerificationKey implements [KeySource]: the public key with ID kid, signing or not.
func (ks *KeySet) VerificationKey(kid string) (crypto.PublicKey, Algorithm, bool) {
	k, ok := ks.snap.Load().byID[kid]
	if !ok {
		return nil, "", false
	}
	return k.public, k.alg, true
}

// Algorithms returns the algorithms of the set's keys, sorted.
func (ks *KeySet) Algorithms() []Algorithm { return slices.Clone(ks.snap.Load().algs) }

// JWKS returns the JSON Web Key Set of the set's public keys, the document served at
// /openid/v1/jwks: {"keys":[{"kty":…,"crv":…,"x":…,"kid":…,"alg":…,"use":"sig"},…]}.
// It never contains private key material. The bytes are shared: do not modify them.
func (ks *KeySet) JWKS() []byte { return ks.snap.Load().jwks }

// Add adds a verifying key (it does not sign). Use it to trust a key that signs
// elsewhere, or to publish a key before it signs (see [KeySet.Stage]). A key that is
// in the set already is an error (409 AlreadyExists for a persisted set).
func (ks *KeySet) Add(ctx context.Context, k *Key) error {
	if k == nil {
		return fmt.Errorf("%w: nil key", ErrKey)
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	snap := ks.snap.Load()
	if _, dup := snap.byID[k.id]; dup {
		return resource.NewAlreadyExists(ks.kind(), keyObjectName(k.id)).WithCause(fmt.Errorf("token: %s is in the set already", k))
	}
	if ks.store == nil {
		keys := append(slices.Clone(snap.keys), k.withTimes(ks.now(), time.Time{}))
		return ks.publishLocked(keys, idOf(snap.signing))
	}
	obj, err := toObject(k.withTimes(time.Time{}, time.Time{}), false, ks.opts.EncryptionKey)
	if err != nil {
		return err
	}
	if err := ks.store.Create(ctx, obj, store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: ks.opts.FieldManager}}); err != nil {
		return err
	}
	return ks.loadLocked(ctx)
}

// Stage generates a key of the set's algorithm and adds it as a verifying key, so
// that it is published in the JWKS before [KeySet.Rotate] makes it sign.
func (ks *KeySet) Stage(ctx context.Context) (*Key, error) {
	k, err := GenerateKey(ks.opts.Algorithm)
	if err != nil {
		return nil, err
	}
	if err := ks.Add(ctx, k); err != nil {
		return nil, err
	}
	k, _ = ks.Key(k.id)
	return k, nil
}

// Rotate makes a new key the signing key and retires the one that signed until now
// (it keeps verifying until [KeySet.Prune] removes it after the retention period). The
// new signing key is the newest staged key that can sign (see [KeySet.Stage]), or a
// newly generated one. For a persisted set the change is one store transaction; when
// another process rotated in between, Rotate fails with 409 Conflict and the caller
// calls [KeySet.Refresh].
func (ks *KeySet) Rotate(ctx context.Context) (*Key, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.rotateLocked(ctx, ks.stagedLocked())
}

// stagedLocked returns the newest key that can sign, has never signed and is not older
// than the signing key; nil when there is none.
func (ks *KeySet) stagedLocked() *Key {
	snap := ks.snap.Load()
	var next *Key
	for _, k := range snap.keys {
		if k != snap.signing && k.CanSign() && k.retired.IsZero() &&
			(snap.signing == nil || !k.created.Before(snap.signing.created)) {
			next = k // keys are in creation order: the last match is the newest
		}
	}
	return next
}

// rotateLocked makes next (a new key when nil) the signing key.
func (ks *KeySet) rotateLocked(ctx context.Context, next *Key) (*Key, error) {
	snap := ks.snap.Load()
	generated := next == nil
	if generated {
		var err error
		if next, err = GenerateKey(ks.opts.Algorithm); err != nil {
			return nil, err
		}
	}
	now := ks.now()
	if ks.store == nil {
		keys := make([]*Key, 0, len(snap.keys)+1)
		for _, k := range snap.keys {
			if k == snap.signing {
				k = k.withTimes(k.created, now)
			}
			keys = append(keys, k)
		}
		if generated {
			keys = append(keys, next.withTimes(now, time.Time{}))
		}
		if err := ks.publishLocked(keys, next.id); err != nil {
			return nil, err
		}
		k, _ := ks.Key(next.id)
		return k, nil
	}
	wo := store.WriteOptions{FieldManager: ks.opts.FieldManager}
	err := ks.store.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		if snap.signing != nil {
			old := &TokenSigningKey{}
			if err := tx.Get("", keyObjectName(snap.signing.id), old); err != nil {
				return err
			}
			if !old.Spec.Signing {
				return resource.NewConflict(ks.kind(), old.Name, "the key set was rotated by another writer; refresh it and try again")
			}
			old.Spec.Signing = false
			old.Spec.RetiredAt = resource.NewTimePtr(now)
			if err := tx.Update(old, store.UpdateOptions{WriteOptions: wo}); err != nil {
				return err
			}
		}
		if generated {
			obj, err := toObject(next, true, ks.opts.EncryptionKey)
			if err != nil {
				return err
			}
			return tx.Create(obj, store.CreateOptions{WriteOptions: wo})
		}
		obj := &TokenSigningKey{}
		if err := tx.Get("", keyObjectName(next.id), obj); err != nil {
			return err
		}
		obj.Spec.Signing = true
		return tx.Update(obj, store.UpdateOptions{WriteOptions: wo})
	})
	if err != nil {
		return nil, err
	}
	if err := ks.loadLocked(ctx); err != nil {
		return nil, err
	}
	k, ok := ks.Key(next.id)
	if !ok {
		return nil, fmt.Errorf("%w: the new signing key %s is not in the store after rotation", ErrKey, next)
	}
	return k, nil
}

// Prune removes the keys that stopped signing more than the retention period ago, and
// returns their IDs. Tokens they signed are then refused with [ErrUnknownKey]; by then
// every one of them has expired, unless the retention is shorter than the issuer's
// maximum TTL.
func (ks *KeySet) Prune(ctx context.Context) ([]string, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	snap := ks.snap.Load()
	cutoff := ks.now().Add(-ks.opts.Retention)
	var gone []string
	var kept []*Key
	for _, k := range snap.keys {
		if k != snap.signing && !k.retired.IsZero() && !k.retired.After(cutoff) {
			gone = append(gone, k.id)
			continue
		}
		kept = append(kept, k)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if err := ks.removeLocked(ctx, kept, gone); err != nil {
		return nil, err
	}
	return gone, nil
}

// Remove removes a key that does not sign, whatever its age: a staged key that will
// not be used, or a key that must no longer be trusted. Tokens it signed are refused
// from then on.
func (ks *KeySet) Remove(ctx context.Context, kid string) error {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	snap := ks.snap.Load()
	k, ok := snap.byID[kid]
	if !ok {
		return resource.NewNotFound(ks.kind(), keyObjectName(kid))
	}
	if k == snap.signing {
		return resource.NewConflict(ks.kind(), keyObjectName(kid), "the signing key cannot be removed; rotate first")
	}
	kept := slices.DeleteFunc(slices.Clone(snap.keys), func(x *Key) bool { return x.id == kid })
	return ks.removeLocked(ctx, kept, []string{kid})
}

func (ks *KeySet) removeLocked(ctx context.Context, kept []*Key, gone []string) error {
	snap := ks.snap.Load()
	if ks.store == nil {
		return ks.publishLocked(kept, idOf(snap.signing))
	}
	err := ks.store.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		for _, id := range gone {
			obj := &TokenSigningKey{ObjectMeta: resource.ObjectMeta{Name: keyObjectName(id)}}
			if _, err := tx.Delete(obj, store.DeleteOptions{WriteOptions: store.WriteOptions{FieldManager: ks.opts.FieldManager}}); err != nil && !errors.Is(err, resource.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ks.loadLocked(ctx)
}

// Refresh reloads a persisted set from the store, to pick up what another process
// changed (a rotation, a prune). It does nothing for an in-memory set.
func (ks *KeySet) Refresh(ctx context.Context) error {
	if ks.store == nil {
		return nil
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.loadLocked(ctx)
}

// loadLocked reads every stored key and publishes them.
func (ks *KeySet) loadLocked(ctx context.Context) error {
	var list TokenSigningKeyList
	if err := ks.store.List(ctx, &list, store.ListOptions{}); err != nil {
		return err
	}
	keys := make([]*Key, 0, len(list.Items))
	var signing *TokenSigningKey
	var signingKey *Key
	for i := range list.Items {
		o := &list.Items[i]
		k, err := fromObject(o, ks.opts.EncryptionKey)
		if err != nil {
			return err
		}
		keys = append(keys, k)
		// Two keys marked signing can only come from two processes that started on an
		// empty store at once: the newest one signs, the other only verifies.
		if o.Spec.Signing && k.CanSign() && (signing == nil || newer(o, signing)) {
			signing, signingKey = o, k
		}
	}
	return ks.publishLocked(keys, idOf(signingKey))
}

func newer(a, b *TokenSigningKey) bool {
	if !a.CreationTimestamp.Time.Equal(b.CreationTimestamp.Time) {
		return a.CreationTimestamp.Time.After(b.CreationTimestamp.Time)
	}
	return a.Name > b.Name
}

func idOf(k *Key) string {
	if k == nil {
		return ""
	}
	return k.id
}

func (ks *KeySet) publishLocked(keys []*Key, signingID string) error {
	snap, err := buildSnapshot(keys, signingID)
	if err != nil {
		return err
	}
	ks.snap.Store(snap)
	return nil
}

func (ks *KeySet) kind() *resource.KindInfo {
	if ks.store != nil {
		if k, ok := ks.store.Scheme().KindFor(KeyGroup+"/"+KeyVersion, KindTokenSigningKey); ok {
			return k
		}
	}
	k := KeyKindInfo()
	return &k
}

// buildSnapshot orders the keys, indexes them and renders the JWKS.
func buildSnapshot(keys []*Key, signingID string) (*keySnapshot, error) {
	keys = slices.Clone(keys)
	slices.SortStableFunc(keys, func(a, b *Key) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	snap := &keySnapshot{keys: keys, byID: make(map[string]*Key, len(keys))}
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	for _, k := range keys {
		if _, dup := snap.byID[k.id]; dup {
			return nil, fmt.Errorf("%w: key %s appears twice", ErrKey, k.id)
		}
		snap.byID[k.id] = k
		if k.id == signingID {
			snap.signing = k
		}
		if !slices.Contains(snap.algs, k.alg) {
			snap.algs = append(snap.algs, k.alg)
		}
		set.Keys = append(set.Keys, k.jwk())
	}
	if signingID != "" && snap.signing == nil {
		return nil, fmt.Errorf("%w: signing key %s is not in the set", ErrKey, signingID)
	}
	slices.Sort(snap.algs)
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("token: render JWKS: %w", err)
	}
	snap.jwks = b
	return snap, nil
}
