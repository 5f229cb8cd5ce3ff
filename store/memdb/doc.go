// Package memdb is a [backend.Backend] kept in memory, in go-memdb's immutable radix
// tree (hashicorp/go-immutable-radix): the backend of choice for tests, for the
// fixture of package store/storetest, and for programs whose data fits in memory and
// need not outlive the process.
//
// # Basics
//
// [New] returns an empty [Backend] at revision 0; [Options] tune it and their zero
// value gives the defaults:
//
//	b := memdb.New(memdb.Options{})
//	defer b.Close()
//	s, err := store.New(b, store.Options{})
//
// The keys live in a radix tree indexed by the key's bytes, which a write transaction
// updates without changing what earlier readers see. The tree is the one go-memdb's
// tables are made of, used directly: with one index and watches of its own, the
// backend has no use for go-memdb's tables, indexers and mutation channels, which
// cost a write about as much again as the tree itself. Write transactions are
// serialized; each commit creates one revision and keeps the immutable tree as of
// that revision (cheap: the new tree shares every node the commit did not touch)
// together with the events of that commit. The last [Options].HistoryRevisions
// revisions are kept in a ring: a read at a past revision is served from that
// revision's tree, and a watch replays the events from the ring before it streams
// new ones.
//
// Each watcher is a goroutine with a cursor in that history. It copies the events
// that match its prefix to its channel and sleeps, when caught up, until the next
// commit. Writers never wait for watchers.
//
// [Backend] also implements [backend.Compactor].
//
// # Caveats
//
//   - Nothing is durable: the data is gone when the process exits.
//   - Memory: the live data, plus for each kept revision the tree nodes its commit
//     replaced and its events. The bytes of a value are stored once and shared by the
//     data, the snapshots and the events; a value is released when no kept revision
//     and no key refers to it any longer. The history is bounded twice: by count
//     ([Options].HistoryRevisions, default 10000) and by bytes
//     ([Options].HistoryBytes, default 64 MiB, charging each revision the values it
//     wrote and those it replaced or deleted), whichever keeps fewer revisions. So a
//     workload that writes large values often keeps a short history rather than
//     10000 copies of them: 300 updates of a 1.4 MB object keep about 23 revisions.
//     [Backend.Compact] discards history on request.
//   - History is bounded by count and size, not by time: under a high write rate or
//     large values, a read at an old revision, a paged list that spans many writes,
//     or a slow watcher gets [backend.ErrCompacted] sooner. A watcher whose reader
//     stops ends with that error once the revision it needs next is discarded; it
//     never holds writers back, and it holds at most one batch of events besides its
//     channel's buffer.
//   - Every commit wakes every watcher, which then skips the events outside its
//     prefix: thousands of watchers cost CPU on each write even when few match.
//   - Values are kept as given to [Backend.Txn], not copied (see backend.Op), and
//     values returned by reads and events are shared with the store: callers must
//     not modify either.
package memdb
