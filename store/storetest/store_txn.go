package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func txnCases() []storeCase {
	return []storeCase{
		{name: "a transaction writes several objects at one resourceVersion", run: func(t *testing.T, h *Harness) {
			old := Instance("p-a", "v")
			h.MustCreate(old)
			w, err := h.S.Watch(h.Ctx, Instance("", ""), store.WatchOptions{ResourceVersion: old.ResourceVersion})
			require.NoError(t, err)
			defer w.Stop()
			moved := Instance("p-b", "v")
			err = h.S.Txn(h.Ctx, store.TxnOptions{}, func(tx *store.Tx) error {
				if err := tx.Create(moved, store.CreateOptions{}); err != nil {
					return err
				}
				_, err := tx.Delete(Instance("p-a", "v"), store.DeleteOptions{})
				return err
			})
			require.NoError(t, err)
			a, b := nextEvent(t, w), nextEvent(t, w)
			assert.ElementsMatch(t, []store.EventType{store.Added, store.Deleted}, []store.EventType{a.Type, b.Type})
			assert.Equal(t, a.Object.GetObjectMeta().ResourceVersion, b.Object.GetObjectMeta().ResourceVersion)
			assert.Equal(t, moved.ResourceVersion, a.Object.GetObjectMeta().ResourceVersion)
		}},
		{name: "a failed transaction writes nothing", run: func(t *testing.T, h *Harness) {
			h.MustCreate(Project("taken"))
			before := h.Revision()
			err := h.S.Txn(h.Ctx, store.TxnOptions{}, func(tx *store.Tx) error {
				if err := tx.Create(Project("fresh"), store.CreateOptions{}); err != nil {
					return err
				}
				return tx.Create(Project("taken"), store.CreateOptions{})
			})
			RequireReason(t, err, resource.ReasonAlreadyExists)
			assert.Equal(t, before, h.Revision())
			assert.False(t, h.Exists(Project(""), "", "fresh"))
		}},
		{name: "a transaction reads its own writes", run: func(t *testing.T, h *Harness) {
			err := h.S.Txn(h.Ctx, store.TxnOptions{}, func(tx *store.Tx) error {
				if err := tx.Create(Project("a"), store.CreateOptions{}); err != nil {
					return err
				}
				got := Project("")
				if err := tx.Get("", "a", got); err != nil {
					return err
				}
				assert.NotEmpty(t, got.UID)
				return nil
			})
			require.NoError(t, err)
			assert.True(t, h.Exists(Project(""), "", "a"))
		}},
	}
}
