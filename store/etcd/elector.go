package etcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Defaults of [ElectorOptions].
const (
	// DefaultElection is the election's key prefix when [ElectorOptions].Election is
	// empty. It lies outside [DefaultPrefix].
	DefaultElection = "/mgmt-election"
	// DefaultElectionTTL is the lease of a candidate when [ElectorOptions].TTL is
	// zero or less.
	DefaultElectionTTL = 10 * time.Second
)

// resignTimeout bounds giving the leadership up when the campaign's context ends.
const resignTimeout = 5 * time.Second

// errLeaseLost ends a campaign whose lease could not be kept alive.
var errLeaseLost = errors.New("etcd: election lease lost")

// ElectorOptions configure an [Elector]. The zero value gives the defaults.
type ElectorOptions struct {
	// Election is the key prefix under which the candidates of one election put
	// their keys (etcd's concurrency.Election). Every store of one group uses the
	// same value. It must not lie under the Prefix of any backend on the cluster:
	// a backend would see the candidates' keys as its own. Empty means
	// [DefaultElection].
	Election string
	// TTL is the lease of each candidate's key. A leader that stops without giving
	// the leadership up (a crash, a network partition) is replaced about TTL later;
	// a leader that cannot reach etcd for two thirds of TTL gives the leadership up
	// on its own, before etcd lets another candidate win. etcd rounds it up to whole
	// seconds, and raises it to its minimum (about 1.5 times the election timeout).
	// Zero or less means [DefaultElectionTTL] (10 s).
	TTL time.Duration
	// Identity is the value of the candidate's key, to tell from etcd who leads.
	// Empty means host name, process id and a random suffix.
	Identity string
}

// Elector is a store.Elector on an etcd election (go.etcd.io/etcd/client/v3/
// concurrency): of the stores that share one etcd cluster, the one whose elector
// holds the election runs the reaper and the garbage collector. Pass one Elector to
// each store, as store.Options.Elector. It is safe for concurrent use.
type Elector struct {
	cli      *clientv3.Client
	election string
	ttl      time.Duration
	identity string
}

// NewElector returns an elector that campaigns with cli. The elector does not close
// cli.
func NewElector(cli *clientv3.Client, opts ElectorOptions) (*Elector, error) {
	if cli == nil {
		return nil, errors.New("etcd: NewElector needs a client")
	}
	e := &Elector{cli: cli, election: opts.Election, ttl: opts.TTL, identity: opts.Identity}
	if e.election == "" {
		e.election = DefaultElection
	}
	if e.ttl <= 0 {
		e.ttl = DefaultElectionTTL
	}
	if e.identity == "" {
		host, _ := os.Hostname()
		var r [4]byte
		_, _ = rand.Read(r[:])
		e.identity = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(r[:]))
	}
	return e, nil
}

// Campaign blocks until this elector leads, then returns a channel that is closed
// when the leadership ends: when ctx ends (the elector then resigns, so that
// another candidate takes over at once), or when the candidate's lease is lost or
// has not been renewed for two thirds of its TTL. It returns ctx's error if ctx
// ends first, and etcd's if the campaign fails.
//
// Each campaign has a lease of its own (a concurrency.Session), revoked when the
// campaign fails or the leadership ends.
func (e *Elector) Campaign(ctx context.Context) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ttl := int64((e.ttl + time.Second - 1) / time.Second)
	grant, err := e.cli.Grant(ctx, ttl)
	if err != nil {
		return nil, fmt.Errorf("etcd: election lease: %w", err)
	}
	// lctx keeps the lease alive; release ends it and revokes the lease, which
	// deletes the candidate's key if it is still there.
	lctx, stopKeepAlive := context.WithCancel(context.Background())
	release := func() {
		stopKeepAlive()
		rctx, cancel := context.WithTimeout(context.Background(), resignTimeout)
		defer cancel()
		_, _ = e.cli.Revoke(rctx, grant.ID)
	}
	ka, err := e.cli.KeepAlive(lctx, grant.ID)
	if err != nil {
		release()
		return nil, fmt.Errorf("etcd: election lease: %w", err)
	}
	alive := watchLease(ka, time.Duration(grant.TTL)*time.Second*2/3)
	session, err := concurrency.NewSession(e.cli, concurrency.WithLease(grant.ID), concurrency.WithContext(lctx))
	if err != nil {
		release()
		return nil, fmt.Errorf("etcd: election session: %w", err)
	}
	election := concurrency.NewElection(session, e.election)

	// A campaign whose lease dies while it waits must not win with a key that is
	// gone: end it.
	cctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(alive, cancel)
	err = election.Campaign(cctx, e.identity)
	stop()
	cancel()
	if err != nil {
		release()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case alive.Err() != nil:
			return nil, errLeaseLost
		}
		return nil, fmt.Errorf("etcd: campaign: %w", err)
	}
	lost := make(chan struct{})
	go func() {
		// The leadership ends here first, then in etcd: never the other way round.
		select {
		case <-alive.Done():
			close(lost)
		case <-ctx.Done():
			close(lost)
			rctx, cancel := context.WithTimeout(context.Background(), resignTimeout)
			_ = election.Resign(rctx)
			cancel()
		}
		release()
	}()
	return lost, nil
}

// watchLease reads the keep-alive answers of a lease and returns a context that ends
// when they stop (the lease expired, was revoked, or the keep-alive ended), or
// when none came for limit. etcd renews a lease every third of its TTL, so with a
// limit of two thirds of the TTL a leader that lost touch with etcd gives up before
// etcd lets its lease expire.
func watchLease(ka <-chan *clientv3.LeaseKeepAliveResponse, limit time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		timer := time.NewTimer(limit)
		defer timer.Stop()
		for {
			select {
			case resp, ok := <-ka:
				if !ok || resp == nil || resp.TTL <= 0 {
					return
				}
				timer.Reset(limit)
			case <-timer.C:
				return // the client drops answers nobody reads: no need to drain ka
			}
		}
	}()
	return ctx
}
