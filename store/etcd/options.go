package etcd

import (
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Defaults of [Options].
const (
	// DefaultPrefix is the key prefix when [Options].Prefix is empty.
	DefaultPrefix = "/mgmt/"
	// DefaultDialTimeout bounds the dial and the first requests of [New] when
	// [Options].DialTimeout is zero or less.
	DefaultDialTimeout = 5 * time.Second
	// DefaultWatchBuffer is how many events a watcher reads ahead of its reader when
	// [Options].WatchBuffer is zero or less.
	DefaultWatchBuffer = 1024
	// DefaultProgressInterval is the longest a watcher that asked for progress waits,
	// idle, before it asks etcd again, when [Options].ProgressInterval is zero or less.
	DefaultProgressInterval = time.Second
)

// Options configure a [Backend]. The zero value is not enough on its own: name the
// etcd cluster with Endpoints or Client; every other field has a default.
type Options struct {
	// Client is an etcd client to use. The backend does not close it: its owner does,
	// after closing the backend. Set it to share one client between a backend and an
	// [Elector], or for TLS and authentication, which Endpoints alone do not set up.
	Client *clientv3.Client
	// Endpoints are the client URLs of the etcd cluster (http://host:2379, …), used
	// when Client is nil. The backend dials them with no TLS and no authentication,
	// and closes that client on [Backend.Close].
	Endpoints []string
	// DialTimeout bounds dialing Endpoints and the requests [New] makes to set the
	// backend up. Zero or less means [DefaultDialTimeout] (5 s).
	DialTimeout time.Duration
	// Prefix is put in front of every key, so that several stores share one etcd
	// cluster: the backend reads, writes and watches only keys under it, and its
	// callers see the keys without it. The key equal to Prefix itself holds the
	// backend's revision base and must not be written by anything else. Prefixes of
	// two stores must not be prefixes of one another ("/a/" and "/a/b/" overlap; "/a/"
	// and "/b/" do not): end them with a separator. Empty means [DefaultPrefix].
	Prefix string
	// WatchBuffer is how many events a watcher reads from etcd ahead of its reader.
	// When a reader falls further behind, the watcher stops reading from etcd (so the
	// process does not hold the backlog: etcd keeps it) and resumes from the next
	// revision once the reader has caught up; if etcd has compacted that revision by
	// then, the watcher ends with [backend.ErrCompacted]. Zero or less means
	// [DefaultWatchBuffer] (1024).
	WatchBuffer int
	// ProgressInterval is the longest a watcher that asked for progress
	// ([backend.WatchOptions].ProgressNotify) waits, with nothing to deliver, before it
	// asks etcd whether the revision moved on. It asks at once when an answer of etcd
	// to this backend (a write, a read, [Backend.Revision]) showed a newer revision;
	// the interval covers writes by other processes to keys the watcher does not
	// select, which nothing here announces. Zero or less means
	// [DefaultProgressInterval] (1 s).
	ProgressInterval time.Duration
}

// withDefaults checks o and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Client == nil && len(o.Endpoints) == 0 {
		return o, errors.New("etcd: Options need a Client or Endpoints")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	return o, nil
}
