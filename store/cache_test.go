package store

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/resource"
)

// hostKind is a kind without DeepCopyObject, copied by reflection.
type hostKind struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Items []string          `json:"items"`
		Ref   *resource.Owner   `json:"ref"`
		M     map[string][]byte `json:"m"`
	} `json:"spec"`
}

func TestDeepCopy_reflective_copy_shares_nothing(t *testing.T) {
	in := &hostKind{}
	in.Name = "a"
	in.Labels = map[string]string{"k": "v"}
	in.Finalizers = []string{"f"}
	in.DeletionTimestamp = resource.NewTimePtr(in.CreationTimestamp.Time)
	in.Spec.Items = []string{"x"}
	in.Spec.Ref = &resource.Owner{User: "u"}
	in.Spec.M = map[string][]byte{"b": []byte("1")}
	out := deepCopy(in).(*hostKind)
	assert.Equal(t, in, out)
	out.Labels["k"] = "changed"
	out.Finalizers[0] = "changed"
	out.Spec.Items[0] = "changed"
	out.Spec.Ref.User = "changed"
	out.Spec.M["b"][0] = '9'
	assert.Equal(t, "v", in.Labels["k"])
	assert.Equal(t, "f", in.Finalizers[0])
	assert.Equal(t, "x", in.Spec.Items[0])
	assert.Equal(t, "u", in.Spec.Ref.User)
	assert.Equal(t, byte('1'), in.Spec.M["b"][0])
}

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
