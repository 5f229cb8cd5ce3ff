package token

import (
	"context"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// SubjectKindAccessKey is the subject kind of a caller that is an access key itself:
// its token generation is the key's spec.tokenGeneration, and deleting the key revokes
// its tokens.
const SubjectKindAccessKey = "AccessKey"

// GenerationFunc returns the current token generation of a subject. An error matching
// [ErrRevoked] says the subject is gone (its tokens are revoked); any other error means
// the generation could not be read.
type GenerationFunc func(ctx context.Context, s *store.Store, kind, name, uid string) (int64, error)

// StoreRevocation is the [RevocationChecker] over the store. A token is revoked when:
//
//   - its record (the DirectClusterEndpointToken named by the claim "rec") is gone, was
//     re-created with another uid than the token's jti, or is being deleted;
//   - the AccessKey it was minted with (the claims "key" and "kuid") is gone, was
//     re-created with another uid, or is being deleted, whatever the token's subject;
//   - the subject's current token generation is higher than the token's "gen", or the
//     subject is gone (as the GenerationFunc says; [SubjectGeneration] by default).
//
// Each check is one store read (the default generation of a subject that is not an
// access key lists the access keys, see [SubjectGeneration]).
type StoreRevocation struct {
	s   *store.Store
	gen GenerationFunc
}

// NewStoreRevocation returns the online check over s; gen nil means
// [SubjectGeneration].
func NewStoreRevocation(s *store.Store, gen GenerationFunc) *StoreRevocation {
	if gen == nil {
		gen = SubjectGeneration
	}
	return &StoreRevocation{s: s, gen: gen}
}

// CheckRevocation implements [RevocationChecker].
func (r *StoreRevocation) CheckRevocation(ctx context.Context, c *Claims) error {
	rec := &resource.DirectClusterEndpointToken{}
	err := r.s.Get(ctx, "", c.Management.Record, rec, store.GetOptions{})
	switch {
	case errors.Is(err, resource.ErrNotFound), errors.Is(err, resource.ErrInvalid):
		return verr(ErrRevoked, "the token's record "+clip(c.Management.Record)+" is gone", nil)
	case err != nil:
		return verr(ErrCheckFailed, "reading the token's record", err)
	case rec.UID != c.ID:
		return verr(ErrRevoked, "the token's record "+clip(c.Management.Record)+" was re-created", nil)
	case rec.IsTerminating():
		return verr(ErrRevoked, "the token's record "+clip(c.Management.Record)+" is being deleted", nil)
	}
	if err := r.checkKey(ctx, c); err != nil {
		return err
	}
	m := &c.Management
	cur, err := r.gen(ctx, r.s, m.Kind, m.Name, m.UID)
	switch {
	case errors.Is(err, ErrRevoked):
		var ve *VerifyError
		if errors.As(err, &ve) {
			return ve
		}
		return verr(ErrRevoked, "", err)
	case err != nil:
		return verr(ErrCheckFailed, "reading the subject's token generation", err)
	case cur > m.Generation:
		return verr(ErrRevoked, fmt.Sprintf("the subject's token generation is %d, the token has %d", cur, m.Generation), nil)
	}
	return nil
}

// checkKey refuses a token whose minting AccessKey is gone, re-created or being
// deleted. A token that names no key (issued without Caller.AccessKey) passes.
func (r *StoreRevocation) checkKey(ctx context.Context, c *Claims) error {
	m := &c.Management
	if m.AccessKey == "" && m.AccessKeyUID == "" {
		return nil
	}
	k := &resource.AccessKey{}
	err := r.s.Get(ctx, "", m.AccessKey, k, store.GetOptions{})
	switch {
	case errors.Is(err, resource.ErrNotFound), errors.Is(err, resource.ErrInvalid):
		return verr(ErrRevoked, "the access key "+clip(m.AccessKey)+" that minted the token is gone", nil)
	case err != nil:
		return verr(ErrCheckFailed, "reading the access key that minted the token", err)
	case string(k.UID) != m.AccessKeyUID:
		return verr(ErrRevoked, "the access key "+clip(m.AccessKey)+" that minted the token was re-created", nil)
	case k.IsTerminating():
		return verr(ErrRevoked, "the access key "+clip(m.AccessKey)+" that minted the token is being deleted", nil)
	}
	return nil
}

// SubjectGeneration is the default [GenerationFunc], over the AccessKey kind:
//
//   - for a subject of kind [SubjectKindAccessKey], the generation is the key's
//     spec.tokenGeneration; the key being gone, or re-created with another uid than
//     uid (when uid is set), is [ErrRevoked];
//   - for any other kind (a user, a team), it is the highest spec.tokenGeneration of
//     the access keys whose spec.subject is name (0 when there is none), so that
//     raising it on any key of the subject revokes every token of the subject issued
//     at a lower generation. This lists the access keys: a host with many keys passes
//     its own GenerationFunc to [NewStoreRevocation].
//
// A host that fills [Caller.TokenGeneration] uses the same function, so that a new
// token carries the generation the check will compare with.
func SubjectGeneration(ctx context.Context, s *store.Store, kind, name, uid string) (int64, error) {
	if kind == SubjectKindAccessKey {
		k := &resource.AccessKey{}
		err := s.Get(ctx, "", name, k, store.GetOptions{})
		switch {
		case errors.Is(err, resource.ErrNotFound), errors.Is(err, resource.ErrInvalid):
			return 0, verr(ErrRevoked, "the access key "+clip(name)+" is gone", nil)
		case err != nil:
			return 0, err
		case uid != "" && k.UID != uid:
			return 0, verr(ErrRevoked, "the access key "+clip(name)+" was re-created", nil)
		}
		return k.Spec.TokenGeneration, nil
	}
	var list resource.AccessKeyList
	if err := s.List(ctx, &list, store.ListOptions{}); err != nil {
		return 0, err
	}
	var gen int64
	for i := range list.Items {
		if k := &list.Items[i]; k.Spec.Subject == name && k.Spec.TokenGeneration > gen {
			gen = k.Spec.TokenGeneration
		}
	}
	return gen, nil
}
