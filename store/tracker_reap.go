package store

import (
	"context"
	"time"
)

// The reaper: removing terminating objects without finalizers whose grace period is
// over, at the deadlines the tracker's index keeps.

func (t *tracker) dueLocked(now time.Time) bool {
	for _, d := range t.reap {
		if !now.Before(d) {
			return true
		}
	}
	return false
}

// reapKey removes a terminating object without finalizers whose grace period is over.
func (s *Store) reapKey(ctx context.Context, key string) error {
	_, err := s.runTxn(ctx, false, func(tx *Tx) error {
		e, err := tx.get(key)
		if err != nil || e.value == nil {
			return err
		}
		k := s.kindOfKey(key)
		if k == nil {
			return nil
		}
		cur, err := s.decode(k, key, e.rev, e.value, e.rev)
		if err != nil {
			return err
		}
		m := cur.GetObjectMeta()
		if m.DeletionTimestamp == nil || len(m.Finalizers) > 0 || s.clock.Now().Before(m.DeletionTimestamp.Time) {
			return nil
		}
		_, err = tx.remove(k, key, e, cur, k.New())
		return err
	})
	return err
}
