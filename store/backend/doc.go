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
// [ErrInvalidArgument], [ErrTxnTooLarge].
//
// # Revisions
//
// Every transaction that changes something creates one revision, larger than the
// previous; all keys it writes get that ModRevision and all its events carry it.
// Reads at a revision see exactly the transactions up to and including it. A backend
// that owns its counter (memdb, badger) counts one up per transaction; one that shares
// its counter with other writers (etcd, where several key prefixes and the leader
// election live on one cluster) may skip numbers, so callers must not assume that
// revision r+1 exists.
//
// The package imports only the standard library. The conformance suite every backend
// must pass is store/storetest.RunBackend.
package backend
