package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// handElector is an Elector the test drives: it makes its store leader when the test
// sends it a channel, and ends that leadership when the test closes the channel.
type handElector struct{ grant chan chan struct{} }

func (e *handElector) Campaign(ctx context.Context) (<-chan struct{}, error) {
	select {
	case lost := <-e.grant:
		return lost, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestElector checks that of two stores on one backend only the leader reaps and
// collects, and that a new leader finishes what was left.
func TestElector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clocks := []*storetest.FakeClock{storetest.NewFakeClock(start), storetest.NewFakeClock(start)}
	electors := []*handElector{{grant: make(chan chan struct{})}, {grant: make(chan chan struct{})}}
	var stores []*store.Store
	for i := range electors {
		s, err := store.New(b, store.Options{Clock: clocks[i], Elector: electors[i]})
		require.NoError(t, err)
		defer s.Close()
		stores = append(stores, s)
	}
	a, f := stores[0], stores[1]
	require.False(t, a.Leading())
	require.False(t, f.Leading())
	leadA := make(chan struct{})
	electors[0].grant <- leadA
	require.Eventually(t, a.Leading, 5*time.Second, time.Millisecond)
	assert.False(t, f.Leading())

	owner := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "owner"}}
	require.NoError(t, a.Create(ctx, owner, store.CreateOptions{}))
	dep := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "dep",
		OwnerReferences: []resource.OwnerReference{{APIVersion: owner.APIVersion, Kind: "Project", Name: "owner", UID: owner.UID}}}}
	require.NoError(t, a.Create(ctx, dep, store.CreateOptions{}))
	grace := int64(30)
	slow := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "slow"}}
	require.NoError(t, f.Create(ctx, slow, store.CreateOptions{}))
	_, err := f.Delete(ctx, slow, store.DeleteOptions{GracePeriodSeconds: &grace})
	require.NoError(t, err)

	// The follower's clock passes the deadline: it must not reap.
	clocks[1].Step(time.Minute)
	require.NoError(t, f.Settle(ctx))
	exists := func(s *store.Store, name string) bool {
		err := s.Get(ctx, "p-a", name, &resource.VirtualClusterInstance{}, store.GetOptions{})
		if err != nil {
			require.ErrorIs(t, err, resource.ErrNotFound)
			return false
		}
		return true
	}
	require.True(t, exists(f, "slow"), "a follower reaped")
	require.NoError(t, a.Settle(ctx))
	require.True(t, exists(a, "slow"), "the leader's clock has not passed the deadline")

	// Leadership moves to the follower, while the owner goes away: the new leader
	// reaps by its clock and collects the dependent.
	close(leadA)
	require.Eventually(t, func() bool { return !a.Leading() }, 5*time.Second, time.Millisecond)
	_, err = a.Delete(ctx, owner, store.DeleteOptions{})
	require.NoError(t, err)
	require.NoError(t, a.Settle(ctx))
	assert.True(t, exists(a, "dep"), "an ex-leader collected")
	electors[1].grant <- make(chan struct{})
	require.Eventually(t, f.Leading, 5*time.Second, time.Millisecond)
	require.NoError(t, f.Settle(ctx))
	assert.False(t, exists(f, "slow"), "the new leader did not reap")
	assert.False(t, exists(f, "dep"), "the new leader did not collect")
}
