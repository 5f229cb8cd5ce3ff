package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
)

// heldRanges is a backend whose ranges over object keys (every key starts with "/")
// wait until release: a store opened over it must start and serve reads of single
// objects without reading its objects in bulk.
type heldRanges struct {
	backend.Backend
	released chan struct{}
	once     sync.Once

	mu   sync.Mutex
	held []string // prefixes of the ranges that waited
}

func (b *heldRanges) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	if opts.Prefix == "" || strings.HasPrefix(opts.Prefix, "/") {
		b.mu.Lock()
		b.held = append(b.held, opts.Prefix)
		b.mu.Unlock()
		select {
		case <-b.released:
		case <-ctx.Done():
			return backend.RangeResult{}, ctx.Err()
		}
	}
	return b.Backend.Range(ctx, opts)
}

func (b *heldRanges) release() { b.once.Do(func() { close(b.released) }) }

func openCases() []storeCase {
	return []storeCase{
		{name: "open a store over existing objects serves a get before it reads the objects in bulk", run: func(t *testing.T, h *Harness) {
			// Some objects, one with an owner (which keeps a record beside it).
			for i := range 60 {
				h.MustCreate(Instance("p-open", fmtName("v", i)))
			}
			owner := Instance("p-open", "v-000")
			require.NoError(t, h.S.Get(h.Ctx, "p-open", "v-000", owner, store.GetOptions{}))
			owned := Instance("p-open", "owned")
			owned.OwnerReferences = []resource.OwnerReference{{APIVersion: "management.service/v1", Kind: "VirtualClusterInstance", Name: owner.Name, UID: owner.UID}}
			h.MustCreate(owned)
			h.Settle()

			held := &heldRanges{Backend: h.B, released: make(chan struct{})}
			t.Cleanup(held.release)
			opened := make(chan error, 1)
			var s2 *store.Store
			go func() {
				var err error
				s2, err = store.New(held, store.Options{Clock: h.Clock})
				opened <- err
			}()
			select {
			case err := <-opened:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				held.release()
				t.Fatal("store.New waited for a range over the objects")
			}
			defer func() {
				held.release()
				ctx, cancel := context.WithTimeout(h.Ctx, 20*time.Second)
				defer cancel()
				assert.NoError(t, s2.Settle(ctx))
				_ = s2.Close()
			}()
			got := &resource.VirtualClusterInstance{}
			require.NoError(t, s2.Get(h.Ctx, "p-open", "v-042", got, store.GetOptions{}))
			assert.Equal(t, "v-042", got.Name)

			// Once the bulk reads may go on, the new store lists and selects
			// everything, and finds the owned object's owner.
			held.release()
			ctx, cancel := context.WithTimeout(h.Ctx, 20*time.Second)
			defer cancel()
			require.NoError(t, s2.Settle(ctx))
			held.mu.Lock()
			assert.NotEmpty(t, held.held, "the store read the objects in bulk in the background")
			held.mu.Unlock()
			list := &resource.VirtualClusterInstanceList{}
			require.NoError(t, s2.List(ctx, list, store.ListOptions{}))
			assert.Len(t, list.Items, 61)
			require.NoError(t, s2.Get(ctx, "p-open", "owned", got, store.GetOptions{}))
			assert.Equal(t, owner.UID, got.OwnerReferences[0].UID)
		}},
	}
}
