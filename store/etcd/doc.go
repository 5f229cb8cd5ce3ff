// Package etcd is a [backend.Backend] on an etcd cluster (go.etcd.io/etcd/client/v3):
// the backend for deployments that outgrow one machine, where several processes
// serve the same objects. It lives in a module of its own
// (github.com/management-service/mgmt/store/etcd), so that programs that embed the
// memdb or badger backend never download etcd's dependencies.
//
// # Basics
//
// [New] connects to etcd and returns a [Backend] on the keys under a prefix;
// [Options] name the cluster (Endpoints, or a *clientv3.Client of the caller's) and
// their other fields default:
//
//	b, err := etcd.New(ctx, etcd.Options{Endpoints: []string{"http://10.0.0.1:2379"}, Prefix: "/mgmt/"})
//	if err != nil { ... }
//	defer b.Close()
//	elector, err := etcd.NewElector(b.Client(), etcd.ElectorOptions{})
//	if err != nil { ... }
//	s, err := store.New(b, store.Options{Elector: elector})
//
// Every process of a deployment opens a backend on the same prefix; each store
// serves reads, writes and watches, and the [Elector] picks the one that runs the
// reaper and the garbage collector. [Backend] also implements [backend.Compactor].
//
// # Keys
//
// The backend key k is the etcd key Prefix+k; reads and watches cover the etcd range
// of the keys that start with Prefix, so several stores share one cluster under
// prefixes that are not prefixes of one another, and none sees the keys of another.
// The etcd key equal to Prefix itself is not a backend key: it records the prefix's
// revision base, and is left out of every range and watch.
//
// # Revisions
//
// The backend's revision is etcd's revision less the base: the etcd revision at which
// the first backend on the prefix recorded it (0 when keys were there already). So
// the revisions of a new prefix start at 1, as the contract asks, and are the same in
// every process on the prefix. Each transaction is one etcd transaction and gets one
// etcd revision; every write to the cluster moves the revision, so when other
// prefixes, elections or other programs share the cluster, a backend's revisions
// grow with gaps (strictly increasing, but not one by one).
//
// A read at the current revision is one linearizable etcd range. A read at a past
// revision is an etcd transaction of two ranges: the one asked for, with that
// revision, and a count of one key at the revision before, which etcd refuses once
// that revision is compacted. A transaction is an etcd transaction whose conditions
// compare each key's ModRevision (0: absent), whose success branch holds the puts and
// deletes, and whose failure branch reads the compared keys, so that the result names
// the first condition that failed.
//
// # Watch
//
// Each watcher has an etcd watch stream of its own, over the keys of its prefix from
// its start revision, with PrevKV, requiring a leader (a member cut off from the
// cluster ends the watch with an error instead of going silent). It reads at most
// [Options].WatchBuffer events ahead of its reader; past that it lets go of the etcd
// watch and opens it again from the next revision once the reader has caught up:
// etcd, not the process, keeps the backlog of a slow reader, and writers never wait.
// Progress events come from etcd's progress requests, which etcd answers only after
// it has sent every event up to the revision it reports.
//
// # Compaction
//
// An event at revision r carries the value its key had at r-1 (PrevKV), which etcd
// gives only while r-1 is not compacted. So the backend's compaction point is one
// above etcd's compaction revision: [Backend.Compact] at r compacts etcd at r-1, and
// when etcd is compacted at c, by the backend or by anyone else (etcd's
// --auto-compaction, another program), reads at c and below and watches from c and
// below fail with [backend.ErrCompacted]. A watcher whose next event lost its PrevKV
// to a compaction ends with [backend.ErrCompacted] too. etcd's compaction is
// cluster-wide: compacting through one backend compacts the history of every prefix.
//
// # Errors
//
// etcd's "required revision has been compacted" is [backend.ErrCompacted], "required
// revision is a future revision" [backend.ErrFutureRevision]; every call after
// [Backend.Close] returns [backend.ErrClosed]; a transaction too large for etcd
// (--max-request-bytes, 1.5 MiB by default, or the client's message limit) or with
// too many operations (--max-txn-ops, 128 by default) is [ErrTooLarge], which also
// matches [backend.ErrTxnTooLarge] and [backend.ErrInvalidArgument]. Other errors of the etcd client are wrapped.
//
// # Caveats
//
//   - A transaction whose context ends, or whose connection breaks, after etcd
//     received it may have been applied or not: etcd cannot tell. The store's
//     optimistic concurrency makes a retry safe: it fails its preconditions if the
//     first attempt was applied.
//   - The key equal to Prefix must not be deleted or rewritten: a backend opened after
//     that records a new base, and its revisions no longer match those the others
//     hand out.
//   - A leader whose lease expires while it cannot reach etcd stops leading before
//     etcd lets another candidate win (see [ElectorOptions].TTL); the store needs no
//     stricter fencing.
//   - etcd's Go modules need Go 1.26; so does this module.
package etcd
