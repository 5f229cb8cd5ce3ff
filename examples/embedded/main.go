// Command embedded shows the store embedded in a program: it keeps a Project and a
// VirtualClusterInstance on the in-memory backend, watches the instances, deletes one
// that carries a finalizer, and prints what happens at each step.
//
//	go run ./examples/embedded
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, err := store.New(b, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()

	project := &resource.Project{
		ObjectMeta: resource.ObjectMeta{Name: "demo"},
		Spec:       resource.ProjectSpec{DisplayName: "Demo project"},
	}
	if err := s.Create(ctx, project, store.CreateOptions{}); err != nil {
		return err
	}
	fmt.Printf("created project %s uid=%s resourceVersion=%s\n", project.Name, project.UID, project.ResourceVersion)

	w, err := s.Watch(ctx, &resource.VirtualClusterInstance{}, store.WatchOptions{
		Namespace: "p-demo", ResourceVersion: project.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	events := make(chan string, 16)
	go func() {
		for ev := range w.ResultChan() {
			m := ev.Object.GetObjectMeta()
			events <- fmt.Sprintf("watch: %-8s %s/%s resourceVersion=%s terminating=%t",
				ev.Type, m.Namespace, m.Name, m.ResourceVersion, m.DeletionTimestamp != nil)
		}
		close(events)
	}()

	vci := &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Namespace:  "p-demo",
			Name:       "dev",
			Labels:     map[string]string{resource.LabelProject: "demo"},
			Finalizers: []string{"example.com/cleanup"},
		},
		Spec: resource.VirtualClusterInstanceSpec{ClusterRef: resource.ClusterRef{Cluster: "local"}},
	}
	if err := s.Create(ctx, vci, store.CreateOptions{}); err != nil {
		return err
	}
	fmt.Printf("created instance %s/%s generation=%d\n", vci.Namespace, vci.Name, vci.Generation)
	fmt.Println(<-events)

	removed, err := s.Delete(ctx, vci, store.DeleteOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("delete: removed=%t deletionTimestamp set=%t generation=%d (the finalizer holds it)\n",
		removed, vci.DeletionTimestamp != nil, vci.Generation)
	fmt.Println(<-events)

	vci.Finalizers = nil
	if err := s.Update(ctx, vci, store.UpdateOptions{}); err != nil {
		return err
	}
	fmt.Println("removed the finalizer: the same write removes the instance")
	fmt.Println(<-events)

	err = s.Get(ctx, "p-demo", "dev", &resource.VirtualClusterInstance{}, store.GetOptions{})
	fmt.Printf("get after delete: %s (HTTP %d)\n", resource.ReasonOf(err), resource.CodeOf(err))

	select {
	case extra := <-events:
		return fmt.Errorf("unexpected event: %s", extra)
	case <-time.After(50 * time.Millisecond):
	}
	return nil
}
