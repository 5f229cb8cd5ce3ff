package badger

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

func put(key string, rev int64, value []byte) backend.Event {
	return backend.Event{Type: backend.EventPut, Revision: rev, KV: backend.KV{Key: key, Value: value, ModRevision: rev}}
}

func TestRecentValues(t *testing.T) {
	t.Run("a value is kept for its revision only", func(t *testing.T) {
		var r recentValues
		r.record([]backend.Event{put("a", 1, []byte("one")), put("b", 1, []byte("bee"))})
		v, ok := r.get("a", 1)
		require.True(t, ok)
		assert.Equal(t, "one", string(v))
		_, ok = r.get("a", 2)
		assert.False(t, ok, "another revision of the key")
		_, ok = r.get("c", 1)
		assert.False(t, ok, "a key never recorded")

		r.record([]backend.Event{put("a", 2, []byte("two"))})
		_, ok = r.get("a", 1)
		assert.False(t, ok, "a replaced value")
		v, ok = r.get("a", 2)
		require.True(t, ok)
		assert.Equal(t, "two", string(v))

		r.record([]backend.Event{{Type: backend.EventDelete, Revision: 3, KV: backend.KV{Key: "a", ModRevision: 3}}})
		_, ok = r.get("a", 2)
		assert.False(t, ok, "a deleted key")
		assert.Equal(t, len("bee"), r.bytes)
	})
	t.Run("the values stay within their bound, the newest kept", func(t *testing.T) {
		var r recentValues
		value := make([]byte, 64<<10)
		n := 3 * maxRecentBytes / len(value)
		for i := range n {
			r.record([]backend.Event{put(fmt.Sprintf("k%d", i), int64(i+1), value)})
			require.LessOrEqual(t, r.bytes, maxRecentBytes)
		}
		_, ok := r.get(fmt.Sprintf("k%d", n-1), int64(n))
		assert.True(t, ok, "the newest")
		_, ok = r.get("k0", 1)
		assert.False(t, ok, "the oldest is gone")
		assert.Equal(t, len(r.m)*len(value), r.bytes)
		assert.LessOrEqual(t, len(r.fifo), 2*len(r.m)+64)
	})
	t.Run("rewriting one key does not grow the bookkeeping", func(t *testing.T) {
		var r recentValues
		for i := range 10000 {
			r.record([]backend.Event{put("k", int64(i+1), []byte("v"))})
		}
		assert.Len(t, r.m, 1)
		assert.LessOrEqual(t, len(r.fifo), 2*len(r.m)+64)
	})
	t.Run("a value too large for it is not kept", func(t *testing.T) {
		var r recentValues
		r.record([]backend.Event{put("big", 1, make([]byte, maxRecentBytes/8))})
		_, ok := r.get("big", 1)
		assert.False(t, ok)
		assert.Zero(t, r.bytes)
	})
}
