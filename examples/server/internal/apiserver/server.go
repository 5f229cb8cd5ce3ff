package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/token"
)

// DefaultBasePath is the path under which the API is served, as the spec has it.
const DefaultBasePath = "/kubernetes/management"

// Config is what the management API's handler is built from. Every field but the
// limits, Logger, NonResource and OnRequest is required.
type Config struct {
	// Store keeps the objects; build it with the hooks of token and migrate (see the
	// app package).
	Store *store.Store
	// Schemas are the JSON Schemas the OpenAPI documents are generated from.
	Schemas *schema.Registry
	// Authenticator authenticates access keys; Authorizer decides with their scopes.
	Authenticator *token.Authenticator
	Authorizer    *token.Authorizer
	// Issuer issues DirectClusterEndpointTokens; Discovery is its OpenID-style
	// discovery document.
	Issuer    *token.Issuer
	Discovery *token.Discovery
	// Migrator moves virtual cluster instances between projects.
	Migrator *migrate.Service
	// BasePath is the path the API is served under; "" means DefaultBasePath.
	BasePath string
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the requests served at
	// once; 0 means httpapi's defaults.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// Logger receives a line per failed (5xx) request; nil discards.
	Logger *slog.Logger
	// NonResource are extra authenticated endpoints (httpapi.Config.NonResource).
	NonResource map[string]http.Handler
	// OnRequest hears of every answered request (httpapi.Config.OnRequest).
	OnRequest func(httpapi.RequestInfo)
}

// New returns the management API's handler: httpapi serving the management kinds with
// the verbs of decisions §1, access keys for authentication and their scopes for
// authorization, the token issuer behind DirectClusterEndpointToken creates, JWKS and
// OpenID discovery, and the move as the subresource of projects.
func New(cfg Config) (*httpapi.Server, error) {
	if cfg.Store == nil || cfg.Schemas == nil || cfg.Authenticator == nil || cfg.Authorizer == nil ||
		cfg.Issuer == nil || cfg.Discovery == nil || cfg.Migrator == nil {
		return nil, errors.New("apiserver: Store, Schemas, Authenticator, Authorizer, Issuer, Discovery and Migrator are required")
	}
	base := cfg.BasePath
	if base == "" {
		base = DefaultBasePath
	}
	return httpapi.New(httpapi.Config{
		Store:                       cfg.Store,
		Resources:                   resources(cfg),
		Schemas:                     cfg.Schemas,
		Authenticator:               cfg.Authenticator.HTTP(),
		Authorizer:                  cfg.Authorizer.HTTP(),
		Public:                      map[string]http.Handler{token.JWKSPath: cfg.Issuer.Keys().JWKSHandler(), token.DiscoveryPath: cfg.Discovery.Handler()},
		NonResource:                 cfg.NonResource,
		Title:                       "management.service",
		BasePath:                    base,
		MaxRequestsInFlight:         cfg.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: cfg.MaxMutatingRequestsInFlight,
		Logger:                      cfg.Logger,
		OnRequest:                   cfg.OnRequest,
		// Ready while the store's background work follows the backend (its label
		// index, reaper and garbage collector).
		Ready: func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
			defer cancel()
			return cfg.Store.Healthy(ctx) == nil
		},
	})
}

// readyTimeout bounds the backend read of a readiness check.
const readyTimeout = 2 * time.Second

// resources are the management API's resources with the verbs of decisions §1.
func resources(cfg Config) []httpapi.Resource {
	g, v := resource.Group, resource.Version
	cat := []string{"management"}
	// A move asks the caller's key for the rights it exercises (create in the target,
	// delete in the source).
	moveRights := func(user *store.UserInfo) migrate.Authorizer {
		return migrate.AuthorizerFunc(func(ctx context.Context, req policy.Request) (bool, string) {
			if _, err := cfg.Authorizer.Authorize(ctx, user, req); err != nil {
				return false, resource.StatusOf(err).Message
			}
			return true, ""
		})
	}
	return []httpapi.Resource{
		{Group: g, Version: v, Resource: "projects", ShortNames: []string{"proj"}, Categories: cat,
			Verbs:        []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			Subresources: []httpapi.Subresource{cfg.Migrator.Subresource(moveRights)},
			Columns:      migrate.ProjectColumns()},
		{Group: g, Version: v, Resource: "virtualclusterinstances", ShortNames: []string{"vci"}, Categories: cat,
			Verbs:   []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			Columns: migrate.InstanceColumns(cfg.Migrator.ProjectNamespace(""))},
		{Group: g, Version: v, Resource: "accesskeys", ShortNames: []string{"ak"}, Categories: cat,
			Verbs:   []string{"create", "delete", "deletecollection", "get", "list", "patch", "update"},
			Columns: token.AccessKeyColumns()},
		{Group: g, Version: v, Resource: "directclusterendpointtokens", ShortNames: []string{"dcet"}, Categories: cat,
			Verbs: []string{"create", "delete", "deletecollection", "get", "list"}, Create: cfg.Issuer.CreateFunc(cfg.Store),
			Columns: token.TokenColumns()},
	}
}
