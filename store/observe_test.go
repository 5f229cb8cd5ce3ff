package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

type countingObserver struct {
	mu       sync.Mutex
	outcomes map[string]int
}

func (o *countingObserver) Commit(d time.Duration, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes[outcome]++
}

// TestObserver_sees_commits_and_conflicts checks that every backend transaction of a
// write reaches the Observer with its outcome, a refused compare as a conflict, and
// that Stats counts the objects.
func TestObserver_sees_commits_and_conflicts(t *testing.T) {
	ctx := context.Background()
	obs := &countingObserver{outcomes: map[string]int{}}
	s, _ := newMemStore(t, store.Options{Observer: obs})
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b"}}, store.CreateOptions{}))

	// A Txn whose read goes stale once: one conflict, then a commit.
	first := true
	err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		cur := &resource.Project{}
		if err := tx.Get("", "a", cur); err != nil {
			return err
		}
		if first {
			first = false
			other := cur.DeepCopyResource().(*resource.Project)
			other.Spec.DisplayName = "meanwhile"
			require.NoError(t, s.Update(ctx, other, store.UpdateOptions{}))
		}
		cur.Spec.DisplayName = "mine"
		return tx.Update(cur, store.UpdateOptions{})
	})
	require.NoError(t, err)
	obs.mu.Lock()
	assert.Equal(t, 4, obs.outcomes[store.OutcomeCommitted], "two creates, the concurrent update, the txn")
	assert.Equal(t, 1, obs.outcomes[store.OutcomeConflict])
	obs.mu.Unlock()

	require.NoError(t, s.Settle(ctx))
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Objects)
	assert.Positive(t, st.Revision)
}
