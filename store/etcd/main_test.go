package etcd_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/store/etcd"
	"github.com/management-service/mgmt/store/etcd/etcdtest"
)

// sharedEndpoints are the client URLs of the single-member etcd that TestMain starts
// for the whole test binary. Each test works under a prefix of its own
// (testPrefix), so tests do not see each other's keys.
var sharedEndpoints []string

func TestMain(m *testing.M) {
	if migratetest.InKill9Child() {
		// The child of the migration crash test reaches the parent's etcd.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "mgmt-store-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd test: temp dir:", err)
		os.Exit(1)
	}
	members, err := startCluster(context.Background(), []string{dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "etcd test: start etcd:", err)
		os.Exit(1)
	}
	sharedEndpoints = members[0].endpoints
	code := m.Run()
	for _, f := range afterAll {
		f()
	}
	members[0].stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// afterAll are run by TestMain after the tests, to stop what they started for the
// whole binary.
var afterAll []func()

var prefixSeq atomic.Int64

// testPrefix returns a key prefix no other test uses.
func testPrefix() string {
	return fmt.Sprintf("/test/%05d/", prefixSeq.Add(1))
}

// newBackend returns a backend on the shared etcd under a fresh prefix, with its own
// client, closed when the test ends.
func newBackend(t testing.TB, opts etcd.Options) *etcd.Backend {
	t.Helper()
	if opts.Client == nil && opts.Endpoints == nil {
		opts.Endpoints = sharedEndpoints
	}
	if opts.Prefix == "" {
		opts.Prefix = testPrefix()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := etcd.New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// member is one embedded etcd server.
type member struct {
	name      string
	e         *embed.Etcd
	endpoints []string
	stopped   atomic.Bool
	closed    chan struct{} // closed once the server is closed
}

// stop closes the member's server and waits until it is closed; it may be called
// more than once.
func (m *member) stop() {
	if m.stopped.CompareAndSwap(false, true) {
		m.e.Close()
		close(m.closed)
	}
	<-m.closed
}

// crash stops the member as a crash would: its raft node stops at once, without
// handing its leadership over, and its requests fail from then on. Its listeners
// close in the background (a graceful close of the gRPC server waits for the
// clients' streams); stop waits for that.
func (m *member) crash() {
	if m.stopped.CompareAndSwap(false, true) {
		m.e.Server.HardStop()
		go func() {
			m.e.Close()
			close(m.closed)
		}()
	}
}

func freePort() (int, error) { return etcdtest.FreePort() }

func startCluster(ctx context.Context, dirs []string) ([]*member, error) {
	return startClusterWith(ctx, dirs, true)
}

// startClusterWith starts a cluster of one member per directory (etcdtest), with
// fsyncs unless noSync.
func startClusterWith(ctx context.Context, dirs []string, noSync bool) ([]*member, error) {
	es, err := etcdtest.StartCluster(ctx, dirs, noSync)
	if err != nil {
		return nil, err
	}
	members := make([]*member, len(es))
	for i, e := range es {
		members[i] = &member{name: e.Config().Name, e: e, endpoints: etcdtest.Endpoints(e), closed: make(chan struct{})}
	}
	return members, nil
}

// newCluster starts a cluster of n members for one test, stopped when it ends.
func newCluster(t *testing.T, n int) []*member {
	t.Helper()
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	members, err := startCluster(t.Context(), dirs)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, m := range members {
			m.stop()
		}
	})
	return members
}
