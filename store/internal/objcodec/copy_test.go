package objcodec

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/resource"
)

// hostKind is a kind without DeepCopyResource, copied by reflection.
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
	out := DeepCopy(in).(*hostKind)
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
