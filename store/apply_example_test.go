package store_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

func ExampleStore_Apply() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	// The schemas say how each kind's lists merge.
	s, err := store.New(b, store.Options{FieldTypes: schema.NewRegistry()})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	apply := func(manager, displayName string, force bool) error {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}}
		config := fmt.Sprintf(`{"apiVersion":"management.service/v1","kind":"Project",
			"metadata":{"name":"web"},"spec":{"displayName":%q}}`, displayName)
		created, err := s.Apply(ctx, p, []byte(config), store.ApplyOptions{
			WriteOptions: store.WriteOptions{FieldManager: manager}, Force: force})
		if err == nil {
			fmt.Println("created:", created, "displayName:", p.Spec.DisplayName, "owner:", p.ManagedFields[0].Manager)
		}
		return err
	}
	_ = apply("alice", "Web", false)
	err = apply("bob", "Other", false)
	fmt.Println(err)
	_ = apply("bob", "Other", true)
	// Output:
	// created: true displayName: Web owner: alice
	// Apply failed with 1 conflict: conflict with "alice": .spec.displayName
	// created: false displayName: Other owner: bob
}
