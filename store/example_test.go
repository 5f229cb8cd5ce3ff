package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

func Example() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, err := store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}}
	if err := s.Create(ctx, p, store.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("created", p.Name, "generation", p.Generation, "resourceVersion", p.ResourceVersion)

	stale := *p
	p.Spec.DisplayName = "Web"
	if err := s.Update(ctx, p, store.UpdateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("updated: generation", p.Generation, "resourceVersion", p.ResourceVersion)

	stale.Spec.DisplayName = "Other"
	err = s.Update(ctx, &stale, store.UpdateOptions{})
	fmt.Println("stale update conflicts:", errors.Is(err, resource.ErrConflict), resource.CodeOf(err))
	// Output:
	// created web generation 1 resourceVersion 1
	// updated: generation 2 resourceVersion 2
	// stale update conflicts: true 409
}

func ExampleStore_Delete_finalizers() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, _ := store.New(b, store.Options{})
	defer s.Close()

	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web", Finalizers: []string{"example.com/cleanup"}}}
	_ = s.Create(ctx, p, store.CreateOptions{})
	removed, _ := s.Delete(ctx, p, store.DeleteOptions{})
	fmt.Println("removed:", removed, "terminating:", p.DeletionTimestamp != nil)

	p.Finalizers = nil
	_ = s.Update(ctx, p, store.UpdateOptions{})
	err := s.Get(ctx, "", "web", &resource.Project{}, store.GetOptions{})
	fmt.Println("after the last finalizer:", resource.ReasonOf(err))
	// Output:
	// removed: false terminating: true
	// after the last finalizer: NotFound
}

func ExampleStore_Txn() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, _ := store.New(b, store.Options{})
	defer s.Close()

	a := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}
	c := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b"}}
	err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		if err := tx.Create(a, store.CreateOptions{}); err != nil {
			return err
		}
		return tx.Create(c, store.CreateOptions{})
	})
	fmt.Println(err, a.ResourceVersion == c.ResourceVersion)
	// Output: <nil> true
}
