package backendkit_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/store/backend"
)

// Example drives the toy backend of toy_test.go (a map of versions and a slice of
// events per revision, built on Hub, Scan, ValidateTxn and FailedCompare), which
// passes storetest.RunBackend: a watcher started first, a create guarded by a
// compare, a read, and the watcher's event.
func Example() {
	ctx := context.Background()
	var b backend.Backend = newToy()
	defer b.Close()

	w, err := b.Watch(ctx, backend.WatchOptions{Prefix: "projects/"})
	if err != nil {
		panic(err)
	}
	defer w.Stop()

	create := backend.Txn{
		Compares: []backend.Compare{{Key: "projects/a", ModRevision: 0}}, // absent
		Ops:      []backend.Op{{Key: "projects/a", Value: []byte("v1")}},
	}
	res, err := b.Txn(ctx, create)
	if err != nil {
		panic(err)
	}
	fmt.Println("create:", res.Succeeded, "at revision", res.Revision)
	res, _ = b.Txn(ctx, create)
	fmt.Println("create again:", res.Succeeded, "failed compare", res.FailedCompare)

	kv, err := b.Get(ctx, "projects/a", 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("get: %s=%s created at %d\n", kv.Key, kv.Value, kv.CreateRevision)

	ev := <-w.Events()
	fmt.Println("watch:", ev.Type, ev.KV.Key, string(ev.KV.Value), "at", ev.Revision)
	// Output:
	// create: true at revision 1
	// create again: false failed compare 0
	// get: projects/a=v1 created at 1
	// watch: PUT projects/a v1 at 1
}
