package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/token"
)

// HashKey returns the stored form of an access key's secret: "sha256:" and the hex
// SHA-256 of the key. Keys are high-entropy random strings, so an unsalted hash does;
// the server compares hashes, never keys.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// caller is an authenticated request's access key.
type caller struct {
	key    *resource.AccessKey
	scope  *policy.Compiled
	expiry time.Time // zero: never
	user   *store.UserInfo
}

// subject is who the key acts for: spec.subject, else the key itself.
func (c *caller) subject() string {
	if c.key.Spec.Subject != "" {
		return c.key.Spec.Subject
	}
	return c.key.Name
}

// callerOf returns the caller a store.UserInfo was made for, or nil.
func callerOf(u *store.UserInfo) *caller {
	if u == nil {
		return nil
	}
	c, _ := u.Extra.(*caller)
	return c
}

func unauthorized(msg string) error {
	return resource.NewUnauthorized("Unauthorized: " + msg)
}

// authenticate finds the access key of a bearer token: 401 when it names no key, or
// an expired or terminating one.
func (s *Server) authenticate(ctx context.Context, tok string) (*store.UserInfo, error) {
	arrived := time.Now()
	e := s.keys.lookup(ctx, HashKey(tok), arrived)
	if e == nil {
		return nil, unauthorized("invalid bearer token")
	}
	k := e.key
	var expiry time.Time
	if k.Spec.TTL > 0 {
		expiry = k.CreationTimestamp.Add(time.Duration(k.Spec.TTL) * time.Second)
		if !s.now().Before(expiry) {
			return nil, unauthorized("the access key has expired")
		}
	}
	if k.DeletionTimestamp != nil {
		return nil, unauthorized("the access key is being deleted")
	}
	c := &caller{key: k, scope: e.scope, expiry: expiry}
	c.user = &store.UserInfo{Name: c.subject(), UID: string(k.UID), Extra: c}
	return c.user, nil
}

// policyRequest describes a request the way package policy reads requests.
func (s *Server) policyRequest(a httpapi.Attributes) policy.Request {
	if a.Path != "" {
		return policy.Request{Verb: "get", Path: a.Path, Target: resource.RequestTargetManagement}
	}
	req := policy.Request{
		Verb:        a.Verb,
		APIGroup:    a.APIGroup,
		Resource:    a.Resource,
		Subresource: a.Subresource,
		Name:        a.Name,
		Namespace:   a.Namespace,
		Target:      resource.RequestTargetManagement,
	}
	req.Project = s.projectOf(req.Resource, req.Name, req.Namespace)
	return req
}

// projectOf is the project a Management request is about: the Project object itself,
// or the project whose namespace the request is in.
func (s *Server) projectOf(res, name, namespace string) string {
	if res == "projects" && namespace == "" {
		return name
	}
	if p, ok := strings.CutPrefix(namespace, s.prefix); ok {
		return p
	}
	return ""
}

// authorize decides the request with the caller's scope: 403 naming the reason when
// the scope does not allow it.
func (s *Server) authorize(_ context.Context, user *store.UserInfo, a httpapi.Attributes) (httpapi.Decision, error) {
	c := callerOf(user)
	if c == nil {
		return httpapi.Decision{}, unauthorized("no access key")
	}
	req := s.policyRequest(a)
	if c.scope != nil && c.scope.Evaluate(req).Allowed {
		return httpapi.Decision{}, nil
	}
	reason := "the access key's scope is invalid and allows nothing"
	if c.scope != nil {
		reason = c.scope.Explain(req).Reason
	}
	msg := fmt.Sprintf("access key %q cannot %s: %s", c.key.Name, req.String(), reason)
	if a.Path != "" {
		return httpapi.Decision{}, resource.NewStatusError(resource.ReasonForbidden, "forbidden: "+msg)
	}
	k, ok := s.store.Scheme().KindForResource(a.APIGroup, a.APIVersion, a.Resource)
	if !ok {
		return httpapi.Decision{}, resource.NewStatusError(resource.ReasonForbidden, "forbidden: "+msg)
	}
	return httpapi.Decision{}, resource.NewForbidden(k, a.Name, msg)
}

// allowed answers the rights a move exercises with the caller's scope (a
// migrate.AuthorizerFunc).
func (c *caller) allowed(_ context.Context, req policy.Request) (bool, string) {
	if c.scope == nil {
		return false, "the access key's scope is invalid and allows nothing"
	}
	if d := c.scope.Evaluate(req); d.Allowed {
		return true, ""
	}
	return false, c.scope.Explain(req).Reason
}

// tokenCaller is the token issuer's view of the caller: its subject, scope, token
// generation and the expiry of its key.
func (s *Server) tokenCaller(ctx context.Context, c *caller) (token.Caller, error) {
	tc := token.Caller{Scope: c.key.Spec.Scope, KeyExpiry: c.expiry}
	if c.key.Spec.Subject == "" {
		tc.Kind, tc.Name, tc.UID = token.SubjectKindAccessKey, c.key.Name, string(c.key.UID)
		tc.TokenGeneration = c.key.Spec.TokenGeneration
		return tc, nil
	}
	tc.Kind, tc.Name = "User", c.key.Spec.Subject
	gen, err := token.SubjectGeneration(ctx, s.store, tc.Kind, tc.Name, "")
	if err != nil {
		return tc, err
	}
	tc.TokenGeneration = gen
	return tc, nil
}
