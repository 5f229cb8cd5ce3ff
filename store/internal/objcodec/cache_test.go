package objcodec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

func TestCache_serves_only_the_exact_revision(t *testing.T) {
	c := objcodec.NewCache(2)
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	c.Put("k", 5, p)
	assert.Same(t, p, c.Get("k", 5))
	assert.Equal(t, "5", c.Entry("k", 5).RV)
	assert.Nil(t, c.Get("k", 6), "another revision is a miss")
	c.Put("k", 4, &resource.Project{})
	assert.Same(t, p, c.Get("k", 5), "an older revision does not replace a newer one")
	c.Put("k2", 1, p)
	c.Put("k3", 1, p)
	assert.LessOrEqual(t, c.Len(), 2, "the cache stays within its bound")
	c.Drop("k3")
	assert.Nil(t, c.Get("k3", 1))
	var off *objcodec.Cache
	off.Put("k", 1, p)
	assert.Nil(t, off.Get("k", 1))
	assert.False(t, off.Has("k"))
	assert.Nil(t, objcodec.NewCache(-1), "a negative size turns the cache off")
}
