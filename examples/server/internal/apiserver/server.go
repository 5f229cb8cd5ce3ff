package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/token"
)

// DefaultBasePath is the path under which the API is served, as the spec has it.
const DefaultBasePath = "/kubernetes/management"

// Config is what a Server is built from. Store, Issuer and Migrator are required; the
// zero value of every other field is its default.
type Config struct {
	// Store keeps the objects. Build it with [AccessKeyAdmitter] among its mutating
	// hooks, the schema package's admitter among its validating hooks and
	// [OwnerAuthorizer] as its OwnerAuthorizer.
	Store *store.Store
	// Schemas are the JSON Schemas the OpenAPI document is generated from; nil means
	// schema.NewRegistry().
	Schemas *schema.Registry
	// Issuer issues DirectClusterEndpointTokens.
	Issuer *token.Issuer
	// Discovery is the OpenID-style discovery document of the token issuer, served at
	// token.DiscoveryPath; nil serves 404 there.
	Discovery *token.Discovery
	// Migrator moves virtual cluster instances between projects.
	Migrator *migrate.Service
	// NamespacePrefix is the prefix of a project's namespace; "" means "p-".
	NamespacePrefix string
	// BasePath is the path the API is served under; "" means DefaultBasePath.
	BasePath string
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the requests served at
	// once; 0 means httpapi's defaults.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// Now is the clock used for access key expiry; nil means the store's clock.
	Now func() time.Time
	// Logger receives a line per failed (5xx) request and the key cache's errors; nil
	// discards.
	Logger *slog.Logger
	// NonResource are extra authenticated endpoints (httpapi.Config.NonResource).
	NonResource map[string]http.Handler
	// OnRequest hears of every answered request (httpapi.Config.OnRequest).
	OnRequest func(httpapi.RequestInfo)
}

// Server is the management API's HTTP handler: package httpapi serving the
// management kinds, with access keys for authentication and their scopes for
// authorization. Close stops its key cache and ends its watches.
type Server struct {
	*httpapi.Server
	cfg      Config
	store    *store.Store
	prefix   string
	now      func() time.Time
	keys     *keyCache
	stop     chan struct{}
	stopOnce sync.Once
	bg       sync.WaitGroup
}

// New returns the handler of the management API and starts its access key cache.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Issuer == nil || cfg.Migrator == nil {
		return nil, errors.New("apiserver: Config.Store, Config.Issuer and Config.Migrator are required")
	}
	s := &Server{cfg: cfg, store: cfg.Store, stop: make(chan struct{})}
	s.prefix = cfg.NamespacePrefix
	if s.prefix == "" {
		s.prefix = resource.DefaultProjectNamespacePrefix
	}
	base := cfg.BasePath
	if base == "" {
		base = DefaultBasePath
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.now = cfg.Now
	if s.now == nil {
		s.now = cfg.Store.Clock().Now
	}
	s.keys = newKeyCache(cfg.Store, log)
	public := map[string]http.Handler{token.JWKSPath: http.HandlerFunc(s.serveJWKS)}
	if cfg.Discovery != nil {
		public[token.DiscoveryPath] = http.HandlerFunc(s.serveDiscovery)
	}
	h, err := httpapi.New(httpapi.Config{
		Store:                       cfg.Store,
		Resources:                   s.resources(),
		Schemas:                     cfg.Schemas,
		Authenticator:               httpapi.BearerAuthenticator(s.authenticate),
		Authorizer:                  httpapi.AuthorizerFunc(s.authorize),
		Public:                      public,
		Ready:                       s.keys.ready,
		Title:                       "management.service",
		BasePath:                    base,
		MaxRequestsInFlight:         cfg.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: cfg.MaxMutatingRequestsInFlight,
		Logger:                      log,
		NonResource:                 cfg.NonResource,
		OnRequest:                   cfg.OnRequest,
	})
	if err != nil {
		return nil, err
	}
	s.Server = h
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.keys.run(s.stop)
	}()
	return s, nil
}

// resources are the management API's resources with the verbs of decisions §1.
func (s *Server) resources() []httpapi.Resource {
	g, v := resource.Group, resource.Version
	cat := []string{"management"}
	return []httpapi.Resource{
		{Group: g, Version: v, Resource: "projects", ShortNames: []string{"proj"}, Categories: cat,
			Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			Subresources: []httpapi.Subresource{{Name: "migratevirtualclusterinstance",
				Description: "move a VirtualClusterInstance into the project {name}", Create: s.migrate}}},
		{Group: g, Version: v, Resource: "virtualclusterinstances", ShortNames: []string{"vci"}, Categories: cat,
			Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			// Patching the status subresource needs a status patch in the store, which it
			// does not have; status is written with a PUT.
			StatusVerbs: []string{"get", "update"}},
		{Group: g, Version: v, Resource: "accesskeys", ShortNames: []string{"ak"}, Categories: cat,
			Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update"}},
		{Group: g, Version: v, Resource: "directclusterendpointtokens", ShortNames: []string{"dcet"}, Categories: cat,
			Verbs: []string{"create", "delete", "deletecollection", "get", "list"}, Create: s.issue},
	}
}

// migrate answers POST projects/<name>/migratevirtualclusterinstance.
func (s *Server) migrate(ctx context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
	body, ok := req.Object.(*resource.ProjectMigrateVirtualClusterInstance)
	if !ok {
		return nil, resource.NewInternalError(fmt.Errorf("decoded %T for a move", req.Object))
	}
	c := callerOf(req.Write.User)
	if c == nil {
		return nil, unauthorized("no access key")
	}
	return s.cfg.Migrator.Migrate(ctx, req.Name, body,
		migrate.Caller{User: req.Write.User, Authorizer: migrate.AuthorizerFunc(c.allowed)},
		migrate.RequestOptions{DryRun: req.Write.DryRun, FieldManager: req.Write.FieldManager})
}

// issue answers a create of a DirectClusterEndpointToken.
func (s *Server) issue(ctx context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
	body, ok := req.Object.(*resource.DirectClusterEndpointToken)
	if !ok {
		return nil, resource.NewInternalError(fmt.Errorf("decoded %T for a token", req.Object))
	}
	c := callerOf(req.Write.User)
	if c == nil {
		return nil, unauthorized("no access key")
	}
	tc, err := s.tokenCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Issuer.Issue(ctx, body, tc, token.IssueOptions{WriteOptions: req.Write})
	if err != nil {
		return nil, token.StatusFor(err)
	}
	return res, nil
}

// Close stops the access key cache and ends every open watch. It does not close the
// store.
func (s *Server) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.bg.Wait()
	return s.Server.Close()
}

// serveJWKS serves the token issuer's public keys, for connected clusters to verify
// tokens offline.
func (s *Server) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.cfg.Issuer.Keys().JWKS())
}

// serveDiscovery serves the token issuer's OpenID-style discovery document.
func (s *Server) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	b, err := s.cfg.Discovery.JSON()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Content-Type", resource.MediaTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
