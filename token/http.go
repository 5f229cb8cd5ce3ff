package token

import (
	"context"
	"fmt"
	"net/http"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

// HTTP returns the access keys as the authentication of an httpapi server: the
// bearer secret of each request, authenticated with Authenticate.
func (a *Authenticator) HTTP() httpapi.Authenticator {
	return httpapi.BearerAuthenticator(a.Authenticate)
}

// HTTP returns the access keys' scopes as the authorization of an httpapi server:
// each request described as a policy.Request (target Management) and decided by
// Authorize, with Decision.Visible passed on.
func (a *Authorizer) HTTP() httpapi.Authorizer {
	return httpapi.AuthorizerFunc(func(ctx context.Context, user *store.UserInfo, at httpapi.Attributes) (httpapi.Decision, error) {
		d, err := a.Authorize(ctx, user, PolicyRequest(at))
		if err != nil {
			return httpapi.Decision{}, err
		}
		return httpapi.Decision{Visible: d.Visible}, nil
	})
}

// PolicyRequest describes an httpapi request the way package policy reads requests,
// as a request to the management API (Authorize fills in its project).
func PolicyRequest(at httpapi.Attributes) policy.Request {
	if at.Path != "" {
		return policy.Request{Verb: "get", Path: at.Path, Target: resource.RequestTargetManagement}
	}
	return policy.Request{Verb: at.Verb, APIGroup: at.APIGroup, Resource: at.Resource, Subresource: at.Subresource,
		Name: at.Name, Namespace: at.Namespace, Target: resource.RequestTargetManagement}
}

// CreateFunc returns the create of DirectClusterEndpointTokens for an httpapi server:
// the request's caller must be an access key ([IdentityOf]); the answer carries the
// token once. s is the store the caller's subject's token generation is read from.
func (i *Issuer) CreateFunc(s *store.Store) httpapi.CreateFunc {
	return func(ctx context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
		body, ok := req.Object.(*resource.DirectClusterEndpointToken)
		if !ok {
			return nil, resource.NewInternalError(fmt.Errorf("token: decoded %T for a token", req.Object))
		}
		id := IdentityOf(req.Write.User)
		if id == nil {
			return nil, resource.NewUnauthorized("Unauthorized: no authenticated access key")
		}
		c, err := id.TokenCaller(ctx, s, nil)
		if err != nil {
			return nil, err
		}
		res, err := i.Issue(ctx, body, c, IssueOptions{WriteOptions: req.Write})
		if err != nil {
			return nil, StatusFor(err)
		}
		return res, nil
	}
}

// JWKSHandler serves the key set's public keys (JWKSPath), for connected clusters to
// verify tokens offline; it needs no authentication.
func (k *KeySet) JWKSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(k.JWKS())
	})
}

// Handler serves the discovery document (DiscoveryPath); it needs no authentication.
func (d *Discovery) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, err := d.JSON()
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", resource.MediaTypeJSON)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	})
}
