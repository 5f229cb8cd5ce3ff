package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// Store keeps objects with Kubernetes metadata semantics on top of a
// [backend.Backend]. It is safe for concurrent use. Build it with [New]; the zero value
// is not usable.
type Store struct {
	b       backend.Backend
	scheme  *resource.Scheme
	clock   Clock
	opts    Options
	log     *slog.Logger
	newUID  func() string
	suffix  func(n int) string
	maxSize int

	closeOnce sync.Once
	stop      context.CancelFunc
	bg        sync.WaitGroup
	track     *tracker
	cache     *objcodec.Cache
	types     kindTypes // the field types of server-side apply and managedFields (apply_types.go)

	hubMu     sync.Mutex
	watchHub  *watchHub // nil until the first watch that uses it
	hubClosed bool
	// hubFallback, set by tests (SetHubFallback) before the first watch, learns of
	// every watch that leaves the hub, and how many events of its current revision
	// it had looked at.
	hubFallback func(skip int)
}

// New returns a store over b. It starts the store's background work (the reaper of
// expired grace periods and the garbage collector), which [Store.Close] stops.
func New(b backend.Backend, opts Options) (*Store, error) {
	if b == nil {
		return nil, errors.New("store: backend is nil")
	}
	s := &Store{b: b, opts: opts, scheme: opts.Scheme, clock: opts.Clock, log: opts.Logger,
		newUID: opts.NewUID, suffix: opts.RandomSuffix, maxSize: opts.MaxObjectBytes}
	if s.scheme == nil {
		s.scheme = resource.NewScheme()
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.newUID == nil {
		s.newUID = randomUUID
	}
	if s.suffix == nil {
		s.suffix = randomSuffix
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxObjectBytes
	}
	if s.opts.WatchBuffer <= 0 {
		s.opts.WatchBuffer = 100
	}
	if s.opts.WatchCacheEvents <= 0 {
		s.opts.WatchCacheEvents = 1024
	}
	if s.opts.WatchCacheBytes == 0 {
		s.opts.WatchCacheBytes = DefaultWatchCacheBytes
	}
	if s.opts.BookmarkInterval <= 0 {
		s.opts.BookmarkInterval = 60e9
	}
	if s.opts.MaxUpdateRetries <= 0 {
		s.opts.MaxUpdateRetries = 64
	}
	s.cache = newObjectCache(s.opts)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	t, err := newTracker(ctx, s)
	if err != nil {
		cancel()
		return nil, err
	}
	s.track = t
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.track.run(ctx)
	}()
	if opts.Elector != nil {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			s.track.campaign(ctx, opts.Elector)
		}()
	}
	return s, nil
}

// Close stops the store's background work. It does not close the backend, which the
// caller opened and closes.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		s.bg.Wait()
		s.closeHub()
	})
	return nil
}

// ErrBackground is wrapped by the errors [Store.Healthy] returns when the store's
// background work (the index its label lists, reaper and garbage collector use) does
// not follow the backend, or the reaper or the collector fails.
var ErrBackground = errors.New("store: background work is not keeping up")

// Healthy reports whether the store can serve and its background work keeps up: nil,
// or a 503 ServiceUnavailable error wrapping [ErrBackground] and the cause when the
// index does not follow the backend (its watch ended or fell behind the history the
// backend keeps and the index is being rebuilt, the backend fails or is closed), when
// the last step of the label index's build failed, or when the last pass of the
// reaper or the garbage collector failed. It also asks the
// backend for its revision. A host's readiness check calls it; the store retries
// failed background work by itself, and Healthy turns nil again once it succeeds.
func (s *Store) Healthy(ctx context.Context) error {
	t := s.track
	t.mu.Lock()
	fault, labels, work, rebuilding := t.fault, t.labelFault, t.workFault, t.rebuilding
	t.mu.Unlock()
	switch {
	case fault != nil:
		return resource.NewServiceUnavailable("store: index does not follow the backend: " + fault.Error()).
			WithCause(fmt.Errorf("%w: %w", ErrBackground, fault))
	case labels != nil:
		return resource.NewServiceUnavailable("store: building the label index: " + labels.Error()).
			WithCause(fmt.Errorf("%w: %w", ErrBackground, labels))
	case rebuilding:
		return resource.NewServiceUnavailable("store: index is being rebuilt").WithCause(ErrBackground)
	case work != nil:
		return resource.NewServiceUnavailable("store: " + work.Error()).
			WithCause(fmt.Errorf("%w: %w", ErrBackground, work))
	}
	if _, err := s.b.Revision(ctx); err != nil {
		return backendError(err)
	}
	return nil
}

// Scheme returns the kinds the store knows.
func (s *Store) Scheme() *resource.Scheme { return s.scheme }

// Backend returns the backend the store writes to.
func (s *Store) Backend() backend.Backend { return s.b }

// Clock returns the store's clock.
func (s *Store) Clock() Clock { return s.clock }

// kindOf returns the registered kind of obj.
func (s *Store) kindOf(obj resource.Object) (*resource.KindInfo, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, resource.NewBadRequest("store: object is nil")
	}
	k, err := s.scheme.KindOf(obj)
	if err != nil {
		return nil, resource.NewBadRequest(err.Error()).WithCause(err)
	}
	tm := obj.GetTypeMeta()
	if (tm.Kind != "" && tm.Kind != k.Kind) || (tm.APIVersion != "" && tm.APIVersion != k.APIVersion()) {
		return nil, resource.NewBadRequest(fmt.Sprintf(
			"the object's kind %q and apiVersion %q do not match its Go type (%s)", tm.Kind, tm.APIVersion, k.GVK()))
	}
	return k, nil
}

// keyPrefix is "/<group>/<resource>/": every object of a kind.
func keyPrefix(k *resource.KindInfo) string {
	g := k.Group
	if g == "" {
		g = "core"
	}
	return "/" + g + "/" + k.Resource + "/"
}

// nsPrefix is the prefix of the objects of a kind in one namespace ("" = all).
func nsPrefix(k *resource.KindInfo, namespace string) string {
	if !k.Namespaced || namespace == "" {
		return keyPrefix(k)
	}
	return keyPrefix(k) + namespace + "/"
}

// objectKey is the backend key of one object.
func objectKey(k *resource.KindInfo, namespace, name string) string {
	// keyPrefix, written out so that the key is built in one allocation.
	g := k.Group
	if g == "" {
		g = "core"
	}
	if k.Namespaced {
		return "/" + g + "/" + k.Resource + "/" + namespace + "/" + name
	}
	return "/" + g + "/" + k.Resource + "/" + name
}

// normalizeNamespace applies the kind's scope to a requested namespace.
func normalizeNamespace(k *resource.KindInfo, namespace string) string {
	if !k.Namespaced {
		return ""
	}
	if namespace == "" {
		return DefaultNamespace
	}
	return namespace
}

// checkKeyNames refuses names that cannot address an object, before any lookup.
func checkKeyNames(k *resource.KindInfo, namespace, name string) error {
	var errs resource.ErrorList
	if name == "" {
		errs = append(errs, resource.Required(resource.NewPath("metadata", "name"), "name is required"))
	} else {
		errs = append(errs, resource.ValidateName(name, resource.NewPath("metadata", "name"))...)
	}
	if k.Namespaced {
		errs = append(errs, resource.ValidateNamespaceName(namespace, resource.NewPath("metadata", "namespace"))...)
	}
	if len(errs) > 0 {
		return resource.NewInvalid(k, name, errs)
	}
	return nil
}

// formatRV writes a revision as a resourceVersion.
func formatRV(rev int64) string { return strconv.FormatInt(rev, 10) }

// parseRV reads a resourceVersion; "" is 0.
func parseRV(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, resource.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be a resourceVersion returned by this server", rv))
	}
	return n, nil
}

// encode writes obj as stored: JSON with resourceVersion left out (the revision is
// the backend's ModRevision) and apiVersion and kind set.
func (s *Store) encode(k *resource.KindInfo, obj resource.Object) ([]byte, error) {
	b, err := s.encodeUnchecked(k, obj)
	if err != nil {
		return nil, err
	}
	if len(b) > s.maxSize {
		return nil, s.tooLarge(k, obj.GetObjectMeta().Name, len(b))
	}
	return b, nil
}

// backendError maps a backend failure to a Status error.
func backendError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrCompacted):
		return resource.NewExpired("too old resource version: " + err.Error()).WithCause(err)
	case errors.Is(err, backend.ErrFutureRevision):
		e := resource.NewTimeout("Too large resource version: " + err.Error())
		e.ErrStatus.Details = &resource.StatusDetails{Causes: []resource.StatusCause{{
			Type: resource.CauseResourceVersionTooLarge, Message: "Too large resource version"}}}
		return e.WithCause(err)
	case errors.Is(err, backend.ErrClosed):
		return resource.NewServiceUnavailable("storage is closed").WithCause(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return resource.NewTimeout(err.Error()).WithCause(err)
	case errors.Is(err, backend.ErrTxnTooLarge):
		return resource.NewRequestEntityTooLarge(err.Error()).WithCause(err)
	}
	var se *resource.StatusError
	if errors.As(err, &se) {
		return err
	}
	return resource.NewInternalError(err)
}

func randomUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("store: crypto/rand failed: %v", err)) // never happens on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix(n int) string {
	var sb strings.Builder
	max := big.NewInt(int64(len(suffixAlphabet)))
	for i := 0; i < n; i++ {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("store: crypto/rand failed: %v", err))
		}
		sb.WriteByte(suffixAlphabet[v.Int64()])
	}
	return sb.String()
}
