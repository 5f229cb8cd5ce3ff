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

// lineWriter is a watch client that keeps every line of the stream.
type lineWriter struct {
	mu     sync.Mutex
	header http.Header
	buf    strings.Builder
}

func (w *lineWriter) Header() http.Header { return w.header }
func (w *lineWriter) WriteHeader(int)     {}
func (w *lineWriter) Flush()              {}
func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func (w *lineWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
}

// streamEvent is what the fan-out test reads of a line.
type streamEvent struct {
	Type   string `json:"type"`
	Object struct {
		Code     int `json:"code"`
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// TestWatchStream_fanout streams the creates of 4 writers to many watches, one of
// which stops reading: every other watch gets every event in order, each as the same
// bytes; the stalled one ends with a 410 ERROR event once it has fallen behind the
// ring, without holding up the others.
func TestWatchStream_fanout(t *testing.T) {
	b := memdb.New(memdb.Options{})
	defer b.Close()
	st, err := store.New(b, store.Options{WatchBuffer: 8, WatchCacheEvents: 256})
	require.NoError(t, err)
	defer st.Close()
	s, err := New(Config{Store: st, Resources: testResources()})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, st.Create(context.Background(), &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "first"}}, store.CreateOptions{}))
	rev, err := b.Revision(context.Background())
	require.NoError(t, err)
	url := fmt.Sprintf("/apis/management.service/v1/projects?watch=1&resourceVersion=%d", rev)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served sync.WaitGroup
	serve := func(w http.ResponseWriter) {
		served.Add(1)
		go func() {
			defer served.Done()
			s.ServeHTTP(w, httptest.NewRequest("GET", url, nil).WithContext(ctx))
		}()
	}
	stalled := &gatedWriter{header: http.Header{}, gate: make(chan struct{}), started: make(chan struct{})}
	serve(stalled)
	<-stalled.started
	watchers := make([]*lineWriter, 50)
	for i := range watchers {
		watchers[i] = &lineWriter{header: http.Header{}}
		serve(watchers[i])
	}
	require.Eventually(t, func() bool { _, _, n := s.InFlight(); return n == len(watchers)+1 }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // each watch reaches the store

	// Rounds of writes, each waiting for the watchers that read: the ring (256) is
	// never short for them, and the stalled one falls behind it.
	const writers, each, rounds = 4, 25, 8
	for round := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("r%d-w%d-%03d", round, w, i)}}
					if !assert.NoError(t, st.Create(context.Background(), p, store.CreateOptions{})) {
						return
					}
				}
			}()
		}
		wg.Wait()
		n := (round + 1) * writers * each
		require.Eventually(t, func() bool {
			for _, w := range watchers {
				if len(w.lines()) < n {
					return false
				}
			}
			return true
		}, 30*time.Second, time.Millisecond, "every watcher gets every event of round %d", round)
	}
	want := watchers[0].lines()
	last := int64(rev)
	for _, line := range want {
		var ev streamEvent
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		require.Equal(t, "ADDED", ev.Type, line)
		var n int64
		_, err := fmt.Sscan(ev.Object.Metadata.ResourceVersion, &n)
		require.NoError(t, err)
		require.Greater(t, n, last, "in order, once each")
		last = n
	}
	for i, w := range watchers[1:] {
		require.Equal(t, want, w.lines(), "watcher %d", i+1)
	}
	// The stalled stream: what it had, then 410.
	close(stalled.gate)
	require.Eventually(t, func() bool { _, _, n := s.InFlight(); return n == len(watchers) }, 30*time.Second, 10*time.Millisecond,
		"the stalled watch ended")
	lines := strings.Split(strings.TrimSpace(stalled.body.String()), "\n")
	var end streamEvent
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &end))
	assert.Equal(t, "ERROR", end.Type)
	assert.Equal(t, 410, end.Object.Code)
	assert.Equal(t, want[:len(lines)-1], lines[:len(lines)-1], "the stalled watch's events, in order")
	cancel()
	served.Wait()
}
