package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/management-service/mgmt/examples/server/internal/app"
	"github.com/management-service/mgmt/store/etcd/etcdtest"
)

// TestEtcd runs two servers on one etcd (--etcd-endpoints, the same prefix): they
// serve one store. What one writes the other reads, a stale write through one
// conflicts with a write through the other, and exactly one of them runs the
// reaper and the garbage collector.
func TestEtcd(t *testing.T) {
	endpoints := etcdtest.Start(t)
	withEtcd := func(o *app.Options) { o.EtcdEndpoints = endpoints; o.EtcdPrefix = "/server-test/" }
	one := startServer(t, withEtcd)
	two := startServer(t, withEtcd) // loads the same seed: what exists is kept

	created := one.do(t, req{method: http.MethodPost, path: gv + "/projects",
		body: []byte(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"shared"}}`)})
	expectStatus(t, created, http.StatusCreated, "create through one")
	got := two.do(t, req{method: http.MethodGet, path: gv + "/projects/shared"})
	expectStatus(t, got, http.StatusOK, "get through two")
	if uid := got.json(t)["metadata"].(map[string]any)["uid"]; uid != created.json(t)["metadata"].(map[string]any)["uid"] {
		t.Errorf("two servers, two objects: uid %v", uid)
	}
	rv := created.json(t)["metadata"].(map[string]any)["resourceVersion"].(string)
	update := func(ts *testServer, name string) response {
		return ts.do(t, req{method: http.MethodPut, path: gv + "/projects/shared",
			body: []byte(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"shared","resourceVersion":"` +
				rv + `"},"spec":{"displayName":"` + name + `"}}`)})
	}
	expectStatus(t, update(two, "by two"), http.StatusOK, "update through two")
	expectStatus(t, update(one, "by one"), http.StatusConflict, "the same stale update through one")

	deadline := time.Now().Add(30 * time.Second)
	for one.Store.Leading() == two.Store.Leading() {
		if time.Now().After(deadline) {
			t.Fatalf("leading: one %v, two %v; want exactly one", one.Store.Leading(), two.Store.Leading())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEtcdFlags checks that --etcd-endpoints is read as a list, and that the etcd
// flags refuse what would otherwise fall back to another storage quietly.
func TestEtcdFlags(t *testing.T) {
	o, err := app.ParseFlags([]string{"--etcd-endpoints", "http://127.0.0.1:2379, http://127.0.0.1:22379", "--etcd-prefix", "/x/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.EtcdEndpoints) != 2 || o.EtcdEndpoints[1] != "http://127.0.0.1:22379" || o.EtcdPrefix != "/x/" {
		t.Errorf("parsed %q %q", o.EtcdEndpoints, o.EtcdPrefix)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-endpoints", "http://127.0.0.1:2379", "--data-dir", t.TempDir()}, "exclude each other"},
		{[]string{"--etcd-endpoints", " , "}, "names no endpoint"},
		{[]string{"--etcd-prefix", "/x/"}, "goes with --etcd-endpoints"},
	} {
		if _, err := app.ParseFlags(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.want)
		}
	}
}
