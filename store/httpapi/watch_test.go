package httpapi

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// TestWatchErrorEvent makes a watch fall behind a store and a backend that keep little
// history: the stream ends with an ERROR event whose object is a 410 Expired Status.
// (A watch behind the backend's history but within the store's watch cache goes on,
// as one of kube-apiserver's does.)
func TestWatchErrorEvent(t *testing.T) {
	ctx := context.Background()
	b := memdb.New(memdb.Options{HistoryRevisions: 5, WatchBuffer: 1})
	defer b.Close()
	st, err := store.New(b, store.Options{WatchBuffer: 1, WatchCacheEvents: 8})
	require.NoError(t, err)
	defer st.Close()
	s, err := New(Config{Store: st, Resources: testResources(), BasePath: "/base"})
	require.NoError(t, err)
	defer s.Close()
	rv, err := b.Revision(ctx)
	require.NoError(t, err)
	// A client that does not read: the first write of the stream blocks until the
	// gate opens.
	w := &gatedWriter{header: http.Header{}, gate: make(chan struct{}), started: make(chan struct{})}
	req := httptest.NewRequest("GET", "/base/apis/management.service/v1/projects?watch=1&resourceVersion="+
		fmt.Sprint(rv), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(w, req)
	}()
	<-w.started
	// Write while the stream is stuck, until the watch has fallen behind what the
	// store's watch cache keeps (its ring of 8 events, past the watch's buffer and
	// the batch it holds) and what the backend keeps.
	for i := 0; i < 100; i++ {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%d", i)}}
		require.NoError(t, st.Create(ctx, p, store.CreateOptions{}))
	}
	close(w.gate)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		require.Fail(t, "the watch did not end after falling behind")
	}
	lines := strings.Split(strings.TrimSpace(w.body.String()), "\n")
	var last struct {
		Type   string
		Object map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
	assert.Equal(t, 200, w.code)
	assert.Equal(t, "ERROR", last.Type, "after %d events, want an ERROR event with a 410 Status", len(lines))
	assert.Equal(t, "Status", last.Object["kind"])
	assert.Equal(t, float64(410), last.Object["code"])
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
