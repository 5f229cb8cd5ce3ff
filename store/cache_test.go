package store

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/resource"
)

func TestObjectCache_serves_only_the_exact_revision(t *testing.T) {
	c := newObjectCache(2)
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	c.put("k", 5, p)
	assert.Same(t, p, c.get("k", 5))
	assert.Nil(t, c.get("k", 6), "another revision is a miss")
	c.put("k", 4, &resource.Project{})
	assert.Same(t, p, c.get("k", 5), "an older revision does not replace a newer one")
	c.put("k2", 1, p)
	c.put("k3", 1, p)
	assert.LessOrEqual(t, len(c.m), 2, "the cache stays within its bound")
	c.drop("k3")
	assert.Nil(t, c.get("k3", 1))
	var off *objectCache
	off.put("k", 1, p)
	assert.Nil(t, off.get("k", 1))
}
