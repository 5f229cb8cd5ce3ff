package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func vci(ns, name string) *resource.VirtualClusterInstance {
	return &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: name}}
}

func names(l *resource.VirtualClusterInstanceList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

// TestTxList_guards_the_range checks Tx.List: it sees the transaction's own writes,
// and an object created in the listed namespace between the list and the commit makes
// the transaction run again and see it; a write elsewhere does not.
func TestTxList_guards_the_range(t *testing.T) {
	ctx := context.Background()
	s, _ := newMemStore(t, store.Options{})
	require.NoError(t, s.Create(ctx, vci("p-a", "one"), store.CreateOptions{}))

	runs := 0
	var seen []string
	err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		runs++
		require.NoError(t, tx.Create(vci("p-a", "mine"), store.CreateOptions{}))
		l := &resource.VirtualClusterInstanceList{}
		require.NoError(t, tx.List(l, store.ListOptions{Namespace: "p-a"}))
		seen = names(l)
		switch runs {
		case 1:
			// Elsewhere: not in the range.
			require.NoError(t, s.Create(ctx, vci("p-b", "other"), store.CreateOptions{}))
			// In the range: the commit must fail and the function run again.
			require.NoError(t, s.Create(ctx, vci("p-a", "sneaky"), store.CreateOptions{}))
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, runs, "the create in p-a made the transaction run again")
	assert.Equal(t, []string{"mine", "one", "sneaky"}, seen, "the second run sees it, and its own write")

	// A write outside the range alone does not.
	runs = 0
	err = s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		runs++
		l := &resource.VirtualClusterInstanceList{}
		require.NoError(t, tx.List(l, store.ListOptions{Namespace: "p-a"}))
		if runs == 1 {
			require.NoError(t, s.Create(ctx, vci("p-b", "other-2"), store.CreateOptions{}))
		}
		return tx.Create(vci("p-c", "x"), store.CreateOptions{})
	})
	require.NoError(t, err)
	assert.Equal(t, 1, runs)

	err = s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		return tx.List(&resource.VirtualClusterInstanceList{}, store.ListOptions{Namespace: "p-a", Limit: 1})
	})
	assert.Equal(t, resource.ReasonBadRequest, resource.ReasonOf(err), "paging does not apply")
}
