package migrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// Wire the project rules into a host's store with one call, start their worker,
// and watch the rules hold: a relabelled instance is refused, and deleting a
// project deletes its instances first.
func ExampleInstallProjectRules() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()

	// The one call: the hooks go into the store's options...
	var opts store.Options
	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
	if err != nil {
		panic(err)
	}
	s, err := store.New(b, opts)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// ...and the worker starts with the store (stop it before closing the store).
	stop, err := rules.Start(s)
	if err != nil {
		panic(err)
	}
	defer stop()

	if err := s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-a"}}, store.CreateOptions{}); err != nil {
		panic(err)
	}
	dev := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-team-a", Name: "dev"}}
	if err := s.Create(ctx, dev, store.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("label set by the server:", dev.Labels[resource.LabelProject])

	dev.Labels[resource.LabelProject] = "team-c"
	err = s.Update(ctx, dev, store.UpdateOptions{})
	fmt.Println("relabelled:", resource.CodeOf(err), resource.ReasonOf(err))

	stray := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-nope", Name: "dev"}}
	err = s.Create(ctx, stray, store.CreateOptions{})
	fmt.Println("no such project:", resource.CodeOf(err), resource.ReasonOf(err))

	if _, err := s.Delete(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-a"}}, store.DeleteOptions{}); err != nil {
		panic(err)
	}
	for {
		err := s.Get(ctx, "", "team-a", &resource.Project{}, store.GetOptions{})
		if resource.ReasonOf(err) == resource.ReasonNotFound {
			break
		}
		time.Sleep(time.Millisecond)
	}
	err = s.Get(ctx, "p-team-a", "dev", &resource.VirtualClusterInstance{}, store.GetOptions{})
	fmt.Println("instance after the project's deletion:", resource.ReasonOf(err))
	// Output:
	// label set by the server: team-a
	// relabelled: 422 Invalid
	// no such project: 404 NotFound
	// instance after the project's deletion: NotFound
}
