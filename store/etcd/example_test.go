package etcd_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/etcd"
)

// Example runs a store on etcd, with an elector for its background work. The etcd
// here is embedded in the process; a deployment names its cluster's endpoints.
func Example() {
	endpoint, stop, err := embeddedEtcd()
	if err != nil {
		panic(err)
	}
	defer stop()

	ctx := context.Background()
	b, err := etcd.New(ctx, etcd.Options{Endpoints: []string{endpoint}, Prefix: "/example/"})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	elector, err := etcd.NewElector(b.Client(), etcd.ElectorOptions{Election: "/example-election"})
	if err != nil {
		panic(err)
	}
	s, err := store.New(b, store.Options{Elector: elector})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "demo"}}
	if err := s.Create(ctx, p, store.CreateOptions{}); err != nil {
		panic(err)
	}
	got := &resource.Project{}
	if err := s.Get(ctx, "", "demo", got, store.GetOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("created", got.Name, "with uid", got.UID == p.UID)

	// The keys in etcd: the prefix's revision base, and the project under the prefix.
	keys, err := b.Client().Get(ctx, "/example/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		panic(err)
	}
	for _, kv := range keys.Kvs {
		fmt.Println(string(kv.Key))
	}

	for !s.Leading() { // the only candidate wins the election
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("leading:", s.Leading())
	// Output:
	// created demo with uid true
	// /example/
	// /example//management.service/projects/demo
	// leading: true
}

// embeddedEtcd starts a single-member etcd on a free loopback port, with its data in
// a temporary directory, and returns its client URL and a function that stops it.
func embeddedEtcd() (string, func(), error) {
	dir, err := os.MkdirTemp("", "etcd-example-")
	if err != nil {
		return "", nil, err
	}
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		e.Close()
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("etcd not ready")
	}
	return client.String(), func() { e.Close(); _ = os.RemoveAll(dir) }, nil
}
