package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// TestWatchFunc checks the watch run in the caller's goroutine: set-up errors come
// back before Ready, events come in order with Idle once they are all handed on, a
// handler that returns false ends it, and a handler that blocks until the ring has
// moved past it gets 410 Expired next.
func TestWatchFunc(t *testing.T) {
	create := func(t *testing.T, s *Store, names ...string) {
		for _, n := range names {
			require.NoError(t, s.Create(context.Background(), &resource.Project{ObjectMeta: resource.ObjectMeta{Name: n}}, CreateOptions{}))
		}
	}
	t.Run("a bad selector is an error before Ready", func(t *testing.T) {
		s, _ := newTestStore(t, Options{})
		ready := false
		err := s.WatchFunc(t.Context(), &resource.Project{}, WatchOptions{LabelSelector: "a in"},
			WatchHandler{Ready: func() { ready = true }, Event: func(Event) bool { return true }})
		assert.Equal(t, 400, resource.CodeOf(err))
		assert.False(t, ready)
	})
	t.Run("events in order, Idle when all are handed on, false ends it", func(t *testing.T) {
		s, _ := newTestStore(t, Options{})
		create(t, s, "a", "b")
		var got []string
		var once sync.Once
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		err := s.WatchFunc(ctx, &resource.Project{}, WatchOptions{ResourceVersion: "0"}, WatchHandler{
			Event: func(ev Event) bool {
				got = append(got, string(ev.Type)+" "+ev.Object.GetObjectMeta().Name)
				return len(got) < 3
			},
			// c is written only once the watch has handed on a and b and waits.
			Idle: func() { once.Do(func() { go create(t, s, "c") }) },
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"ADDED a", "ADDED b", "ADDED c"}, got)
	})
	t.Run("a handler that blocks past the ring gets 410", func(t *testing.T) {
		s, b := newTestStore(t, Options{WatchCacheEvents: 8})
		rev, err := b.Revision(t.Context())
		require.NoError(t, err)
		first := true
		var got []Event
		err = s.WatchFunc(t.Context(), &resource.Project{}, WatchOptions{ResourceVersion: fmt.Sprint(rev)}, WatchHandler{
			Ready: func() { go create(t, s, "p0") },
			Event: func(ev Event) bool {
				got = append(got, ev)
				if first {
					first = false
					for i := 1; i <= 40; i++ { // the ring moves on while the handler blocks
						create(t, s, fmt.Sprintf("p%d", i))
					}
					require.Eventually(t, func() bool { // the hub has them: p1 is gone from the ring
						s.hubMu.Lock()
						h := s.watchHub
						s.hubMu.Unlock()
						h.mu.RLock()
						defer h.mu.RUnlock()
						return h.tail > 1
					}, 10*time.Second, time.Millisecond)
				}
				return true
			},
		})
		require.NoError(t, err)
		last := got[len(got)-1]
		require.Equal(t, Error, last.Type)
		assert.Equal(t, 410, resource.CodeOf(last.Err))
		for i, ev := range got[:len(got)-1] {
			assert.Equal(t, fmt.Sprintf("p%d", i), ev.Object.GetObjectMeta().Name, "in order before the end")
		}
	})
}
