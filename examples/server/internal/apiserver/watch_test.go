package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/token"
)

// TestWatchErrorEvent makes a watch fall behind a backend that keeps little history:
// the stream ends with an ERROR event whose object is a 410 Expired Status.
func TestWatchErrorEvent(t *testing.T) {
	ctx := context.Background()
	b := memdb.New(memdb.Options{HistoryRevisions: 5, WatchBuffer: 1})
	defer b.Close()
	scheme := resource.NewScheme()
	if err := token.RegisterKinds(scheme); err != nil {
		t.Fatal(err)
	}
	st, err := store.New(b, store.Options{Scheme: scheme, WatchBuffer: 1, Mutating: []store.MutatingAdmitter{AccessKeyAdmitter()}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := token.NewKeySet(token.KeySetOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := token.NewIssuer(st, keys, token.IssuerOptions{Issuer: "https://example.test/kubernetes/management"})
	if err != nil {
		t.Fatal(err)
	}
	mig, err := migrate.New(st, migrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "admin"},
		Spec: resource.AccessKeySpec{Key: "k-0123456789"}}, store.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Issuer: iss, Migrator: mig})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for !s.Ready() {
		time.Sleep(time.Millisecond)
	}
	rv, err := b.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A client that does not read: the first write of the stream blocks until the
	// gate opens.
	w := &gatedWriter{header: http.Header{}, gate: make(chan struct{}), started: make(chan struct{})}
	req := httptest.NewRequest("GET", DefaultBasePath+"/apis/management.service/v1/projects?watch=1&resourceVersion="+
		fmt.Sprint(rv), nil)
	req.Header.Set("Authorization", "Bearer k-0123456789")
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(w, req)
	}()
	<-w.started
	// Write while the stream is stuck, until the watch has fallen behind what the
	// backend keeps.
	for i := 0; i < 30; i++ {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%d", i)}}
		if err := st.Create(ctx, p, store.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	close(w.gate)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end after falling behind")
	}
	lines := strings.Split(strings.TrimSpace(w.body.String()), "\n")
	var last struct {
		Type   string
		Object map[string]any
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if w.code != 200 || last.Type != "ERROR" || last.Object["kind"] != "Status" || last.Object["code"] != float64(410) {
		t.Fatalf("code %d; after %d events the stream ended with %s %v, want an ERROR event with a 410 Status",
			w.code, len(lines), last.Type, last.Object)
	}
}

// gatedWriter is a ResponseWriter whose writes wait for gate once the header is out.
type gatedWriter struct {
	header  http.Header
	code    int
	body    strings.Builder
	gate    chan struct{}
	started chan struct{}
	once    sync.Once
}

func (g *gatedWriter) Header() http.Header { return g.header }
func (g *gatedWriter) WriteHeader(code int) {
	g.code = code
	g.once.Do(func() { close(g.started) })
}
func (g *gatedWriter) Write(b []byte) (int, error) {
	<-g.gate
	return g.body.Write(b)
}
func (g *gatedWriter) Flush() {}
