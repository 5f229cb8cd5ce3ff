package backendkit

import (
	"fmt"

	"github.com/management-service/mgmt/store/backend"
)

// opsPairwise is the most ops whose keys ValidateTxn compares pairwise; beyond it,
// it uses a set.
const opsPairwise = 8

// ValidateTxn checks t before a backend looks at its data. Every Compare must have a
// key and a ModRevision of 0 or more; every Op must have a key, of at most maxKey
// bytes when maxKey is above 0; no key may appear in two Ops. The first violation is
// returned, wrapping [backend.ErrInvalidArgument]; Compares are checked before Ops.
func ValidateTxn(t backend.Txn, maxKey int) error {
	for i, c := range t.Compares {
		if c.Key == "" {
			return fmt.Errorf("%w: compare %d has an empty key", backend.ErrInvalidArgument, i)
		}
		if c.ModRevision < 0 {
			return fmt.Errorf("%w: compare %d has negative revision %d", backend.ErrInvalidArgument, i, c.ModRevision)
		}
	}
	var seen map[string]struct{} // only for many ops; a few are compared pairwise
	if len(t.Ops) > opsPairwise {
		seen = make(map[string]struct{}, len(t.Ops))
	}
	for i, op := range t.Ops {
		if op.Key == "" {
			return fmt.Errorf("%w: op %d has an empty key", backend.ErrInvalidArgument, i)
		}
		if maxKey > 0 && len(op.Key) > maxKey {
			return fmt.Errorf("%w: op %d has a key of %d bytes, more than %d", backend.ErrInvalidArgument, i, len(op.Key), maxKey)
		}
		dup := false
		if seen != nil {
			_, dup = seen[op.Key]
			seen[op.Key] = struct{}{}
		} else {
			for _, o := range t.Ops[:i] {
				dup = dup || o.Key == op.Key
			}
		}
		if dup {
			return fmt.Errorf("%w: key %q appears in two ops", backend.ErrInvalidArgument, op.Key)
		}
	}
	return nil
}

// FailedCompare evaluates compares in order: a [backend.Compare] holds when modRev,
// the ModRevision of its key in the state the backend reads (0 when the key does not
// exist), equals its ModRevision; a prefix compare holds when maxUnder, the greatest
// ModRevision of the keys under its prefix in that state (0 when there are none), is
// at most its ModRevision. It returns the index of the first one that does not hold,
// -1 when all hold, and stops at the first error, which it returns with -1. A prefix
// compare with a nil maxUnder is an error wrapping backend.ErrInvalidArgument.
func FailedCompare(compares []backend.Compare, modRev, maxUnder func(key string) (int64, error)) (int, error) {
	for i, c := range compares {
		if c.Prefix {
			if maxUnder == nil {
				return -1, fmt.Errorf("%w: compare %d is a prefix compare, which this backend does not support", backend.ErrInvalidArgument, i)
			}
			rev, err := maxUnder(c.Key)
			if err != nil {
				return -1, err
			}
			if rev > c.ModRevision {
				return i, nil
			}
			continue
		}
		rev, err := modRev(c.Key)
		if err != nil {
			return -1, err
		}
		if rev != c.ModRevision {
			return i, nil
		}
	}
	return -1, nil
}
