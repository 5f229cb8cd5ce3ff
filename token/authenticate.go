package token

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// AuthenticatorOptions configure an [Authenticator]; the zero value is the default.
type AuthenticatorOptions struct {
	// Now is the clock expiry is checked with; nil means the store's clock.
	Now func() time.Time
}

// Authenticator finds the AccessKey of a bearer secret. It keeps no state of its own:
// every call reads the store (in one transaction, so from one consistent state), so it
// is right at once after any create, rotation, update or delete, and after a restart.
type Authenticator struct {
	s    *store.Store
	opts AuthenticatorOptions
}

// NewAuthenticator returns an Authenticator over s. s must be built with the
// [AccessKeyAdmission] hooks and a scheme that [RegisterKinds] filled: the secrets are
// found through the records those hooks write.
func NewAuthenticator(s *store.Store, opts AuthenticatorOptions) *Authenticator {
	return &Authenticator{s: s, opts: opts}
}

// errUnauthorized is the one answer for a secret that names no usable key: unknown,
// of a deleted or re-created key, or a stale record.
func errUnauthorized() error {
	return resource.NewUnauthorized("Unauthorized: invalid bearer token")
}

// Authenticate returns the caller whose AccessKey has the secret bearer: a
// store.UserInfo whose Extra is its [Identity] (see [NewUserInfo]). bearer is the
// secret alone, without the "Bearer " scheme.
//
// The lookup: the [AccessKeySecret] named [SecretName](bearer) names a key; the key of
// that name must exist with that uid, its [AccessKeyBinding] must name this very
// secret, and the key must be neither expired ([KeyExpiry]) nor being deleted. Every
// failure is 401 Unauthorized, a *resource.StatusError; a store failure is returned as
// the store's error.
func (a *Authenticator) Authenticate(ctx context.Context, bearer string) (*store.UserInfo, error) {
	if bearer == "" || len(bearer) > MaxAccessKeyBytes || strings.ContainsAny(bearer, " \t\r\n") {
		return nil, errUnauthorized()
	}
	name := SecretName(bearer)
	var key *resource.AccessKey
	err := a.s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		key = nil
		k, err := liveKeyOf(tx, name)
		if err != nil || k == nil {
			return err
		}
		key = k
		return nil
	})
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, errUnauthorized()
	}
	if key.IsTerminating() {
		return nil, resource.NewUnauthorized("Unauthorized: the access key is being deleted")
	}
	id := NewIdentity(key)
	if !id.Expiry.IsZero() && !a.now().Before(id.Expiry) {
		return nil, resource.NewUnauthorized("Unauthorized: the access key has expired")
	}
	return NewUserInfo(id), nil
}

func (a *Authenticator) now() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return a.s.Clock().Now()
}

// liveKeyOf returns the AccessKey that holds the secret whose record is secretName,
// read in tx, or nil when no key holds it now (no record, or a record left over from a
// key that is gone, re-created or rotated away).
func liveKeyOf(tx *store.Tx, secretName string) (*resource.AccessKey, error) {
	rec := &AccessKeySecret{}
	if found, err := getIfExists(tx, secretName, rec); err != nil || !found {
		return nil, err
	}
	k := &resource.AccessKey{}
	if found, err := getIfExists(tx, rec.Spec.Name, k); err != nil || !found {
		return nil, err
	}
	if string(k.UID) != rec.Spec.UID {
		return nil, nil
	}
	b := &AccessKeyBinding{}
	if found, err := getIfExists(tx, k.Name, b); err != nil || !found {
		return nil, err
	}
	if b.Spec.Secret != secretName || b.Spec.UID != rec.Spec.UID {
		return nil, nil
	}
	return k, nil
}

// getIfExists reads the cluster-scoped object name into out: false when it does not
// exist (or the name cannot exist).
func getIfExists(tx *store.Tx, name string, out resource.Object) (bool, error) {
	err := tx.Get("", name, out)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, resource.ErrNotFound), errors.Is(err, resource.ErrInvalid):
		return false, nil
	}
	return false, err
}
