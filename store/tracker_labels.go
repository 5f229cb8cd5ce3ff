package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/management-service/mgmt/resource"
)

// The tracker's label index as List uses it: the keys of the objects carrying a
// label, at a revision the index has reached.

// keysWithLabel waits until the index has seen revision minRev, then returns, sorted,
// the keys under prefix whose objects carry label=value at the index's revision, and
// that revision. Reading those keys at that revision gives a consistent list.
func (t *tracker) keysWithLabel(ctx context.Context, prefix, label, value string, minRev int64) ([]string, int64, error) {
	for {
		t.mu.Lock()
		if t.rev >= minRev {
			var keys []string
			for k := range t.labels[label+"\x00"+value] {
				if strings.HasPrefix(k, prefix) {
					keys = append(keys, k)
				}
			}
			rev := t.rev
			t.mu.Unlock()
			sort.Strings(keys)
			return keys, rev, nil
		}
		if t.stalled {
			// The index does not follow the backend: say so rather than wait for it.
			err := t.fault
			t.mu.Unlock()
			return nil, 0, resource.NewServiceUnavailable("store: label index does not follow the backend: " + err.Error()).
				WithCause(fmt.Errorf("%w: %w", ErrBackground, err))
		}
		ch := t.changedLocked()
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, 0, backendError(ctx.Err())
		}
	}
}
