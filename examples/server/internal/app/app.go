// Package app starts the example server: it parses the flags, opens the store (in
// memory, badger in --data-dir, or etcd with --etcd-endpoints), wires the library's packages together, loads the
// seed file, makes or loads the TLS certificate, prints the admin access key, writes
// the kubeconfig and serves until it is told to stop.
package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"github.com/management-service/mgmt/examples/server/internal/apiserver"
	"github.com/management-service/mgmt/examples/server/internal/metrics"
	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/httpapi"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/token"
)

// AdminKeyName is the name of the stored AccessKey of the admin key.
const AdminKeyName = "admin"

// Options are the settings of a server, one per flag.
type Options struct {
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// TLSCertFile and TLSKeyFile replace the self-signed pair.
	TLSCertFile, TLSKeyFile string
	// HTTP serves plain HTTP.
	HTTP bool
	// DataDir keeps the objects (badger) and the self-signed pair; "" keeps everything
	// in memory.
	DataDir string
	// Storage is a storage the server does not build in (etcd, from the nested module
	// examples/server/etcd); nil means memory or --data-dir.
	Storage *Storage
	// AccessKey is the admin access key; "" generates one.
	AccessKey string
	// Seed is a YAML file of objects to create at start.
	Seed string
	// NamespacePrefix is the prefix of project namespaces.
	NamespacePrefix string
	// TokenDefaultTTL and TokenMaxTTL bound DirectClusterEndpointTokens; 0 means the
	// token package's defaults.
	TokenDefaultTTL, TokenMaxTTL time.Duration
	// Kubeconfig is where the kubeconfig is written; "" writes none.
	Kubeconfig string
	// CAFile is where the self-signed certificate is written for curl --cacert; "" writes
	// none.
	CAFile string
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the requests served at
	// once; 0 means the defaults (400 and 200).
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// ReadHeaderTimeout bounds the time to read a request's headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// Logger receives the server's log and its access log; nil logs text to stderr.
	Logger *slog.Logger
	// LogFormat is "text" or "json", the format of the log Main makes.
	LogFormat string
	// Pprof is a loopback host:port to serve net/http/pprof on; "" serves none.
	Pprof string
}

// Storage is a storage the server does not build in, added by another command (the
// etcd one, in the nested module examples/server/etcd, so that the in-memory server
// builds without etcd's modules).
type Storage struct {
	// Flags adds the storage's flags to the command line.
	Flags func(fs *flag.FlagSet)
	// Check validates the storage's flags once parsed: set holds the flags given.
	Check func(set map[string]bool, o Options) error
	// Open returns the backend and its elector when the storage's flags select it; a
	// nil backend leaves the objects in memory or --data-dir.
	Open func(ctx context.Context, o Options) (backend.Backend, store.Elector, error)
}

// ParseFlags reads the command line into Options, with the flags of storage, if any.
func ParseFlags(args []string, stderr io.Writer, storage ...*Storage) (Options, error) {
	var o Options
	if len(storage) > 0 {
		o.Storage = storage[0]
	}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "host:port to listen on (port 0 picks a free one)")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "PEM certificate to serve instead of the self-signed one")
	fs.StringVar(&o.TLSKeyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.BoolVar(&o.HTTP, "http", false, "serve plain HTTP (for curl, or behind a TLS-terminating proxy)")
	fs.StringVar(&o.DataDir, "data-dir", "", "keep the objects (badger) and the self-signed certificate here; empty: in memory")
	fs.StringVar(&o.AccessKey, "access-key", "", "the admin access key to accept; empty: generate one and print it")
	fs.StringVar(&o.Seed, "seed", "", "YAML file of objects (documents separated by ---) to create at start")
	fs.StringVar(&o.NamespacePrefix, "project-namespace-prefix", resource.DefaultProjectNamespacePrefix, "prefix of a project's namespace")
	fs.DurationVar(&o.TokenDefaultTTL, "token-default-ttl", token.DefaultTTL, "lifetime of a DirectClusterEndpointToken without spec.ttl")
	fs.DurationVar(&o.TokenMaxTTL, "token-max-ttl", token.DefaultMaxTTL, "longest spec.ttl of a DirectClusterEndpointToken")
	fs.StringVar(&o.Kubeconfig, "write-kubeconfig", "./management.kubeconfig", "write a kubeconfig for the admin key here (empty: none)")
	fs.StringVar(&o.CAFile, "write-ca", "./management-ca.crt", "write the self-signed certificate here, for curl --cacert (empty: none)")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", httpapi.DefaultMaxRequestsInFlight, "non-mutating requests served at once (429 beyond)")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", httpapi.DefaultMaxMutatingRequestsInFlight, "mutating requests served at once (429 beyond)")
	if o.Storage != nil && o.Storage.Flags != nil {
		o.Storage.Flags(fs)
	}
	fs.StringVar(&o.LogFormat, "log-format", "text", "format of the log and the access log on stderr: text or json")
	fs.StringVar(&o.Pprof, "pprof", "", "serve net/http/pprof on this loopback host:port (e.g. 127.0.0.1:6060); empty: none")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.Storage != nil && o.Storage.Check != nil {
		if err := o.Storage.Check(set, o); err != nil {
			return o, err
		}
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		return o, fmt.Errorf("--log-format %q: want text or json", o.LogFormat)
	}
	if o.Pprof != "" {
		host, _, err := net.SplitHostPort(o.Pprof)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return o, fmt.Errorf("--pprof %q: want a loopback host:port such as 127.0.0.1:6060 (the profiler is not for the network)", o.Pprof)
		}
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return o, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	if o.HTTP && o.TLSCertFile != "" {
		return o, errors.New("--http and --tls-cert-file exclude each other")
	}
	return o, nil
}

// Server is a started server.
type Server struct {
	// URL is the API's URL: scheme, the address listened on, and the base path.
	URL string
	// AdminKey is the admin access key.
	AdminKey string
	// CACert is the PEM of the certificate served (nil for --http); a client trusts it
	// as its CA.
	CACert []byte
	// Kubeconfig and CAFile are the files written, if any.
	Kubeconfig, CAFile string
	// Store is the server's store (for tests).
	Store *store.Store
	// Handler is the API handler.
	Handler *httpapi.Server
	// Issuer issues the server's DirectClusterEndpointTokens (for tests that verify
	// them as a connected cluster would).
	Issuer *token.Issuer
	// Metrics are the server's metrics, served at /metrics.
	Metrics *metrics.Registry
	// PprofURL is where the profiler listens, if it does.
	PprofURL string

	httpServer *http.Server
	pprof      *http.Server
	stopRules  func()
	listener   net.Listener
	backend    backend.Backend
	serveErr   chan error
	cancel     context.CancelFunc
}

// Start opens the store, builds the server, loads the seed and starts serving. It
// returns once the server accepts connections.
func Start(ctx context.Context, o Options) (_ *Server, err error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	prefix := o.NamespacePrefix
	if prefix == "" {
		prefix = resource.DefaultProjectNamespacePrefix
	}
	srv := &Server{serveErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			if srv.pprof != nil {
				_ = srv.pprof.Close()
			}
			srv.closeStorage()
		}
	}()

	// Storage: an added one when its flags select it, badger in --data-dir, else
	// memory.
	var elector store.Elector
	if o.Storage != nil && o.Storage.Open != nil {
		if srv.backend, elector, err = o.Storage.Open(ctx, o); err != nil {
			return nil, err
		}
	}
	switch {
	case srv.backend != nil:
	case o.DataDir != "":
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return nil, err
		}
		// A 32 MiB memtable instead of badger's 64: badger allocates it on the Go
		// heap at open, where it also doubles the garbage collector's target, so it
		// was most of the server's memory at 10,000 objects (RSS 228 → 188 MiB). It
		// still takes a transaction of ~4.8 MB, three of the largest objects.
		b, err := badger.Open(filepath.Join(o.DataDir, "db"), badger.Options{MemTableSize: 32 << 20})
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", o.DataDir, err)
		}
		srv.backend = b
	default:
		srv.backend = memdb.New(memdb.Options{})
	}
	scheme := resource.NewScheme()
	if err := token.RegisterKinds(scheme); err != nil {
		return nil, err
	}
	reg := schema.NewRegistry()
	srv.Metrics = metrics.New()
	// The library's rules: access keys (token), projects and their instances
	// (migrate), the kinds' schemas.
	keyAdmission := token.NewAccessKeyAdmission()
	authz := token.NewAuthorizer(token.AuthorizerOptions{NamespacePrefix: prefix, Scheme: scheme})
	sopts := store.Options{
		Observer:        srv.Metrics,
		Scheme:          scheme,
		Mutating:        []store.MutatingAdmitter{keyAdmission},
		Validating:      []store.ValidatingAdmitter{schema.NewAdmitter(reg), keyAdmission},
		OwnerAuthorizer: authz,
		Logger:          log,
		Elector:         elector,
		FieldTypes:      reg, // server-side apply merges lists as the schemas declare
	}
	rules, err := migrate.InstallProjectRules(&sopts, migrate.ProjectRulesOptions{NamespacePrefix: prefix, Logger: log})
	if err != nil {
		return nil, err
	}
	st, err := store.New(srv.backend, sopts)
	if err != nil {
		return nil, err
	}
	if srv.stopRules, err = rules.Start(st); err != nil {
		_ = st.Close()
		return nil, err
	}
	srv.Store = st

	// Listen first: the printed URL, the token issuer and the certificate need the
	// real address.
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	srv.listener = ln
	host, _, _ := net.SplitHostPort(o.Addr)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	scheme_ := "https"
	if o.HTTP {
		scheme_ = "http"
	}
	base := apiserver.DefaultBasePath
	srv.URL = scheme_ + "://" + net.JoinHostPort(host, port) + base

	var tlsConfig *tls.Config
	if !o.HTTP {
		cert, pemCert, err := loadOrMakeCert(o, host)
		if err != nil {
			return nil, err
		}
		srv.CACert = pemCert
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	// Tokens: keys kept in the store, an issuer named after the URL.
	retention := time.Duration(0)
	if o.TokenMaxTTL > token.DefaultMaxTTL {
		retention = o.TokenMaxTTL + token.MaxLeeway
	}
	keys, err := token.OpenKeySet(ctx, st, token.KeySetOptions{Retention: retention})
	if err != nil {
		return nil, err
	}
	issuer, err := token.NewIssuer(st, keys, token.IssuerOptions{Issuer: srv.URL, DefaultTTL: o.TokenDefaultTTL, MaxTTL: o.TokenMaxTTL})
	if err != nil {
		return nil, err
	}
	srv.Issuer = issuer
	disco, err := token.NewDiscovery(keys, token.DiscoveryOptions{Issuer: srv.URL, AllowHTTP: o.HTTP})
	if err != nil {
		return nil, err
	}
	mig, err := migrate.New(st, migrate.Options{NamespacePrefix: prefix, Logger: log})
	if err != nil {
		return nil, err
	}

	// The admin key and the seed objects.
	srv.AdminKey = o.AccessKey
	if srv.AdminKey == "" {
		srv.AdminKey = newKey()
	}
	if err := ensureAdminKey(ctx, st, srv.AdminKey); err != nil {
		return nil, fmt.Errorf("storing the admin access key: %w", err)
	}
	if o.Seed != "" {
		if err := loadSeed(ctx, st, o.Seed); err != nil {
			return nil, fmt.Errorf("seed %s: %w", o.Seed, err)
		}
	}

	if _, err := token.AdoptLegacyHashes(ctx, st); err != nil {
		return nil, fmt.Errorf("moving access keys of an older server over: %w", err)
	}
	h, err := apiserver.New(apiserver.Config{
		Store: st, Schemas: reg, Issuer: issuer, Discovery: disco, Migrator: mig,
		Authenticator: token.NewAuthenticator(st, token.AuthenticatorOptions{}), Authorizer: authz,
		BasePath:            base,
		MaxRequestsInFlight: o.MaxRequestsInFlight, MaxMutatingRequestsInFlight: o.MaxMutatingRequestsInFlight,
		Logger:      log,
		NonResource: map[string]http.Handler{"/metrics": srv.Metrics},
		OnRequest: func(i httpapi.RequestInfo) {
			srv.Metrics.Request(i)
			log.Info("request", "method", i.Method, "path", i.Path, "verb", i.Verb, "resource", i.Resource,
				"user", i.User, "code", i.Code, "bytes", i.Bytes, "duration", i.Duration)
		},
	})
	if err != nil {
		return nil, err
	}
	srv.Handler = h
	srv.Metrics.Server(h)
	srv.Metrics.Store(st)
	if o.Pprof != "" {
		if err := srv.startPprof(o.Pprof, log); err != nil {
			return nil, err
		}
	}

	if o.Kubeconfig != "" {
		if err := writeKubeconfig(o.Kubeconfig, srv.URL, srv.CACert, srv.AdminKey); err != nil {
			return nil, err
		}
		srv.Kubeconfig = o.Kubeconfig
	}
	if o.CAFile != "" && srv.CACert != nil {
		if err := os.WriteFile(o.CAFile, srv.CACert, 0o644); err != nil {
			return nil, err
		}
		srv.CAFile = o.CAFile
	}

	bgCtx, cancel := context.WithCancel(context.Background())
	srv.cancel = cancel
	go expireTokens(bgCtx, issuer, log)

	rht := o.ReadHeaderTimeout
	if rht <= 0 {
		rht = 10 * time.Second
	}
	srv.httpServer = &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: rht,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		var err error
		if tlsConfig != nil {
			err = srv.httpServer.ServeTLS(ln, "", "")
		} else {
			err = srv.httpServer.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		srv.serveErr <- err
	}()
	return srv, nil
}

// Shutdown stops accepting requests, ends the watches, waits for the requests in
// flight (until ctx is done) and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	var err error
	if s.Handler != nil {
		_ = s.Handler.Close() // ends the watches, which would hold Shutdown
	}
	if s.pprof != nil {
		_ = s.pprof.Close()
	}
	if s.httpServer != nil {
		err = s.httpServer.Shutdown(ctx)
		if serr := <-s.serveErr; err == nil {
			err = serr
		}
	} else if s.listener != nil {
		_ = s.listener.Close()
	}
	if cerr := s.closeStorage(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) closeStorage() error {
	var err error
	if s.stopRules != nil {
		s.stopRules()
		s.stopRules = nil
	}
	if s.Store != nil {
		err = s.Store.Close()
		s.Store = nil
	}
	if s.backend != nil {
		if cerr := s.backend.Close(); err == nil {
			err = cerr
		}
		s.backend = nil
	}
	return err
}

// newKey returns a random access key: 32 bytes of crypto/rand, base64url.
func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ensureAdminKey stores the admin key as the AccessKey "admin" without a scope,
// replacing the secret of one that exists (a restart with --data-dir).
func ensureAdminKey(ctx context.Context, st *store.Store, key string) error {
	ak := &resource.AccessKey{
		ObjectMeta: resource.ObjectMeta{Name: AdminKeyName},
		Spec: resource.AccessKeySpec{DisplayName: "Admin", Description: "the example server's admin key",
			Subject: AdminKeyName, Key: key},
	}
	err := st.Create(ctx, ak, store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: "server"}})
	if !errors.Is(err, resource.ErrAlreadyExists) {
		return err
	}
	cur := &resource.AccessKey{}
	return st.GuaranteedUpdate(ctx, "", AdminKeyName, cur, func(obj resource.Object) error {
		k := obj.(*resource.AccessKey)
		k.Spec.Key, k.Spec.Scope, k.Spec.TTL = key, nil, 0
		return nil
	}, store.UpdateOptions{WriteOptions: store.WriteOptions{FieldManager: "server"}})
}

// expireTokens removes the records of expired tokens now and then.
func expireTokens(ctx context.Context, issuer *token.Issuer, log *slog.Logger) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := issuer.DeleteExpired(ctx); err != nil && ctx.Err() == nil {
				log.Warn("deleting expired token records failed", "error", err)
			} else if n > 0 {
				log.Info("deleted expired token records", "count", n)
			}
		}
	}
}

// Main runs the server until SIGINT or SIGTERM (ctx done): it prints the listening
// line and the admin key on stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, storage ...*Storage) error {
	o, err := ParseFlags(args, stderr, storage...)
	if err != nil {
		return err
	}
	if o.LogFormat == "json" {
		o.Logger = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", srv.URL)
	if srv.PprofURL != "" {
		fmt.Fprintf(stdout, "profiler: %s\n", srv.PprofURL)
	}
	if o.AccessKey == "" {
		fmt.Fprintf(stdout, "admin access key: %s\n", srv.AdminKey)
	} else {
		fmt.Fprintln(stdout, "admin access key: the one given with --access-key")
	}
	if srv.Kubeconfig != "" {
		fmt.Fprintf(stdout, "kubeconfig: %s  (kubectl --kubeconfig %s get projects)\n", srv.Kubeconfig, srv.Kubeconfig)
	}
	if srv.CAFile != "" {
		fmt.Fprintf(stdout, "certificate: %s  (curl --cacert %s -H \"Authorization: Bearer $KEY\" %s/version)\n",
			srv.CAFile, srv.CAFile, srv.URL)
	}
	select {
	case <-ctx.Done():
	case err := <-srv.serveErr:
		srv.serveErr <- err
	}
	fmt.Fprintln(stdout, "shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// startPprof serves net/http/pprof on its own loopback listener, apart from the API
// (no authentication there: loopback only).
func (s *Server) startPprof(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.PprofURL = "http://" + ln.Addr().String() + "/debug/pprof/"
	go func() {
		if err := s.pprof.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof listener stopped", "error", err)
		}
	}()
	return nil
}
