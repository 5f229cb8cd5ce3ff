// Package migrate moves a VirtualClusterInstance from one project into another: the
// ProjectMigrateVirtualClusterInstance request of the management API
// (POST …/projects/<target>/migratevirtualclusterinstance), as a library. It imports
// only packages resource, store and policy; the HTTP server decodes the request,
// authenticates the caller and calls [Service.Migrate].
//
// # Using it
//
//	svc, err := migrate.New(s, migrate.Options{})            // project namespaces "p-<project>"
//	auth, err := migrate.ScopeAuthorizer(accessKey.Spec.Scope) // nil scope: the admin key
//	res, err := svc.Migrate(ctx, "team-b", &resource.ProjectMigrateVirtualClusterInstance{
//		ObjectMeta:                   resource.ObjectMeta{Name: "move-dev-1"},
//		SourceVirtualClusterInstance: resource.SourceVirtualClusterInstance{Namespace: "p-team-a", Name: "dev"},
//	}, migrate.Caller{User: user, Authorizer: auth}, migrate.RequestOptions{})
//	// res.Status: {namespace: p-team-b, name: dev, uid: <the new uid>}
//
// The checks and their order are those of the project's design notes (decisions §5),
// listed on [Service.Migrate]; every refusal is a *resource.StatusError and changes
// nothing.
//
// # The move
//
// One store transaction ([store.Store.Txn]) does all of it, at one revision:
//
//   - the source instance is removed without running its finalizers
//     (store.DeleteOptions.SkipFinalizers), and the store records where it went
//     (store.DeleteOptions.MovedTo);
//   - an instance of the same name appears in the target project's namespace, with
//     the same spec, labels, annotations and finalizers, the label
//     management.service/project rewritten to the target project, a new uid (the
//     store's), and the move recorded in the annotations
//     management.service/migrated-from ("<namespace>/<name>" of the source) and
//     management.service/migrated-from-uid (the uid it had);
//   - its status is carried over unchanged, written through the status path in the
//     same transaction: the virtual cluster itself does not move, so what its
//     controller observed stays true, and no reader sees a moved instance without
//     its phase;
//   - the request is recorded as a ProjectMigrateVirtualClusterInstance (see below).
//
// A reader, list or watcher therefore never sees zero or two copies: a list (of one
// snapshot) shows the instance in exactly one namespace, and a watcher of all
// namespaces gets the DELETED of the source and the ADDED of the copy with the same
// resourceVersion, in that order. When a concurrent write touches what the move read
// (the instance, the projects, the target name, the record), the store runs the
// transaction again on fresh data: the move then carries that write along, or its
// checks refuse it. A concurrent update of the source that lands after the move is
// refused with 409 Conflict naming the instance's new namespace (the store's answer
// to an update based on an object that moved away): the writer's copy is stale, as
// after any concurrent write, and it reads the instance again at its new place. One
// that lands before is moved with the instance. Either way nothing is lost and no
// half move is ever visible.
//
// What follows from the new uid, and how metadata is carried:
//
//   - generation starts again at 1, creationTimestamp is the time of the move, and
//     managedFields start afresh with one entry of the service's field manager;
//   - owner references to namespaced owners are dropped (the owner stays in the
//     source namespace and could not own an object in another one: the garbage
//     collector would delete the moved instance); a reference to the source project
//     (kind Project, named after the source namespace) is rewritten to the target
//     project; every other reference is kept;
//   - objects that named the source instance as their owner (by its uid) are
//     garbage collected, as after any delete: the move does not re-parent them.
//
// # Idempotency
//
// The request is recorded in the same transaction as the move, as a stored,
// cluster-scoped ProjectMigrateVirtualClusterInstance named after the request, with
// the request's metadata, the label management.service/project set to the target
// project, the source it named and the status of the result. A request whose name is
// recorded answers the recorded result (the same object, resourceVersion included)
// and moves nothing, even when the instance has moved on since: the record decides.
// Two concurrent requests of one name never both move: the first to commit writes
// the record, the other runs again and finds it. A name recorded for another source
// or target is 409 AlreadyExists. generateName gives each request a fresh record;
// a request with neither name nor generateName gets generateName [DefaultGenerateName].
// Records are never removed by this package; a host that wants to expire them
// deletes them through the store (a later request of the same name then moves again).
//
// # Authorization
//
// A caller is a [Caller]: the user passed to the store's writes, and an [Authorizer]
// that answers "may the caller make this request?" for requests described as the
// policy engine describes them (policy.Request). The move needs two rights, each
// asked separately:
//
//	create virtualclusterinstances.management.service in namespace <prefix><target>   (Project: target, no name)
//	delete virtualclusterinstances.management.service "<name>" in <source namespace>  (Project: the source's project)
//
// both as Management requests; the project of a namespace is the namespace without
// the configured prefix (none when it lacks the prefix). A denial of either is 403
// Forbidden naming what was denied and why. [ScopeAuthorizer] is the Authorizer of an
// access key's scope, evaluated by package policy (nil scope: the admin key, no
// restriction); a host with a role model on top of scopes passes an Authorizer of its
// own (or an [AuthorizerFunc]). A Caller without an Authorizer may do nothing. The
// right to call the endpoint itself (create projects/migratevirtualclusterinstance
// on the target project) is the HTTP server's to check, like that of every route:
// this package decides only on the rights the move exercises.
//
// # Caveats
//
//   - Records are kept forever unless the host deletes them.
//   - Only the instance object moves: the virtual cluster it describes, and any
//     host-side object labelled with the old project, are not touched.
//   - A 404 for the source instance comes before the 403, as the design notes order
//     the checks, so a caller without rights learns whether an instance exists.
//   - A move larger than the backend commits in one transaction (badger: a share of
//     its memtable, some 3 MiB of objects by default) fails as a whole with a Status
//     error and changes nothing; what makes a move large is the instance and the
//     request, never the instance's children, which are not part of it. A dry run
//     does not reach the backend, so it does not find that out.
//
// # Testing
//
// Package migrate/migratetest holds the reliability suite of the move (REL-MIG-* and
// the crash test REL-CRASH-KILL9-MIGRATION), for every store backend, and the
// helpers this package's tests share.
package migrate
