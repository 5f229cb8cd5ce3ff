package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
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
	kv, err := s.b.Get(ctx, objectKey(k, namespace, name), 0)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return resource.NewNotFound(k, name)
	}
	if err != nil {
		return backendError(err)
	}
	return s.decodeTo(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision, out)
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
