package token

import (
	"context"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Identity is the access key a request authenticated with. [Authenticator.Authenticate]
// puts it in store.UserInfo.Extra, and every rule of this package ([AccessKeyAdmission],
// [Authorizer], [Authorizer.CanDeleteOwner]) reads the caller from there
// ([IdentityOf]). A host that authenticates in another way builds the UserInfo with
// [NewUserInfo].
type Identity struct {
	// Key is the authenticated AccessKey, as stored (spec.key is never set).
	Key *resource.AccessKey
	// Subject is who the key acts for: spec.subject, else the key's own name.
	Subject string
	// Expiry is when the key expires; zero means never.
	Expiry time.Time
	// scope is the key's scope compiled; nil when the stored scope is invalid (it
	// then allows nothing).
	scope *policy.Compiled
}

// NewIdentity returns the Identity of a stored AccessKey. A key whose stored scope is
// invalid gets an Identity that is allowed nothing.
func NewIdentity(k *resource.AccessKey) *Identity {
	id := &Identity{Key: k, Subject: subjectOf(k), Expiry: KeyExpiry(k)}
	if sc, err := policy.Compile(k.Spec.Scope); err == nil {
		id.scope = sc
	}
	return id
}

// NewUserInfo returns the store.UserInfo of an Identity: Name is the subject, UID the
// key's uid, and Extra the Identity itself.
func NewUserInfo(id *Identity) *store.UserInfo {
	return &store.UserInfo{Name: id.Subject, UID: string(id.Key.UID), Extra: id}
}

// IdentityOf returns the Identity a store.UserInfo carries in Extra, or nil when u is
// nil or carries none.
func IdentityOf(u *store.UserInfo) *Identity {
	if u == nil {
		return nil
	}
	id, _ := u.Extra.(*Identity)
	return id
}

// Scope returns the key's scope; nil means no restriction.
func (id *Identity) Scope() *resource.AccessKeyScope { return id.Key.Spec.Scope }

// Unrestricted reports whether the key has no scope (nil): the admin's kind of key.
func (id *Identity) Unrestricted() bool { return id.Key.Spec.Scope == nil && id.scope != nil }

// Evaluate decides req with the key's scope; an invalid stored scope allows nothing.
func (id *Identity) Evaluate(req policy.Request) policy.Decision {
	if id.scope == nil {
		return policy.Decision{Reason: "denied: the access key's stored scope is invalid, so it allows nothing"}
	}
	if d := id.scope.Evaluate(req); d.Allowed {
		return d
	}
	return id.scope.Explain(req)
}

// TokenCaller returns the [Caller] the [Issuer] mints a token for: the key's subject
// (kind [SubjectKindAccessKey] for a key without spec.subject, "User" otherwise), its
// scope, its expiry, the key itself (so that deleting the key revokes the token), and
// the subject's token generation as gen says (nil means [SubjectGeneration]).
func (id *Identity) TokenCaller(ctx context.Context, s *store.Store, gen GenerationFunc) (Caller, error) {
	k := id.Key
	c := Caller{Scope: k.Spec.Scope, KeyExpiry: id.Expiry, AccessKey: k.Name, AccessKeyUID: string(k.UID)}
	if k.Spec.Subject == "" {
		c.Kind, c.Name, c.UID = SubjectKindAccessKey, k.Name, string(k.UID)
		c.TokenGeneration = k.Spec.TokenGeneration
		return c, nil
	}
	if gen == nil {
		gen = SubjectGeneration
	}
	c.Kind, c.Name = SubjectKindUser, k.Spec.Subject
	g, err := gen(ctx, s, c.Kind, c.Name, "")
	if err != nil {
		return c, err
	}
	c.TokenGeneration = g
	return c, nil
}
