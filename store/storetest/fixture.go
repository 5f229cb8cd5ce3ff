package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// FixtureStart is the time a fixture's clock starts at.
var FixtureStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Fixture is a real [store.Store] over the memdb backend with a [FakeClock], for unit
// tests. It is the production code, not a fake: uid, resourceVersion, generation,
// finalizers, graceful deletion, garbage collection and watch behave exactly as in a
// deployed store.
type Fixture struct {
	// Store is the store under test; its methods are promoted.
	*store.Store
	// Clock is the store's clock; Step it to run grace periods out.
	Clock *FakeClock
	// Backend is the memdb backend under the store.
	Backend backend.Backend
	tb      testing.TB
}

// NewFixture returns a fixture holding the seed objects (created in order through
// Store.Create, which fills them in). opts may be nil; its Clock is replaced by the
// fixture's. On cleanup the fixture lets background work settle, checks the store's
// invariants (failing the test when one is broken) and closes the store.
// NewFixture fails the test, through tb.FailNow, when a seed object cannot be created.
func NewFixture(tb testing.TB, opts *store.Options, seed ...resource.Object) *Fixture {
	tb.Helper()
	var o store.Options
	if opts != nil {
		o = *opts
	}
	clock := NewFakeClock(FixtureStart)
	o.Clock = clock
	b := memdb.New(memdb.Options{})
	s, err := store.New(b, o)
	require.NoError(tb, err, "storetest: new store")
	f := &Fixture{Store: s, Clock: clock, Backend: b, tb: tb}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(tb, s.Settle(ctx), "storetest: store did not settle")
		assert.NoError(tb, CheckInvariants(ctx, s), "storetest: invariants")
		_ = s.Close()
		_ = b.Close()
	})
	ctx := context.Background()
	for i, obj := range seed {
		err := s.Create(ctx, obj, store.CreateOptions{})
		require.NoError(tb, err, "storetest: seed object %d (%T %q)", i, obj, obj.GetObjectMeta().Name)
	}
	return f
}

// Step moves the fixture's clock forward and waits until the store has reaped what
// ran out and collected its garbage.
func (f *Fixture) Step(d time.Duration) {
	f.tb.Helper()
	f.Clock.Step(d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(f.tb, f.Settle(ctx), "storetest: settle")
}

// CheckInvariants reads every object of every kind and checks what must always hold:
// uids are set and unique, resourceVersions are set and not newer than the store,
// generation is at least 1, creationTimestamp is set, deletionGracePeriodSeconds only
// goes with deletionTimestamp, and no object is terminating without finalizers past
// its deadline (after the store has settled).
func CheckInvariants(ctx context.Context, s *store.Store) error {
	rev, err := s.Backend().Revision(ctx)
	if err != nil {
		return err
	}
	uids := map[string]string{}
	for _, k := range s.Scheme().Kinds() {
		list := k.NewList()
		if err := s.List(ctx, list, store.ListOptions{}); err != nil {
			return fmt.Errorf("list %s: %w", k.Kind, err)
		}
		for i := 0; i < list.Len(); i++ {
			m := list.Item(i).GetObjectMeta()
			id := k.Kind + " " + m.Namespace + "/" + m.Name
			if m.UID == "" {
				return fmt.Errorf("%s has no uid", id)
			}
			if other, dup := uids[m.UID]; dup {
				return fmt.Errorf("%s and %s share uid %s", id, other, m.UID)
			}
			uids[m.UID] = id
			var rv int64
			if _, err := fmt.Sscanf(m.ResourceVersion, "%d", &rv); err != nil || rv <= 0 || rv > rev {
				return fmt.Errorf("%s has resourceVersion %q, store is at %d", id, m.ResourceVersion, rev)
			}
			if m.Generation < 1 {
				return fmt.Errorf("%s has generation %d", id, m.Generation)
			}
			if m.CreationTimestamp.IsZero() {
				return fmt.Errorf("%s has no creationTimestamp", id)
			}
			if m.DeletionGracePeriodSeconds != nil && m.DeletionTimestamp == nil {
				return fmt.Errorf("%s has deletionGracePeriodSeconds without deletionTimestamp", id)
			}
			if m.DeletionTimestamp != nil && len(m.Finalizers) == 0 && !s.Clock().Now().Before(m.DeletionTimestamp.Time) {
				return fmt.Errorf("%s is past its deletion deadline with no finalizers but still stored", id)
			}
		}
	}
	return nil
}
