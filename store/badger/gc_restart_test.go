package badger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStore_GarbageCollectionAndReaperResumeAfterRestart leaves work for the store's
// background loop in storage while no store is running (an owner removed behind its
// back, an orphan finalizer pending, a grace period run out) and checks that a store
// opened afterwards finds it from the stored state and finishes it.
func TestStore_GarbageCollectionAndReaperResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	clock := storetest.NewFakeClock(storetest.FixtureStart)

	b, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	s, err := store.New(b, store.Options{Clock: clock})
	require.NoError(t, err)
	owner := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "owner"}}
	require.NoError(t, s.Create(ctx, owner, store.CreateOptions{}))
	dep := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-owner", Name: "dep",
		OwnerReferences: []resource.OwnerReference{{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID}}}}
	require.NoError(t, s.Create(ctx, dep, store.CreateOptions{}))
	graceful := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "graceful"}}
	require.NoError(t, s.Create(ctx, graceful, store.CreateOptions{}))
	grace := int64(60)
	_, err = s.Delete(ctx, graceful, store.DeleteOptions{GracePeriodSeconds: &grace})
	require.NoError(t, err)
	require.NoError(t, s.Settle(ctx))
	require.NoError(t, s.Close())

	// Behind the store's back: the owner goes, and time passes the grace period.
	res, err := b.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "/management.service/projects/owner", Delete: true}}})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	require.NoError(t, b.Close())
	clock.Step(2 * time.Minute)

	b2, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	defer b2.Close()
	s2, err := store.New(b2, store.Options{Clock: clock})
	require.NoError(t, err)
	defer s2.Close()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, s2.Settle(sctx))
	err = s2.Get(ctx, "p-owner", "dep", &resource.VirtualClusterInstance{}, store.GetOptions{})
	assert.ErrorIs(t, err, resource.ErrNotFound, "the dependent of a gone owner is collected after the restart")
	err = s2.Get(ctx, "", "graceful", &resource.Project{}, store.GetOptions{})
	assert.ErrorIs(t, err, resource.ErrNotFound, "an expired grace period is reaped after the restart")
}
