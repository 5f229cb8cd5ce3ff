// Package etcdtest starts real etcd servers (go.etcd.io/etcd/server/v3/embed) on
// loopback ports, in process, for tests: of this module, and of programs that use
// the etcd backend (the example server). Nothing needs to be installed.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

var clusterSeq atomic.Int64

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartCluster starts one etcd member per directory of dirs, as one cluster, and
// waits until every member is ready. noSync skips etcd's fsyncs (fast, and enough
// for tests that do not crash the machine). It tries again, on new ports and emptied
// directories, when a start fails (a port taken in between, say). The caller closes
// the members.
func StartCluster(ctx context.Context, dirs []string, noSync bool) ([]*embed.Etcd, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var members []*embed.Etcd
		if members, err = tryStart(ctx, dirs, noSync); err == nil {
			return members, nil
		}
		for _, d := range dirs { // a failed start may leave a half-made data dir
			_ = os.RemoveAll(d)
			_ = os.MkdirAll(d, 0o700)
		}
	}
	return nil, err
}

func tryStart(ctx context.Context, dirs []string, noSync bool) ([]*embed.Etcd, error) {
	peer := make([]url.URL, len(dirs))
	client := make([]url.URL, len(dirs))
	var initial []string
	for i := range dirs {
		pp, err := FreePort()
		if err != nil {
			return nil, err
		}
		cp, err := FreePort()
		if err != nil {
			return nil, err
		}
		peer[i] = url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pp)}
		client[i] = url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cp)}
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peer[i].String()))
	}
	token := fmt.Sprintf("mgmt-test-%d-%d", os.Getpid(), clusterSeq.Add(1))
	var members []*embed.Etcd
	stopAll := func() {
		for _, m := range members {
			m.Close()
		}
	}
	for i, dir := range dirs {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = dir
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = noSync
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer[i]}, []url.URL{peer[i]}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client[i]}, []url.URL{client[i]}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = token
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		members = append(members, e)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, e := range members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			stopAll()
			return nil, fmt.Errorf("%s: %w", e.Config().Name, err)
		case <-ctx.Done():
			stopAll()
			return nil, fmt.Errorf("%s not ready: %w", e.Config().Name, ctx.Err())
		}
	}
	return members, nil
}

// Endpoints returns the client URLs of a member.
func Endpoints(e *embed.Etcd) []string {
	var out []string
	for _, u := range e.Config().AdvertiseClientUrls {
		out = append(out, u.String())
	}
	return out
}

// Start starts a single-member etcd without fsyncs in a temporary directory of t,
// stopped when t ends, and returns its client URLs.
func Start(t testing.TB) []string {
	t.Helper()
	members, err := StartCluster(context.Background(), []string{t.TempDir()}, true)
	if err != nil {
		require.NoError(t, err, "etcdtest")
	}
	t.Cleanup(members[0].Close)
	return Endpoints(members[0])
}
