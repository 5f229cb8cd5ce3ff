// Package migrate moves a VirtualClusterInstance from one project into another: the
// ProjectMigrateVirtualClusterInstance request of the management API
// (POST …/projects/<target>/migratevirtualclusterinstance), as a library. It imports
// only packages resource, store and policy; the HTTP server decodes the request,
// authenticates the caller and calls [Service.Migrate]. It also holds the rules that
// keep projects and their instances consistent on every write ([InstallProjectRules]).
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
// with the authorization first (decisions §1: a caller that may not see an object
// gets the same answer whether it exists or not), listed on [Service.Migrate];
// every refusal is a *resource.StatusError and changes nothing.
//
// # The project rules
//
// The same package holds the rules every write of a Project or a
// VirtualClusterInstance keeps (issue 20), as store admission hooks plus one
// background worker. A host gets them with one call before it builds its store,
// and starts the worker with the store:
//
//	var opts store.Options                                       // the host's other options too
//	rules, err := migrate.InstallProjectRules(&opts, migrate.ProjectRulesOptions{})
//	s, err := store.New(backend, opts)
//	stop, err := rules.Start(s)                                  // stop() before s.Close()
//
// Every store over a shared backend (several servers on one etcd) installs them;
// the worker acts only in the store that leads the background work
// ([store.Store.Leading]). The namespace prefix must be the one of the [Service].
// The rules, each refusal a Status error naming what it refuses:
//
//   - An instance lives only in the namespace of a project: a namespace without the
//     prefix is 422 (metadata.namespace), one of a missing project 404 naming the
//     project, and a create in a project being deleted 409. Updates of an instance
//     being deleted pass whatever its project's state, so that its finalizers can go.
//   - The label management.service/project is set by the server from the namespace
//     on every create and update; a client value that disagrees is 422.
//   - allowedClusters (empty or "*": every cluster) holds on every create and update
//     of an instance not being deleted (422 at spec.clusterRef.cluster naming the
//     cluster and the project), and a project update that would exclude the cluster
//     of one of its instances is 422 at spec.allowedClusters naming one.
//   - A project name is at most 63 − len(prefix) characters (422 naming the bound),
//     and its namespace must be a DNS label.
//   - A project carries the finalizer [FinalizerProjectInstances] (added on create
//     and on every update while it is not being deleted; the worker adds it to
//     projects from before the rules). Deleting the project only marks it; the
//     worker deletes its instances with a plain delete (their finalizers and grace
//     periods are theirs), reports in status.conditions what is left
//     ([ConditionInstancesRemaining], [ConditionInstanceFinalizersRemaining], with
//     the instances and finalizers named) and removes the finalizer once the
//     namespace is empty, in the same write as the last report. No client can remove
//     that finalizer while instances remain (422 naming one).
//
// The worker watches projects and instances, and looks at every project again when
// it starts, when its store becomes leader and every ResyncInterval: it keeps no
// state of its own, so a deletion interrupted by a restart or a crash resumes from
// what is stored.
//
// # Concurrency of the rules
//
// The hooks read what a rule depends on through the write's own transaction
// (store.AdmissionRequest.Tx), so the store runs the write again, hooks included,
// when that changes before the write commits:
//
//   - an instance write reads its project: a project update or deletion that commits
//     first makes it run again and see the new allowedClusters or the deletion mark;
//   - a project update that changes allowedClusters (or drops the finalizer) lists
//     the namespace in its transaction (store.Tx.List): an instance created,
//     updated or moved in that commits first makes it run again;
//   - a move ([Service.Migrate]) reads the target project in its transaction, and
//     its write of the moved instance passes the hooks in that same transaction.
//
// So the rules are race-free: once a project is marked, no create or move into it
// commits (each read the project and finds the mark, or its commit fails and it runs
// again), so the namespace the worker finds empty stays empty; and a project update
// that narrows allowedClusters and an instance write that uses a cluster it excludes
// never both commit.
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
// A record is named [Service.RecordName](target, name), "<target>.<name>", and
// the response carries the request's own name: a name is scoped by the project the
// move goes into, so no caller can take a name in a way that blocks, or answers,
// another project's move. A name clash within one target project is 409
// AlreadyExists naming only the request's target, never the recorded source.
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
// Forbidden naming what was denied and why, decided before anything is read: it
// names only what the request named, and is the same whether the instance, the
// project or a record exists or not. [ScopeAuthorizer] is the Authorizer of an
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
//   - A caller with the rights of the move (create in the target, delete of the
//     source) learns what such rights show in Kubernetes too: whether the source
//     exists (404) and whether its name is taken in the target (409).
//   - Project.status is new: a host whose schema refuses it gets no conditions, and
//     deletions finish anyway.
//   - A move larger than the backend commits in one transaction (badger: a share of
//     its memtable, some 3 MiB of objects by default) fails as a whole with a Status
//     error and changes nothing; what makes a move large is the instance and the
//     request, never the instance's children, which are not part of it. A dry run
//     does not reach the backend, so it does not find that out.
//
// # Testing
//
// Package migrate/migratetest holds the reliability suite of the move (REL-MIG-* and
// the crash test REL-CRASH-KILL9-MIGRATION), the suite of the project rules
// (RunProjectRules) and the crash test of a project's deletion
// (RunKill9ProjectDeletion), for every store backend, and the helpers this
// package's tests share.
package migrate
