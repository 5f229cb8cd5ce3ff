// Package backend is the contract a storage backend implements for package store: an
// ordered map of keys to bytes with one global revision, atomic multi-key transactions
// that compare mod-revisions, reads at a past revision, watch from a revision, and
// optional compaction.
//
// It is for people who write a backend, as database/sql/driver is for people who write
// a database driver; people who embed the library use package store. A backend knows
// keys, bytes and revisions and nothing of objects: every metadata rule lives in store.
//
// # Basics
//
// [Backend] has six methods. Optional capabilities are separate interfaces found by
// type assertion: [Compactor]. Errors are sentinels checked with errors.Is:
// [ErrCompacted], [ErrFutureRevision], [ErrClosed], [ErrKeyNotFound],
// [ErrInvalidArgument].
//
// # Revisions
//
// Every transaction that changes something creates one revision, exactly one more
// than the previous; all keys it writes get that ModRevision and all its events carry
// it. Reads at a revision see exactly the transactions up to and including it.
//
// The package imports only the standard library. The conformance suite every backend
// must pass is store/storetest.RunBackend.
package backend
