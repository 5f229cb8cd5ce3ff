package migrate_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// Move the virtual cluster instance "dev" from project "team-a" into project
// "team-b", as the HTTP handler of POST …/projects/team-b/migratevirtualclusterinstance
// does, and repeat the request: the second answer is the recorded one.
func Example() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, err := store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for _, obj := range []resource.Object{
		&resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-a"}},
		&resource.Project{ObjectMeta: resource.ObjectMeta{Name: "team-b"}},
		&resource.VirtualClusterInstance{
			ObjectMeta: resource.ObjectMeta{Namespace: "p-team-a", Name: "dev",
				Labels: map[string]string{resource.LabelProject: "team-a"}},
			Spec: resource.VirtualClusterInstanceSpec{ClusterRef: resource.ClusterRef{Cluster: "prod"}},
		},
	} {
		if err := s.Create(ctx, obj, store.CreateOptions{}); err != nil {
			panic(err)
		}
	}

	svc, err := migrate.New(s, migrate.Options{})
	if err != nil {
		panic(err)
	}
	// The caller's access key is scoped to both projects.
	auth, err := migrate.ScopeAuthorizer(&resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: "team-a"}, {Project: "team-b"}},
	})
	if err != nil {
		panic(err)
	}
	caller := migrate.Caller{User: &store.UserInfo{Name: "alice"}, Authorizer: auth}
	req := &resource.ProjectMigrateVirtualClusterInstance{
		ObjectMeta:                   resource.ObjectMeta{Name: "move-dev"},
		SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Namespace: "p-team-a", Name: "dev"},
	}
	res, err := svc.Migrate(ctx, "team-b", req, caller, migrate.RequestOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("moved to", res.Status.Namespace+"/"+res.Status.Name)

	moved := &resource.VirtualClusterInstance{}
	if err := s.Get(ctx, "p-team-b", "dev", moved, store.GetOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("project label:", moved.Labels[resource.LabelProject])
	fmt.Println("migrated from:", moved.Annotations[resource.AnnotationMigratedFrom])
	fmt.Println("uid in status:", moved.UID == res.Status.UID)

	again, err := svc.Migrate(ctx, "team-b", req, caller, migrate.RequestOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("repeated request, same answer:", again.ResourceVersion == res.ResourceVersion && again.Status == res.Status)

	// A key scoped to the target project only may not take the instance away.
	onlyB, _ := migrate.ScopeAuthorizer(&resource.AccessKeyScope{
		Projects: []resource.AccessKeyScopeProject{{Project: "team-b"}},
	})
	back := &resource.ProjectMigrateVirtualClusterInstance{
		SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Namespace: "p-team-b", Name: "dev"},
	}
	_, err = svc.Migrate(ctx, "team-a", back, migrate.Caller{Authorizer: onlyB}, migrate.RequestOptions{})
	fmt.Println(resource.CodeOf(err), resource.ReasonOf(err))
	// Output:
	// moved to p-team-b/dev
	// project label: team-b
	// migrated from: p-team-a/dev
	// uid in status: true
	// repeated request, same answer: true
	// 403 Forbidden
}
