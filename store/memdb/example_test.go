package memdb_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// Example creates a key only if it is absent, updates it with a compare-and-swap,
// reads it as it was before the update, and watches both changes.
func Example() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()

	w, err := b.Watch(ctx, backend.WatchOptions{Prefix: "projects/", StartRevision: 1})
	if err != nil {
		panic(err)
	}
	defer w.Stop()

	created, _ := b.Txn(ctx, backend.Txn{
		Compares: []backend.Compare{{Key: "projects/a", ModRevision: 0}}, // absent
		Ops:      []backend.Op{{Key: "projects/a", Value: []byte("v1")}},
	})
	fmt.Println("create:", created.Succeeded, "at revision", created.Revision)

	again, _ := b.Txn(ctx, backend.Txn{
		Compares: []backend.Compare{{Key: "projects/a", ModRevision: 0}},
		Ops:      []backend.Op{{Key: "projects/a", Value: []byte("v1")}},
	})
	fmt.Println("create again:", again.Succeeded, "failed compare", again.FailedCompare)

	updated, _ := b.Txn(ctx, backend.Txn{
		Compares: []backend.Compare{{Key: "projects/a", ModRevision: created.Revision}},
		Ops:      []backend.Op{{Key: "projects/a", Value: []byte("v2")}, {Key: "other", Value: []byte("x")}},
	})
	fmt.Println("update:", updated.Succeeded, "at revision", updated.Revision)

	old, _ := b.Get(ctx, "projects/a", created.Revision)
	cur, _ := b.Get(ctx, "projects/a", 0)
	fmt.Printf("at %d: %s, now: %s\n", created.Revision, old.Value, cur.Value)

	for range 2 {
		ev := <-w.Events()
		fmt.Println(ev.Type, ev.KV.Key, string(ev.KV.Value), "at", ev.Revision)
	}
	// Output:
	// create: true at revision 1
	// create again: false failed compare 0
	// update: true at revision 2
	// at 1: v1, now: v2
	// PUT projects/a v1 at 1
	// PUT projects/a v2 at 2
}
