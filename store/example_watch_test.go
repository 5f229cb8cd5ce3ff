package store_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// ExampleEvent_JSON watches projects the way an HTTP server streams them: the
// watches share each event's object (SharedObjects) and its JSON, made once from
// the stored bytes.
func ExampleEvent_JSON() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, err := store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	w, err := s.Watch(ctx, &resource.Project{}, store.WatchOptions{ResourceVersion: "0", SharedObjects: true})
	if err != nil {
		panic(err)
	}
	defer w.Stop()

	if err := s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}}, store.CreateOptions{}); err != nil {
		panic(err)
	}
	ev := <-w.ResultChan()
	data, err := ev.JSON() // shared with every other watch of the event: do not change it
	if err != nil {
		panic(err)
	}
	var obj struct {
		Kind     string
		Metadata struct{ Name, ResourceVersion string }
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		panic(err)
	}
	fmt.Println(ev.Type, obj.Kind, obj.Metadata.Name, obj.Metadata.ResourceVersion)
	// Output:
	// ADDED Project web 1
}
