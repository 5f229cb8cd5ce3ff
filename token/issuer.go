package token

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Defaults of the issuer.
const (
	// DefaultTTL is the lifetime of a token whose spec.ttl is omitted or 0.
	DefaultTTL = 24 * time.Hour
	// DefaultMaxTTL is the longest spec.ttl the issuer accepts by default (90 days).
	DefaultMaxTTL = 90 * 24 * time.Hour
	// DefaultGenerateName is the generateName prefix of a record created without a
	// name: records are named "dcet-" and five random characters.
	DefaultGenerateName = "dcet-"
)

// Annotations the issuer writes on every record, so that the records say who got which
// token (the token itself is never stored).
const (
	// AnnotationSubject is the token's "sub": "<kind>:<name>" of the caller.
	AnnotationSubject = "token.management.service/subject"
	// AnnotationSubjectUID is the caller's uid, when it has one.
	AnnotationSubjectUID = "token.management.service/subject-uid"
	// AnnotationKeyID is the kid of the key that signed the token.
	AnnotationKeyID = "token.management.service/key-id"
	// AnnotationAccessKey is the name of the AccessKey the token was minted with, when
	// the caller says ([Caller.AccessKey]).
	AnnotationAccessKey = "token.management.service/access-key"
	// LabelMintedBy is the uid of the AccessKey the token was minted with, when the
	// caller says ([Caller.AccessKeyUID]). A label, so that a list can select a key's
	// own records; [Authorizer] reads it to show a key the records it minted. The
	// issuer sets or removes it on every record, whatever the request carried.
	LabelMintedBy = "token.management.service/minted-by"
)

// SubjectKindUser is the subject kind of a caller whose access key acts for a user
// (spec.subject).
const SubjectKindUser = "User"

// Caller is the authenticated subject that asks for a token. The host fills it from
// what authenticated the request (an AccessKey, typically).
type Caller struct {
	// Kind is the subject's kind, e.g. "User", "Team", or [SubjectKindAccessKey] when
	// the subject is the access key itself.
	Kind string
	// Name is the subject's name; required.
	Name string
	// UID is the subject's uid, if it has one.
	UID string
	// TokenGeneration is the subject's current token generation (see
	// [SubjectGeneration]); the token carries it as "gen", and an online check refuses
	// the token once the subject's generation is higher.
	TokenGeneration int64
	// Scope is the caller's own scope; nil means no restriction beyond its rights. The
	// token's scope is never wider.
	Scope *resource.AccessKeyScope
	// KeyExpiry is when the caller's credential expires; zero means never. The token
	// never outlives it (see [MaxAccessKeyTTL] for what offline verification cannot
	// see).
	KeyExpiry time.Time
	// AccessKey is the name of the AccessKey the caller authenticated with, if any. The
	// token carries it and AccessKeyUID in its private claim, and the online check
	// ([StoreRevocation]) refuses the token once that key is gone, re-created or being
	// deleted, whatever the subject.
	AccessKey string
	// AccessKeyUID is the uid of that AccessKey; the record gets it as [LabelMintedBy].
	AccessKeyUID string
}

// IssuerOptions configure an [Issuer]. Issuer is required; the zero value of every
// other field is its default.
type IssuerOptions struct {
	// Issuer is the "iss" of every token: the URL of the management API under which
	// the discovery document and the JWKS are served, e.g.
	// "https://mgmt.example.com/kubernetes/management".
	Issuer string
	// Audience is the "aud" of every token unless [IssueOptions.Audience] says
	// otherwise; nil means tokens that are not bound to an audience.
	Audience []string
	// DefaultTTL is the lifetime when spec.ttl is omitted or 0; 0 means DefaultTTL.
	DefaultTTL time.Duration
	// MaxTTL is the longest spec.ttl accepted; 0 means DefaultMaxTTL.
	MaxTTL time.Duration
	// MinTTL is the shortest spec.ttl accepted; 0 means one second.
	MinTTL time.Duration
	// Now is the issuer's clock; nil means the store's clock.
	Now func() time.Time
	// FieldManager names the issuer's writes in managedFields when the request names
	// none; "" means "token-issuer".
	FieldManager string
}

// IssueOptions are the options of one [Issuer.Issue].
type IssueOptions struct {
	// WriteOptions are passed to the store's create: DryRun, FieldManager and User
	// (for admission hooks).
	store.WriteOptions
	// Audience, when not nil, is the token's "aud" instead of IssuerOptions.Audience
	// (an empty, non-nil slice means no audience).
	Audience []string
}

// Issuer issues DirectClusterEndpointTokens: it checks a create request against the
// caller, writes the record through the store and signs the token with the signing key
// of its [KeySet]. It is safe for concurrent use.
type Issuer struct {
	s    *store.Store
	keys *KeySet
	opts IssuerOptions
	kind *resource.KindInfo
}

// NewIssuer returns an issuer that writes records to s and signs with keys. It refuses
// settings that contradict each other: a default TTL outside [MinTTL, MaxTTL], and a
// key retention shorter than MaxTTL plus MaxLeeway (tokens would outlive the key that
// verifies them).
func NewIssuer(s *store.Store, keys *KeySet, opts IssuerOptions) (*Issuer, error) {
	if s == nil || keys == nil {
		return nil, errors.New("token: NewIssuer needs a store and a key set")
	}
	if opts.Issuer == "" {
		return nil, errors.New("token: IssuerOptions.Issuer is required")
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = DefaultTTL
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = DefaultMaxTTL
	}
	if opts.MinTTL <= 0 {
		opts.MinTTL = time.Second
	}
	if opts.FieldManager == "" {
		opts.FieldManager = "token-issuer"
	}
	if opts.DefaultTTL < opts.MinTTL || opts.DefaultTTL > opts.MaxTTL {
		return nil, fmt.Errorf("token: DefaultTTL %s is outside [MinTTL %s, MaxTTL %s]", opts.DefaultTTL, opts.MinTTL, opts.MaxTTL)
	}
	if keys.opts.Retention < opts.MaxTTL+MaxLeeway {
		return nil, fmt.Errorf("token: the key set keeps retired keys for %s, less than MaxTTL %s plus the leeway %s",
			keys.opts.Retention, opts.MaxTTL, MaxLeeway)
	}
	k, ok := s.Scheme().KindFor(resource.GroupVersion, resource.KindDirectClusterEndpointToken)
	if !ok {
		return nil, fmt.Errorf("token: the store's scheme does not know %s", resource.KindDirectClusterEndpointToken)
	}
	opts.Audience = append([]string(nil), opts.Audience...)
	return &Issuer{s: s, keys: keys, opts: opts, kind: k}, nil
}

// Keys returns the issuer's key set.
func (i *Issuer) Keys() *KeySet { return i.keys }

func (i *Issuer) now() time.Time {
	if i.opts.Now != nil {
		return i.opts.Now()
	}
	return i.s.Clock().Now()
}

var (
	ttlPath   = resource.NewPath("spec", "ttl")
	scopePath = resource.NewPath("spec", "scope")
)

// Issue issues a token for req on behalf of caller and returns the created object:
// the stored record (uid, name, resourceVersion, spec with the granted ttl and scope,
// status.expirationTimestamp) with status.token set. req is not modified. The stored
// record holds everything but the token.
//
// The rules (design decisions §3):
//
//   - spec.ttl omitted or 0 gives the default TTL; a negative ttl, one below MinTTL or
//     one above MaxTTL is 422 Invalid at spec.ttl naming the bound.
//   - The token never outlives the caller's credential: when the caller's key expires
//     before the TTL runs out, the TTL is cut to what the key has left, in whole
//     seconds, even below MinTTL (the returned spec.ttl and
//     status.expirationTimestamp show the granted value). A caller whose key has less
//     than a second left gets 401.
//   - A requested spec.scope is validated with [policy.Validate] (422 with field paths
//     under spec.scope) and must be covered by the caller's own scope
//     ([policy.Covers]): otherwise 403 Forbidden naming each entry that is not
//     covered. Without a requested scope the token gets the caller's scope.
//   - A record without a name gets generateName "dcet-". The record is written with
//     the store's Create, so admission hooks, schema validation and name generation
//     apply, and a dry run (opts.DryRun) returns the fully formed object with no token
//     signed and nothing stored.
//
// Errors are *resource.StatusError values: 400 for a body of another kind, 401, 403,
// 422, the store's own errors (409 AlreadyExists for a taken name, ...), 503 when the
// key set has no signing key.
func (i *Issuer) Issue(ctx context.Context, req *resource.DirectClusterEndpointToken, caller Caller, opts IssueOptions) (*resource.DirectClusterEndpointToken, error) {
	if req == nil {
		return nil, resource.NewBadRequest("the request has no DirectClusterEndpointToken")
	}
	if tm := req.TypeMeta; (tm.Kind != "" && tm.Kind != i.kind.Kind) || (tm.APIVersion != "" && tm.APIVersion != i.kind.APIVersion()) {
		return nil, resource.NewBadRequest(fmt.Sprintf("the body is %s %s, not %s %s",
			tm.APIVersion, tm.Kind, i.kind.APIVersion(), i.kind.Kind))
	}
	if caller.Name == "" {
		return nil, resource.NewUnauthorized("no authenticated caller")
	}
	now := i.now().UTC().Truncate(time.Second)
	var left time.Duration
	if !caller.KeyExpiry.IsZero() {
		left = caller.KeyExpiry.Sub(now).Truncate(time.Second)
		if left < time.Second {
			return nil, resource.NewUnauthorized("the caller's access key has expired")
		}
	}
	obj, err := resource.DeepCopy(req)
	if err != nil {
		return nil, resource.NewBadRequest(err.Error()).WithCause(err)
	}
	name := obj.Name
	if name == "" {
		name = obj.GenerateName
	}

	ttl, errs := i.ttl(obj.Spec.TTL)
	if obj.Spec.Scope != nil {
		errs = append(errs, policy.Validate(obj.Spec.Scope, scopePath)...)
	}
	if len(errs) > 0 {
		return nil, resource.NewInvalid(i.kind, name, errs)
	}
	granted := obj.Spec.Scope
	if granted != nil {
		if ok, gaps := policy.Covers(caller.Scope, granted); !ok {
			return nil, i.forbidden(name, "Ask for a scope within your access key's own scope.",
				"the requested scope is wider than the caller's own scope", gaps)
		}
	} else if caller.Scope != nil {
		if granted, err = copyScope(caller.Scope); err != nil {
			return nil, resource.NewInternalError(err)
		}
		if errs := policy.Validate(granted, scopePath); len(errs) > 0 {
			gaps := make([]policy.Gap, len(errs))
			for n, e := range errs {
				gaps[n] = policy.Gap{Field: e.Field, Detail: e.ErrorBody()}
			}
			return nil, i.forbidden(name, "Your access key's scope is invalid; ask an administrator to fix it.",
				"the caller's own scope is invalid, so it allows nothing", gaps)
		}
	}
	if left > 0 && ttl > left {
		ttl = left
	}

	signing := i.keys.SigningKey()
	if signing == nil {
		return nil, resource.NewServiceUnavailable("the token key set has no signing key")
	}
	exp := now.Add(ttl)
	obj.Spec.TTL = int64(ttl / time.Second)
	obj.Spec.Scope = granted
	obj.Status = resource.DirectClusterEndpointTokenStatus{ExpirationTimestamp: resource.NewTimePtr(exp)}
	if obj.Name == "" && obj.GenerateName == "" {
		obj.GenerateName = DefaultGenerateName
	}
	sub := subject(caller)
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[AnnotationSubject] = sub
	if caller.UID != "" {
		obj.Annotations[AnnotationSubjectUID] = caller.UID
	} else {
		delete(obj.Annotations, AnnotationSubjectUID)
	}
	obj.Annotations[AnnotationKeyID] = signing.ID()
	markMinter(&obj.ObjectMeta, caller)

	wo := opts.WriteOptions
	if wo.FieldManager == "" {
		wo.FieldManager = i.opts.FieldManager
	}
	if err := i.s.Create(ctx, obj, store.CreateOptions{WriteOptions: wo}); err != nil {
		return nil, err
	}
	if opts.DryRun {
		return obj, nil
	}
	aud := i.opts.Audience
	if opts.Audience != nil {
		aud = opts.Audience
	}
	c := &Claims{
		Issuer: i.opts.Issuer, Subject: sub, Audience: aud,
		IssuedAt: now, NotBefore: now, Expiry: exp, ID: obj.UID,
		Management: ManagementClaim{UID: caller.UID, Name: caller.Name, Kind: caller.Kind,
			Generation: caller.TokenGeneration, Record: obj.Name, Scope: granted,
			AccessKey: caller.AccessKey, AccessKeyUID: caller.AccessKeyUID},
	}
	tok, err := sign(signing, c)
	if err != nil {
		// Nothing was handed out: take the record back.
		uid := obj.UID
		rec := &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: obj.Name}}
		_, _ = i.s.Delete(ctx, rec, store.DeleteOptions{Preconditions: store.Preconditions{UID: &uid}})
		return nil, resource.NewInternalError(err)
	}
	obj.Status.Token = tok
	return obj, nil
}

// sign renders and signs the claims.
func sign(k *Key, c *Claims) (string, error) {
	payload, err := marshalClaims(c)
	if err != nil {
		return "", fmt.Errorf("token: encode claims: %w", err)
	}
	return k.sign(payload)
}

// ttl applies the defaults and bounds to a requested spec.ttl.
func (i *Issuer) ttl(req int64) (time.Duration, resource.ErrorList) {
	if req == 0 {
		return i.opts.DefaultTTL, nil
	}
	minS, maxS := int64(i.opts.MinTTL/time.Second), int64(i.opts.MaxTTL/time.Second)
	if minS < 1 {
		minS = 1
	}
	def := strconv.FormatInt(int64(i.opts.DefaultTTL/time.Second), 10)
	switch {
	case req < 0:
		return 0, resource.ErrorList{resource.Invalid(ttlPath, req,
			"must not be negative: a lifetime in seconds, or 0 for the default of "+def+" seconds")}
	case req < minS:
		return 0, resource.ErrorList{resource.Invalid(ttlPath, req,
			fmt.Sprintf("must be at least %d seconds (or 0 for the default of %s seconds)", minS, def))}
	case req > maxS:
		return 0, resource.ErrorList{resource.Invalid(ttlPath, req,
			fmt.Sprintf("must be at most %d seconds (%s)", maxS, humanDuration(i.opts.MaxTTL)))}
	}
	return time.Duration(req) * time.Second, nil
}

// forbidden is a 403 that opens with lead, one sentence the user can act on, then
// keeps the precise reason and names each gap (also as a cause).
func (i *Issuer) forbidden(name, lead, reason string, gaps []policy.Gap) *resource.StatusError {
	parts := make([]string, len(gaps))
	for n, g := range gaps {
		parts[n] = g.String()
	}
	e := resource.NewForbidden(i.kind, name, reason+": "+strings.Join(parts, "; "))
	e.ErrStatus.Message = lead + " " + e.ErrStatus.Message
	for _, g := range gaps {
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, resource.StatusCause{
			Type: resource.CauseFieldValueForbidden, Field: g.Field, Message: g.Detail})
	}
	return e
}

// DeleteExpired deletes the records of tokens that expired more than MaxLeeway ago and
// returns how many it deleted. Records are otherwise kept (they make the online check
// possible and say who got a token); a host calls this now and then.
func (i *Issuer) DeleteExpired(ctx context.Context) (int, error) {
	var list resource.DirectClusterEndpointTokenList
	if err := i.s.List(ctx, &list, store.ListOptions{}); err != nil {
		return 0, err
	}
	cutoff := i.now().Add(-MaxLeeway)
	n := 0
	for _, rec := range list.Items {
		if rec.Status.ExpirationTimestamp == nil || rec.Status.ExpirationTimestamp.After(cutoff) {
			continue
		}
		uid := rec.UID
		del := &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: rec.Name}}
		_, err := i.s.Delete(ctx, del, store.DeleteOptions{
			WriteOptions:  store.WriteOptions{FieldManager: i.opts.FieldManager},
			Preconditions: store.Preconditions{UID: &uid}})
		if err != nil && !errors.Is(err, resource.ErrNotFound) && !errors.Is(err, resource.ErrConflict) {
			return n, err
		}
		if err == nil {
			n++
		}
	}
	return n, nil
}

// markMinter records on a token record the AccessKey it is minted with: the label
// LabelMintedBy (the key's uid) and the annotation AnnotationAccessKey (its name), or
// neither when the caller names no key. Whatever the request carried is replaced.
func markMinter(m *resource.ObjectMeta, c Caller) {
	if c.AccessKeyUID == "" {
		delete(m.Labels, LabelMintedBy)
		delete(m.Annotations, AnnotationAccessKey)
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[LabelMintedBy] = c.AccessKeyUID
	if c.AccessKey != "" {
		m.Annotations[AnnotationAccessKey] = c.AccessKey
	} else {
		delete(m.Annotations, AnnotationAccessKey)
	}
}

// subject is the token's "sub" for a caller.
func subject(c Caller) string {
	if c.Kind == "" {
		return c.Name
	}
	return c.Kind + ":" + c.Name
}

func copyScope(s *resource.AccessKeyScope) (*resource.AccessKeyScope, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("token: copy scope: %w", err)
	}
	out := &resource.AccessKeyScope{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("token: copy scope: %w", err)
	}
	return out, nil
}

func humanDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		n := int64(d / (24 * time.Hour))
		if n == 1 {
			return "1 day"
		}
		return strconv.FormatInt(n, 10) + " days"
	}
	return d.String()
}
