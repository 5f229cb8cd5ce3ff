// Package store keeps objects with Kubernetes metadata semantics over a pluggable
// backend. It is the heart of the library: every metadata rule is written here, once,
// above the byte-and-revision contract of package store/backend, so the in-memory
// backend (store/memdb), the durable one (store/badger) and any other behave alike.
//
// # Basics
//
// Build a [Store] with [New] over a backend and use it from many goroutines:
//
//	s, err := store.New(memdb.New(memdb.Options{}), store.Options{})
//	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}}
//	err = s.Create(ctx, p, store.CreateOptions{})   // p now has uid, resourceVersion, …
//
// Writes fill the object they are given with the stored result. [Store.Txn] runs
// several reads and writes as one transaction committed at one revision.
//
// # Semantics
//
// The store follows kube-apiserver, with the choices of the project's design notes:
//
//   - resourceVersion is one global revision, a decimal string; a write transaction
//     is one revision even when it changes several objects; a list carries the
//     revision of its snapshot.
//   - uid and creationTimestamp are set on create; what a client sends there is
//     replaced. generation is 1 on create and goes up when anything outside metadata
//     and status changes, and when deletion starts.
//   - Updates need the resourceVersion they read (empty: 422; stale: 409); an update
//     that changes nothing writes nothing. Kinds with a status subresource keep
//     status on main updates; [Store.UpdateStatus] changes only status.
//   - Delete of an object with finalizers, or with a grace period, only sets
//     deletionTimestamp; the object goes with the write that removes its last
//     finalizer once the grace period is over, or is reaped by the store when the
//     period runs out (by the injectable [Clock]). Once terminating, finalizers can
//     only be removed.
//   - Owner references are garbage collected inside the store: dependents whose
//     owners are all gone are deleted; propagation policies Background, Foreground and
//     Orphan work as in Kubernetes. blockOwnerDeletion needs the [OwnerAuthorizer]'s
//     consent (422 otherwise, as the spec says).
//   - managedFields record, per field manager, the fields each write set.
//   - [Store.Apply] is Kubernetes' server-side apply (structured-merge-diff v6):
//     field ownership, 409 conflicts naming the owner, force, and lists merged as
//     the kind's [FieldType] declares them (Options.FieldTypes).
//   - Lists take label and field selectors and pages (limit/continue) served from one
//     snapshot; watches start at a resourceVersion, take selectors, send bookmarks,
//     and answer 410 Expired when what they need is no longer kept.
//   - Every write can be a dry run, and passes through admission hooks
//     ([MutatingAdmitter], then [ValidatingAdmitter]).
//
// # Errors
//
// Every error is a *resource.StatusError (or wraps one) with exactly one reason and
// HTTP code; check them with errors.Is(err, resource.ErrNotFound) and friends, or map
// them with resource.StatusOf.
//
// # Background work
//
// A store runs one goroutine that follows the backend's watch to reap expired grace
// periods and collect garbage; its index is rebuilt from stored state at start, so the
// work resumes after a restart. What that work needs of an object with owners or a
// deletion timestamp is kept in a small record beside it (under "\x00bg", outside
// "/"), written in the same transaction, so a store opens by reading those records,
// not every object; the label index of label-selector lists is built in the
// background after open (lists scan until it is ready). When its watch falls behind
// the history the backend keeps, the goroutine rebuilds the index from pages of the
// current state, never from one old revision. Its failures are retried and reported
// by [Store.Healthy], never a panic. [Store.Settle] waits for it, which makes tests
// deterministic; [Store.Close] stops it. Watches share one more backend watch, started
// with the first of them: each watch runs one goroutine that reads the events from
// it, each decoded and encoded once for all watches ([Event.JSON]), and sends its own
// copies (or, with WatchOptions.SharedObjects, the shared objects). A watch whose
// reader falls behind the latest [Options.WatchCacheEvents] events ends with 410
// Expired, and resumes from the last resourceVersion it got; a watch that starts
// before them follows the backend with a watch of its own until it has caught up.
// Bookmarks come about every [Options.BookmarkInterval], also to an idle or filtered
// watch.
//
// # Caveats
//
// A write works on a copy of the caller's object that is exactly what a JSON round
// trip of it gives (times in UTC at whole seconds, empty lists and maps absent), so
// fields without JSON encoding are lost; the caller gets back the object as stored. Field selectors support metadata.name and metadata.namespace only. Server-side
// apply is not implemented.
package store
