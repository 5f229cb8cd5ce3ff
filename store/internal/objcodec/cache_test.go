package objcodec_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

func TestCache_serves_only_the_exact_revision(t *testing.T) {
	c := objcodec.NewCache(2, 0)
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	c.Put("k", 5, 10, p)
	assert.Same(t, p, c.Get("k", 5))
	assert.Equal(t, "5", c.Entry("k", 5).RV)
	assert.Nil(t, c.Get("k", 6), "another revision is a miss")
	c.Put("k", 4, 10, &resource.Project{})
	assert.Same(t, p, c.Get("k", 5), "an older revision does not replace a newer one")
	c.Put("k2", 1, 10, p)
	c.Put("k3", 1, 10, p)
	assert.LessOrEqual(t, c.Len(), 2, "the cache stays within its bound")
	c.Drop("k3")
	assert.Nil(t, c.Get("k3", 1))
	var off *objcodec.Cache
	off.Put("k", 1, 10, p)
	assert.Nil(t, off.Get("k", 1))
	assert.False(t, off.Has("k"))
	assert.False(t, off.Offer("k", 1, 10, p))
	assert.False(t, off.HasRoom(1))
	assert.Nil(t, objcodec.NewCache(-1, 0), "a negative size turns the cache off")
}

func TestCache_bytes(t *testing.T) {
	p := &resource.Project{}
	size := 1000
	charge := objcodec.EntrySize(size)
	tests := []struct {
		name     string
		maxBytes int64
		puts     int
		want     int // entries kept
	}{
		{name: "within the bound", maxBytes: 10 * charge, puts: 10, want: 10},
		{name: "over the bound evicts", maxBytes: 10 * charge, puts: 25, want: 10},
		{name: "no byte bound", maxBytes: 0, puts: 25, want: 25},
		{name: "bound below one entry keeps none", maxBytes: charge - 1, puts: 3, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := objcodec.NewCache(1000, tt.maxBytes)
			for i := range tt.puts {
				c.Put(fmt.Sprint(i), 1, size, p)
			}
			assert.Equal(t, tt.want, c.Len())
			assert.Equal(t, int64(tt.want)*charge, c.Bytes(), "the charges add up")
		})
	}
}

func TestCache_offer_does_not_evict(t *testing.T) {
	p := &resource.Project{}
	c := objcodec.NewCache(1000, 3*objcodec.EntrySize(100))
	require.True(t, c.HasRoom(100))
	for i := range 3 {
		require.True(t, c.Offer(fmt.Sprint(i), 1, 100, p))
	}
	assert.False(t, c.HasRoom(100))
	assert.False(t, c.Offer("new", 1, 100, p), "a full cache takes no offer")
	assert.Nil(t, c.Get("new", 1))
	for i := range 3 {
		assert.NotNil(t, c.Get(fmt.Sprint(i), 1), "the cached objects stay")
	}
	// A newer version of a cached key replaces the old one even when offered.
	assert.True(t, c.Offer("1", 2, 100, p))
	assert.Nil(t, c.Get("1", 1))
	// Replacing an entry charges the new size only.
	c.Put("0", 2, 50, p)
	assert.Equal(t, 2*objcodec.EntrySize(100)+objcodec.EntrySize(50), c.Bytes())
	c.Drop("0")
	c.Drop("0")
	assert.Equal(t, 2*objcodec.EntrySize(100), c.Bytes(), "a drop gives the charge back, once")
	// count bound applies too.
	n := objcodec.NewCache(2, 0)
	assert.True(t, n.Offer("a", 1, 1, p))
	assert.True(t, n.Offer("b", 1, 1, p))
	assert.False(t, n.Offer("c", 1, 1, p))
}
