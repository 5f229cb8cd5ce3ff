package migrate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func checkCases() []suiteCase {
	return []suiteCase{
		{name: "every check of decisions §5 answers its Status, in order, and changes nothing", run: testChecks},
		{name: "rights that allow the move", run: testAllowedCallers},
		{name: "allowedClusters that allow the instance's cluster", run: testAllowedClusters},
	}
}

// checkCase is one refused request: what to set up, the request, and the answer.
type checkCase struct {
	name   string
	setup  func(e *migratetest.Env)
	target string                                                // default "b"
	req    func() *resource.ProjectMigrateVirtualClusterInstance // default: "mv", p-a/dev
	caller func() migrate.Caller                                 // default: admin
	reason resource.StatusReason
	field  string // a cause's field, for 422
	msg    string // a fragment of the message
}

func withReq(f func(r *resource.ProjectMigrateVirtualClusterInstance)) func() *resource.ProjectMigrateVirtualClusterInstance {
	return func() *resource.ProjectMigrateVirtualClusterInstance {
		r := migratetest.Request("mv", "p-a", "dev")
		f(r)
		return r
	}
}

// terminate starts the deletion of p-a/dev (its finalizer keeps it).
func terminate(e *migratetest.Env) {
	_, err := e.Store.Delete(e.Ctx, &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "dev"}}, store.DeleteOptions{})
	require.NoError(e.T, err)
	require.True(e.T, e.Get("p-a", "dev").IsTerminating())
}

func setCluster(cluster string) func(e *migratetest.Env) {
	return func(e *migratetest.Env) {
		inst := e.Get("p-a", "dev")
		inst.Spec.ClusterRef.Cluster = cluster
		require.NoError(e.T, e.Store.Update(e.Ctx, inst, store.UpdateOptions{}))
	}
}

func checkTable() []checkCase {
	noRights := func() migrate.Caller { return migratetest.ScopedCaller(projectsScope("elsewhere")) }
	return []checkCase{
		// 1. The body: 422 with field paths.
		{name: "422 kind is not ProjectMigrateVirtualClusterInstance", reason: resource.ReasonInvalid, field: "kind",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.Kind = "Project" })},
		{name: "422 apiVersion is not management.service/v1", reason: resource.ReasonInvalid, field: "apiVersion",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.APIVersion = "management.service/v2" })},
		{name: "422 source name missing", reason: resource.ReasonInvalid, field: "sourceVirtualClusterInstance.name",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.SourceVirtualClusterInstance.Name = "" })},
		{name: "422 source namespace missing", reason: resource.ReasonInvalid, field: "sourceVirtualClusterInstance.namespace",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.SourceVirtualClusterInstance.Namespace = "" })},
		{name: "422 both source fields missing", reason: resource.ReasonInvalid, field: "sourceVirtualClusterInstance.namespace",
			req: func() *resource.ProjectMigrateVirtualClusterInstance { return migratetest.Request("mv", "", "") }},
		{name: "422 source name malformed", reason: resource.ReasonInvalid, field: "sourceVirtualClusterInstance.name",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.SourceVirtualClusterInstance.Name = "Dev_1" })},
		{name: "422 source namespace malformed", reason: resource.ReasonInvalid, field: "sourceVirtualClusterInstance.namespace",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) {
				r.SourceVirtualClusterInstance.Namespace = "p.a"
			})},
		{name: "422 metadata.name malformed", reason: resource.ReasonInvalid, field: "metadata.name",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.Name = "Not Valid" })},
		{name: "422 metadata.generateName malformed", reason: resource.ReasonInvalid, field: "metadata.generateName",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.Name, r.GenerateName = "", "UP-" })},
		{name: "422 metadata.resourceVersion set", reason: resource.ReasonInvalid, field: "metadata.resourceVersion",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.ResourceVersion = "3" })},
		{name: "422 before 404: bad body and no such target project", reason: resource.ReasonInvalid, target: "nope",
			field: "sourceVirtualClusterInstance.name",
			req:   withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.SourceVirtualClusterInstance.Name = "" })},

		// 2. The target project.
		{name: "404 target project does not exist", target: "nope", reason: resource.ReasonNotFound, msg: `projects.management.service "nope" not found`},
		{name: "404 target project name that no project can have", target: "a.b", reason: resource.ReasonNotFound},
		{name: "404 target before 404 source", target: "nope", reason: resource.ReasonNotFound, msg: "projects",
			req: func() *resource.ProjectMigrateVirtualClusterInstance {
				return migratetest.Request("mv", "p-a", "ghost")
			}},

		// 3. The source instance.
		{name: "404 source instance does not exist", reason: resource.ReasonNotFound,
			msg: `virtualclusterinstances.management.service "ghost" not found in namespace "p-a"`,
			req: func() *resource.ProjectMigrateVirtualClusterInstance {
				return migratetest.Request("mv", "p-a", "ghost")
			}},
		{name: "404 source instance in another namespace", reason: resource.ReasonNotFound,
			req: func() *resource.ProjectMigrateVirtualClusterInstance { return migratetest.Request("mv", "p-c", "dev") }},
		{name: "404 before 409: missing target, source being deleted", target: "nope", setup: terminate,
			reason: resource.ReasonNotFound},

		// 4-6. Conflicts.
		{name: "409 source being deleted", setup: terminate, reason: resource.ReasonConflict, msg: "being deleted"},
		{name: "409 source already in the target project", target: "a", reason: resource.ReasonConflict, msg: `already in project "a"`},
		{name: "409 being deleted before already in the target", target: "a", setup: terminate, reason: resource.ReasonConflict,
			msg: "being deleted"},
		{name: "409 AlreadyExists: the name is taken in the target namespace", reason: resource.ReasonAlreadyExists,
			msg:   `"dev" already exists in namespace "p-b"`,
			setup: func(e *migratetest.Env) { e.Create(migratetest.Instance("p-b", "dev")) }},
		{name: "403 before 409 AlreadyExists", reason: resource.ReasonForbidden, caller: noRights,
			setup: func(e *migratetest.Env) { e.Create(migratetest.Instance("p-b", "dev")) }},
		{name: "409 AlreadyExists: the request's name records another move into the project", reason: resource.ReasonAlreadyExists,
			msg: `the name records another move into project "b"`,
			setup: func(e *migratetest.Env) {
				e.SeedInstance("p-a", "other")
				e.Migrate("b", migratetest.Request("mv", "p-a", "other"))
			}},
		{name: "409 project being deleted", reason: resource.ReasonConflict, msg: `project "b" is being deleted`,
			setup: func(e *migratetest.Env) {
				p := &resource.Project{}
				require.NoError(e.T, e.Store.Get(e.Ctx, "", "b", p, store.GetOptions{}))
				p.Finalizers = append(p.Finalizers, "example.com/hold")
				require.NoError(e.T, e.Store.Update(e.Ctx, p, store.UpdateOptions{}))
				_, err := e.Store.Delete(e.Ctx, p, store.DeleteOptions{})
				require.NoError(e.T, err)
			}},
		{name: "422 request name too long for its record", reason: resource.ReasonInvalid, field: "metadata.name",
			req: withReq(func(r *resource.ProjectMigrateVirtualClusterInstance) { r.Name = strings.Repeat("n", 252) })},

		// 7. Rights.
		{name: "403 no authorizer", reason: resource.ReasonForbidden, msg: "no authorizer",
			caller: func() migrate.Caller { return migrate.Caller{} }},
		{name: "403 SEC-MIG-AUTHZ rights in the source project only", reason: resource.ReasonForbidden,
			msg:    `cannot create virtualclusterinstances in namespace "p-b"`,
			caller: func() migrate.Caller { return migratetest.ScopedCaller(projectsScope("a")) }},
		{name: "403 SEC-MIG-AUTHZ rights in the target project only", reason: resource.ReasonForbidden,
			msg:    `cannot delete virtualclusterinstances "dev" in namespace "p-a"`,
			caller: func() migrate.Caller { return migratetest.ScopedCaller(projectsScope("b")) }},
		{name: "403 rights in neither project", reason: resource.ReasonForbidden, caller: noRights},
		{name: "403 a virtualClusters entry for another instance of the source", reason: resource.ReasonForbidden,
			caller: func() migrate.Caller {
				return migratetest.ScopedCaller(&resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{
					{Project: "a", VirtualCluster: "other"}, {Project: "b", VirtualCluster: "*"}}})
			}},
		{name: "403 a named virtualClusters entry in the target does not allow a create", reason: resource.ReasonForbidden,
			caller: func() migrate.Caller {
				return migratetest.ScopedCaller(&resource.AccessKeyScope{VirtualClusters: []resource.AccessKeyScopeVirtualCluster{
					{Project: "a", VirtualCluster: "dev"}, {Project: "b", VirtualCluster: "dev"}}})
			}},
		{name: "403 read-only rights", reason: resource.ReasonForbidden,
			caller: func() migrate.Caller {
				return migratetest.ScopedCaller(&resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get", "list", "watch"}}}})
			}},
		{name: "403 an Authorizer of the host that denies", reason: resource.ReasonForbidden, msg: "no deletes on fridays",
			caller: func() migrate.Caller {
				return migrate.Caller{Authorizer: migrate.AuthorizerFunc(func(_ context.Context, r policy.Request) (bool, string) {
					return r.Verb != "delete", "no deletes on fridays"
				})}
			}},
		{name: "403 before 422 cluster", reason: resource.ReasonForbidden, caller: noRights, setup: setCluster("c9")},
		{name: "403 on a replay by a caller without the rights", reason: resource.ReasonForbidden,
			caller: func() migrate.Caller { return migratetest.ScopedCaller(projectsScope("b")) },
			setup:  func(e *migratetest.Env) { e.Migrate("b", migratetest.Request("mv", "p-a", "dev")) }},

		// 8. The target project's clusters.
		{name: "422 the target project does not allow the instance's cluster", reason: resource.ReasonInvalid,
			field: "spec.clusterRef.cluster", msg: `cluster "c9" is not allowed in project "b"`, setup: setCluster("c9")},
	}
}

func testChecks(t *testing.T, newStore newStoreFunc) {
	for _, c := range checkTable() {
		for _, dry := range []bool{false, true} {
			name := c.name
			if dry {
				name += " (dryRun)"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, newStore)
				if c.setup != nil {
					c.setup(e)
				}
				target, req, who := "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin()
				if c.target != "" {
					target = c.target
				}
				if c.req != nil {
					req = c.req()
				}
				if c.caller != nil {
					who = c.caller()
				}
				before, rev := e.State(), e.Revision()
				res, err := e.Service.Migrate(e.Ctx, target, req, who, migrate.RequestOptions{DryRun: dry})
				assert.Nil(t, res)
				requireReason(t, err, c.reason, c.field)
				if c.msg != "" {
					assert.Contains(t, err.Error(), c.msg)
				}
				assert.Equal(t, rev, e.Revision(), "the revision moved: something was written")
				assert.Equal(t, before, e.State(), "the state changed")
			})
		}
	}
}

func testAllowedCallers(t *testing.T, newStore newStoreFunc) {
	for _, c := range []struct {
		name  string
		scope *resource.AccessKeyScope
	}{
		{"admin key (nil scope)", nil},
		{"both projects", projectsScope("a", "b")},
		{"every project", projectsScope("*")},
		{"the instance in the source, every instance in the target", &resource.AccessKeyScope{
			VirtualClusters: []resource.AccessKeyScopeVirtualCluster{{Project: "a", VirtualCluster: "dev"}, {Project: "b", VirtualCluster: "*"}}}},
		{"rules for create and delete of virtualclusterinstances", &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{
			Verbs:      []string{"create", "delete"},
			Resources:  []resource.GroupResources{{Group: resource.Group, Resources: []string{"virtualclusterinstances"}}},
			Namespaces: []string{"p-a", "p-b"},
		}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, newStore)
			res, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.ScopedCaller(c.scope), migrate.RequestOptions{})
			require.NoError(t, err)
			assert.Equal(t, "p-b", res.Status.Namespace)
			assert.NotNil(t, e.Get("p-b", "dev"))
		})
	}
}

func testAllowedClusters(t *testing.T, newStore newStoreFunc) {
	for i, c := range []struct {
		name    string
		allowed []resource.AllowedCluster
		cluster string
	}{
		{"empty list allows every cluster", nil, "c9"},
		{"* allows every cluster", []resource.AllowedCluster{{Name: "x"}, {Name: "*"}}, "c9"},
		{"the cluster is listed", []resource.AllowedCluster{{Name: "x"}, {Name: "c9"}}, "c9"},
		{"an instance with no cluster passes", []resource.AllowedCluster{{Name: "x"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, newStore)
			p := migratetest.Project(fmt.Sprintf("t%d", i))
			p.Spec.AllowedClusters = c.allowed
			e.Create(p)
			setCluster(c.cluster)(e)
			res, err := e.Service.Migrate(e.Ctx, p.Name, migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{})
			require.NoError(t, err)
			assert.Equal(t, "p-"+p.Name, res.Status.Namespace)
		})
	}
}
