package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
)

// Defaults of Config.
const (
	// DefaultMaxRequestsInFlight bounds the non-mutating requests served at once, as
	// kube-apiserver's --max-requests-inflight does.
	DefaultMaxRequestsInFlight = 400
	// DefaultMaxMutatingRequestsInFlight bounds the mutating requests served at once.
	DefaultMaxMutatingRequestsInFlight = 200
	// DefaultMaxWatches bounds the watches open at once (they are not counted as
	// requests in flight, as in kube-apiserver, where they are long-running).
	DefaultMaxWatches = 1000
	// DefaultRequestTimeout bounds every request but a watch.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultWatchTimeout is how long a watch runs when the client names no
	// timeoutSeconds; MaxWatchTimeout caps what it may name.
	DefaultWatchTimeout = 30 * time.Minute
	// MaxWatchTimeout is the longest watch a client may ask for.
	MaxWatchTimeout = time.Hour
)

// Config is what a Server is built from. Store and Resources are required; the zero
// value of every other field is its default.
type Config struct {
	// Store keeps the objects.
	Store *store.Store
	// Resources are the resources served, each a kind of the store's scheme. Kinds of
	// the scheme not listed here are not reachable over HTTP.
	Resources []Resource
	// Codec reads request bodies and writes responses; nil means one over the store's
	// scheme with the default limits (3 MiB bodies).
	Codec *resource.Codec
	// Schemas are the JSON Schemas the OpenAPI documents are generated from; nil means
	// schema.NewRegistry(). Every served kind needs one.
	Schemas *schema.Registry
	// Authenticator finds the caller of each request; nil treats every caller as
	// anonymous (a nil *store.UserInfo).
	Authenticator Authenticator
	// Authorizer decides each request once its caller is known; nil allows everything
	// (AllowAll).
	Authorizer Authorizer
	// Public are extra endpoints below the base path served without authentication,
	// by path ("/openid/v1/jwks"), GET and HEAD only.
	Public map[string]http.Handler
	// NonResource are extra endpoints below the base path served to authenticated
	// callers the Authorizer allows (Attributes.Path, verb get), by path; GET and HEAD
	// only.
	NonResource map[string]http.Handler
	// Ready reports whether the server can answer /readyz with ok; nil means always.
	Ready func() bool
	// Title names the API in the OpenAPI documents; "" means the group's name.
	Title string
	// BasePath is the path the API is served under; "" serves it at the root.
	BasePath string
	// MaxRequestsInFlight bounds the non-mutating requests served at once; 0 means
	// DefaultMaxRequestsInFlight. A request over the bound is 429 with Retry-After.
	MaxRequestsInFlight int
	// MaxMutatingRequestsInFlight bounds the mutating requests; 0 means
	// DefaultMaxMutatingRequestsInFlight.
	MaxMutatingRequestsInFlight int
	// MaxWatches bounds the open watches; 0 means DefaultMaxWatches.
	MaxWatches int
	// RequestTimeout bounds every request but a watch; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Logger receives a line per failed (5xx) request; nil discards.
	Logger *slog.Logger
	// OnRequest, when set, is called once per request after it is answered (for an
	// access log and metrics); it must be quick and safe for concurrent use.
	OnRequest func(RequestInfo)
}

// RequestInfo describes an answered request to Config.OnRequest. It never holds a
// credential.
type RequestInfo struct {
	// Method and Path are the request's (the path without the query).
	Method, Path string
	// Verb is the API verb (get, list, watch, create, …); "" when the request did
	// not reach routing. Resource is "resource.group" with "/subresource" when there
	// is one, "" for a non-resource request.
	Verb, Resource string
	// User is the authenticated caller's name ("" before authentication, or for an
	// anonymous caller).
	User string
	// Code is the HTTP status answered, Bytes the body bytes written.
	Code  int
	Bytes int64
	// Duration is the time from arrival to the end of the answer (for a watch, its
	// whole life).
	Duration time.Duration
}

// Server is an http.Handler that serves a store's kinds with Kubernetes REST
// conventions. Build it with New; it is safe for concurrent use. Close ends its
// watches.
type Server struct {
	cfg      Config
	store    *store.Store
	codec    *resource.Codec
	scheme   *resource.Scheme
	base     string
	log      *slog.Logger
	authn    Authenticator
	authz    Authorizer
	served   map[string]*servedResource // by "group/version/resource"
	groups   []*servedGroup             // sorted by name
	readOnly chan struct{}
	mutating chan struct{}
	watches  chan struct{}

	stop     chan struct{}
	stopOnce sync.Once

	// documents encoded once, by path below the base path
	docs map[string]*document
}

// New returns the handler of the resources cfg names.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || len(cfg.Resources) == 0 {
		return nil, errors.New("httpapi: Config.Store and Config.Resources are required")
	}
	s := &Server{cfg: cfg, store: cfg.Store, scheme: cfg.Store.Scheme(), stop: make(chan struct{})}
	s.codec = cfg.Codec
	if s.codec == nil {
		s.codec = resource.NewCodec(s.scheme, resource.CodecOptions{})
	}
	s.base = strings.TrimSuffix(cfg.BasePath, "/")
	if s.base != "" && !strings.HasPrefix(s.base, "/") {
		return nil, fmt.Errorf("httpapi: BasePath %q must start with /", cfg.BasePath)
	}
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.authn = cfg.Authenticator
	if s.authn == nil {
		s.authn = AuthenticatorFunc(func(*http.Request) (*store.UserInfo, error) { return nil, nil })
	}
	s.authz = cfg.Authorizer
	if s.authz == nil {
		s.authz = AllowAll
	}
	n := func(v, d int) chan struct{} {
		if v <= 0 {
			v = d
		}
		return make(chan struct{}, v)
	}
	s.readOnly = n(cfg.MaxRequestsInFlight, DefaultMaxRequestsInFlight)
	s.mutating = n(cfg.MaxMutatingRequestsInFlight, DefaultMaxMutatingRequestsInFlight)
	s.watches = n(cfg.MaxWatches, DefaultMaxWatches)
	if s.cfg.RequestTimeout <= 0 {
		s.cfg.RequestTimeout = DefaultRequestTimeout
	}
	var err error
	if s.served, s.groups, err = servedResources(s.scheme, cfg.Resources); err != nil {
		return nil, err
	}
	reg := cfg.Schemas
	if reg == nil {
		reg = schema.NewRegistry()
	}
	if err := s.buildDocuments(reg); err != nil {
		return nil, err
	}
	return s, nil
}

// Close ends every open watch. It does not close the store.
func (s *Server) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	return nil
}

// Ready reports whether the server answers /readyz with ok (Config.Ready).
func (s *Server) Ready() bool { return s.cfg.Ready == nil || s.cfg.Ready() }

// InFlight returns the requests being served now: read-only ones, mutating ones and
// open watches.
func (s *Server) InFlight() (readOnly, mutating, watches int) {
	return len(s.readOnly), len(s.mutating), len(s.watches)
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &statusRecorder{ResponseWriter: w}
	if s.cfg.OnRequest != nil {
		start := time.Now()
		defer func() {
			code := rw.code
			if !rw.wroteHeader {
				code = http.StatusOK
			}
			rw.info.Method, rw.info.Path = r.Method, r.URL.Path
			rw.info.Code, rw.info.Bytes, rw.info.Duration = code, rw.bytes, time.Since(start)
			s.cfg.OnRequest(rw.info)
		}()
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !rw.wroteHeader {
				s.writeError(rw, r, resource.NewInternalError(fmt.Errorf("internal error")))
			}
		}
	}()
	s.serve(rw, r)
}

// serve runs the filters in order: path prefix, unauthenticated endpoints, in-flight
// limits, authentication, routing, authorization, then the handler.
func (s *Server) serve(w *statusRecorder, r *http.Request) {
	rest, ok := s.stripBase(r)
	if !ok {
		s.writeError(w, r, notFound())
		return
	}
	switch rest {
	case "/healthz", "/livez":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.writeError(w, r, methodNotAllowed(nil, r.Method))
			return
		}
		writeText(w, http.StatusOK, "ok")
		return
	case "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.writeError(w, r, methodNotAllowed(nil, r.Method))
			return
		}
		if !s.Ready() {
			s.writeError(w, r, resource.NewServiceUnavailable("the server is not ready yet"))
			return
		}
		writeText(w, http.StatusOK, "ok")
		return
	}
	if h, ok := s.cfg.Public[rest]; ok {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.writeError(w, r, methodNotAllowed(nil, r.Method))
			return
		}
		h.ServeHTTP(w, r)
		return
	}

	ri, err := s.parseRoute(r, rest)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	release, err := s.admit(ri)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()

	if ri.nonResource == "" {
		w.info.Verb, w.info.Resource = ri.verb, ri.res.kind.GroupResource()
		if ri.subresource != "" {
			w.info.Resource += "/" + ri.subresource
		}
	}
	user, err := s.authn.Authenticate(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if user != nil {
		w.info.User = user.Name
	}
	if isReview(ri.nonResource) {
		s.serveReview(w, r, ri, user)
		return
	}
	if err := ri.validateNames(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ri.parseQuery(r, s.fieldManagerFrom(r)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if ri.decision, err = s.authz.Authorize(r.Context(), user, ri.attributes()); err != nil {
		s.writeError(w, r, err)
		return
	}
	ri.user = user

	ctx := r.Context()
	if ri.verb != "watch" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
		// A slow client may not hold a request open past the timeout while it sends the
		// body.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout))
	}
	r = r.WithContext(ctx)
	if ri.nonResource != "" {
		s.serveNonResource(w, r, ri)
		return
	}
	s.serveResource(w, r, ri)
}

// stripBase returns the path below the base path, "" for the base path itself.
func (s *Server) stripBase(r *http.Request) (string, bool) {
	p := r.URL.EscapedPath()
	if s.base == "" {
		return p, strings.HasPrefix(p, "/")
	}
	rest, ok := strings.CutPrefix(p, s.base)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", false
	}
	return rest, true
}

// admit takes a slot of the in-flight bounds, or answers 429.
func (s *Server) admit(ri *route) (func(), error) {
	ch := s.readOnly
	switch {
	case ri.verb == "watch":
		ch = s.watches
	case ri.mutating():
		ch = s.mutating
	}
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	default:
		return nil, resource.NewTooManyRequests("too many requests, please try again later", 1)
	}
}

// fieldManagerFrom is the default field manager of a write: the product token of the
// User-Agent ("kubectl" of "kubectl/v1.32.4 (linux/amd64) kubernetes/..."), as
// kube-apiserver takes it, cut to the longest manager name and to printable ASCII.
func (s *Server) fieldManagerFrom(r *http.Request) string {
	ua := r.UserAgent()
	if i := strings.IndexAny(ua, "/ "); i >= 0 {
		ua = ua[:i]
	}
	b := make([]byte, 0, len(ua))
	for i := 0; i < len(ua) && len(b) < resource.MaxFieldManagerLength; i++ {
		if c := ua[i]; c > ' ' && c < 0x7f {
			b = append(b, c)
		}
	}
	return string(b)
}

// statusRecorder remembers whether a header was written, for the panic handler, and
// what the request was and got, for Config.OnRequest.
type statusRecorder struct {
	http.ResponseWriter
	wroteHeader bool
	code        int
	bytes       int64
	info        RequestInfo
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.wroteHeader, r.code = true, code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.wroteHeader, r.code = true, http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func writeText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}

func notFound() error {
	return resource.NewStatusError(resource.ReasonNotFound, "the server could not find the requested resource")
}

func methodNotAllowed(k *resource.KindInfo, method string) error {
	if k == nil {
		return resource.NewStatusError(resource.ReasonMethodNotAllowed,
			fmt.Sprintf("the server does not allow this method on the requested resource: %s", method))
	}
	return resource.NewMethodNotAllowed(k, method)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
