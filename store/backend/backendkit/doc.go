// Package backendkit holds the machinery a backend of the [backend.Backend] contract
// needs whatever its storage: memdb, badger and etcd use it, and so may a backend
// written outside this repository. It provides the watchers of a
// backend's history ([Hub], fed by a [Source]) and the checks of a transaction
// ([ValidateTxn], [FailedCompare]).
//
// # Watchers
//
// A backend keeps a history of its revisions and a notify channel that it closes
// and replaces at each change (a commit, a compaction), under the same lock that
// guards its current revision. It implements [Source] over that history, builds one
// [Hub] with [NewHub], and its Watch calls [CheckWatch] and then, under its lock,
// [Hub.Start]. Each watcher is a goroutine with a cursor in the history: it asks the
// Source for the next batch of events that match its prefix, hands them to its
// channel, sends progress events when asked to, and sleeps on the notify channel once
// it has caught up. Writers never wait for it. While its reader does not take an
// event, it asks [Source.Lost] at every change whether the revision it needs next is
// still kept, and ends with the Source's error (wrapping backend.ErrCompacted) once it
// is not. [Scan] is the batch rule for a history kept in memory.
//
// # Transactions
//
// [ValidateTxn] is the check of a [backend.Txn] before the backend looks at its data;
// [FailedCompare] evaluates the compares against the state the backend reads.
//
// # Conformance
//
// A backend written elsewhere proves itself the way [testing/fstest.TestFS] serves
// an fs.FS: its test calls storetest.RunBackend (package store/storetest) with a
// constructor, and every case of the contract runs on a fresh backend. This
// package's toy_test.go holds a deliberately small backend (a map of key versions, a
// slice of events per revision, one mutex) built on this package that passes it;
// the package Example drives it.
//
// The package imports only the standard library and store/backend.
package backendkit
