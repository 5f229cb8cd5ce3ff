package objcodec

import (
	"fmt"
	"reflect"
	"sync"
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

// TestCopierFor_concurrent_first_use checks that goroutines asking for the copier of a
// type no one has copied before all get one that works, while one of them builds it
// (a placeholder found mid-build used to call a nil function).
func TestCopierFor_concurrent_first_use(t *testing.T) {
	type leaf struct{ A, B []string }
	type node struct {
		Leaf  leaf
		Next  *node
		Items map[string][]leaf
	}
	for round := range 20 {
		// A new type each round: reflect.StructOf gives a type no copier exists for.
		typ := reflect.StructOf([]reflect.StructField{
			{Name: "N", Type: reflect.TypeFor[node]()},
			{Name: fmt.Sprintf("R%d", round), Type: reflect.TypeFor[[]string]()},
		})
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				src := reflect.New(typ).Elem()
				src.Field(0).Set(reflect.ValueOf(node{Leaf: leaf{A: []string{"a"}}, Next: &node{}}))
				dst := reflect.New(typ).Elem()
				CopierFor(typ)(dst, src)
				assert.Equal(t, []string{"a"}, dst.Field(0).Interface().(node).Leaf.A)
			}()
		}
		wg.Wait()
	}
}
