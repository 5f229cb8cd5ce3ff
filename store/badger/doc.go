// Package badger is a durable [backend.Backend] on dgraph-io/badger/v4: the backend
// for programs whose objects must survive restarts and crashes. It is the only
// package of the library that imports badger.
//
// # Basics
//
// [Open] opens (or creates) a directory and returns a [Backend] at the revision the
// directory was at; [Options] tune it and their zero value gives the defaults:
//
//	b, err := badger.Open("/var/lib/mgmt", badger.Options{})
//	if err != nil { ... }
//	defer b.Close()
//	s, err := store.New(b, store.Options{})
//
// Options.InMemory runs the same code in badger's in-memory mode, for tests.
// [Backend] also implements [backend.Compactor], and a host can run badger's
// value-log garbage collection at a moment of its choosing with
// [Backend.RunValueLogGC].
//
// Every version of a key is written once, when it is made, at h/<key><revision>,
// and stays there until compaction no longer needs it; c/<key> says which version is
// current. Reads at a past revision are served from h/; the events of each revision
// (what a watch replays) are at e/<revision>, and the current revision at m/rev. A
// write stores its value once, so an update costs no more disk than a create. The
// writes of a revision to all four go into one badger transaction, so the data, the
// history, the event log and the revision always agree, after a crash too. Open
// refuses with [ErrLayout] a directory written in the layout of an earlier version
// of this package, which kept each current value in c/ and copied it to h/ when it
// was replaced.
//
// Write transactions go through one committer goroutine. It takes every transaction
// queued at that moment (up to 1,024 or about 4 MiB), checks their compares in
// queue order against the state the earlier ones of the batch leave, gives each
// successful one the next revision, and commits the whole batch in one badger
// transaction: one write and one sync to disk serve every writer of the batch, and
// writers never contend for the revision. A lone writer pays one sync per
// transaction (and commits it itself, without the trip through the committer);
// many writers share them. Left alone, concurrent writers would split
// into two cohorts that take turns, each commit serving half of them; so when a
// commit ends, the committer counts the writers of that batch and those that queued
// meanwhile, and waits for as many (at most half of the last commit's duration, and
// a millisecond) before it commits the next batch.
//
// A watcher reads the events of the latest revisions from memory and older ones from
// the event log, so a watch can resume from any revision at or above the compaction
// point, also after a restart. Writers never wait for watchers.
//
// Compaction keeps the last [Options].HistoryRevisions revisions (10,000 by
// default): a background loop raises the compaction point every
// [Options].CompactionInterval, and deletes the events and the past versions no
// readable revision needs, a few hundred revisions per badger transaction.
// [Backend.Compact] does the same on request.
//
// # Durability
//
// With synced writes (the default), a transaction returns only once its batch is
// synced to disk: an acknowledged write survives a crash of the process, of the
// operating system and a power loss, provided the disk honours syncs. With
// [Options].NoSync, a transaction returns once badger has written it to its
// memory-mapped log: it survives a crash of the process (kill -9 included), but the
// writes of the last seconds may be lost when the operating system crashes or the
// power fails.
//
// Either way, what a restart recovers is a prefix of the acknowledged history: whole
// transactions in revision order, never half of one, never a gap. A torn tail of
// badger's log (a crash in the middle of a write) loses only the transactions that
// were not yet acknowledged. The backend also records the revision it knows to be
// on disk, in a file next to badger's, on Close and, with synced writes, every
// second; Open refuses with [ErrDataLoss] a directory that comes up older than
// that, and with [ErrCorrupt] one whose tables or MANIFEST do not decode, rather
// than serve less than was committed or crash the process.
//
// # Caveats
//
//   - One process at a time: Open fails with [ErrLocked] when another Backend, in
//     this process or another, has the directory open.
//   - A transaction is bounded by badger's batch size, about 15% of
//     [Options].MemTableSize (about 9.6 MiB by default), and a key by 30,000 bytes:
//     a larger one fails with [backend.ErrInvalidArgument], without effect.
//   - A read at a past revision, and a paged list after the first page, walk the
//     history: they cost more than a read at the current revision, which looks up
//     where the current version is, then reads it. History is bounded by count, not by time: under a high write
//     rate, an old revision is compacted sooner.
//   - Badger's tables are compressed with zstd in blocks of 16 KiB, rather than
//     badger's default snappy in 4 KiB: similar objects take about a third of the
//     disk, but a read that misses badger's block cache decompresses 16 KiB (~10 µs).
//   - Disk space comes back after compaction only as badger compacts its tables.
//     Values under 1 MiB live in badger's tables, not its value log, so the value-log
//     garbage collection seldom has much to do.
//   - The recorded durable revision detects lost data, it cannot bring it back: a
//     truncated MANIFEST makes badger drop the newest tables before Open can
//     refuse. Keep backups.
//   - When a commit fails (a full or failing disk), the backend refuses every later
//     write with that error: the state on disk is unknown until it is reopened.
//   - Values returned by reads are copies the caller may keep. Values in events are
//     shared by every watcher that receives them: callers must not modify them.
package badger
