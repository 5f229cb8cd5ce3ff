package badger_test

import (
	"context"
	"fmt"
	"os"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// Example opens a store on a badger directory, creates a Project, and opens the
// directory again as a restarted program would: the object, its uid and the
// revision are still there, and revisions go on from where they were.
func Example() {
	dir, err := os.MkdirTemp("", "mgmt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	b, err := badger.Open(dir, badger.Options{}) // synced writes: durable on return
	if err != nil {
		panic(err)
	}
	s, err := store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-a"}, Spec: resource.ProjectSpec{Description: "Team A"}}
	if err := s.Create(ctx, p, store.CreateOptions{}); err != nil {
		panic(err)
	}
	uid := p.UID
	fmt.Println("created team-a at resourceVersion", p.ResourceVersion)
	_ = s.Close()
	_ = b.Close()

	// The restart.
	b, err = badger.Open(dir, badger.Options{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	s, err = store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	got := &resource.Project{}
	if err := s.Get(ctx, "", "team-a", got, store.GetOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("after the restart:", got.Spec.Description, "at resourceVersion", got.ResourceVersion, "same uid:", got.UID == uid)
	q := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-b"}}
	if err := s.Create(ctx, q, store.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("created team-b at resourceVersion", q.ResourceVersion)
	// Output:
	// created team-a at resourceVersion 1
	// after the restart: Team A at resourceVersion 1 same uid: true
	// created team-b at resourceVersion 2
}
