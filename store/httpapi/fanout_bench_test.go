package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
)

// countingWriter is a watch client that reads as fast as the server writes: it counts
// the events (lines) of the stream and signals once it has seen want of them.
type countingWriter struct {
	header http.Header
	lines  atomic.Int64
	want   int64
	done   chan struct{}
	once   sync.Once
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Flush()              {}
func (w *countingWriter) Write(b []byte) (int, error) {
	if n := int64(bytes.Count(b, []byte("\n"))); n > 0 && w.lines.Add(n) >= w.want {
		w.once.Do(func() { close(w.done) })
	}
	return len(b), nil
}

// BenchmarkWatchFanout measures a watch event's way from a write to every watcher's
// stream: b.N creates of ~1 KB objects by 16 writers, each delivered to every one of
// the watchers (served in process, each to a client that reads at once). events/s
// is deliveries (events × watchers) per second.
func BenchmarkWatchFanout(b *testing.B) {
	for _, watchers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) { benchFanout(b, watchers) })
	}
}

func benchFanout(b *testing.B, watchers int) {
	be := memdb.New(memdb.Options{})
	defer be.Close()
	st, err := store.New(be, store.Options{})
	require.NoError(b, err)
	defer st.Close()
	s, err := New(Config{Store: st, Resources: testResources(), MaxWatches: watchers + 1, MaxWatchesPerUser: watchers + 1})
	require.NoError(b, err)
	defer s.Close()
	rev, err := be.Revision(context.Background())
	require.NoError(b, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := make([]*countingWriter, watchers)
	var served sync.WaitGroup
	for i := range ws {
		ws[i] = &countingWriter{header: http.Header{}, want: int64(b.N), done: make(chan struct{})}
		req := httptest.NewRequest("GET", fmt.Sprintf("/apis/management.service/v1/projects?watch=1&resourceVersion=%d", rev), nil)
		req = req.WithContext(ctx)
		served.Add(1)
		go func() { defer served.Done(); s.ServeHTTP(ws[i], req) }()
	}
	// Every watch is open once the store counts them.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, _, n := s.InFlight(); n == watchers {
			break
		}
		require.True(b, time.Now().Before(deadline), "watches did not open")
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let each watch reach the store
	desc := strings.Repeat("d", 800)
	const writers = 16
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%07d", i),
					Labels: map[string]string{"bench": "fanout"}}, Spec: resource.ProjectSpec{Description: desc}}
				if err := st.Create(context.Background(), p, store.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	timeout := time.After(5 * time.Minute)
	for i, w := range ws {
		select {
		case <-w.done:
		case <-timeout:
			require.FailNow(b, "events missing", "watcher %d saw %d of %d", i, w.lines.Load(), b.N)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)*float64(watchers)/elapsed.Seconds(), "events/s")
	cancel()
	served.Wait()
}

// latencyWriter is a watch client that records, for each event, the time from the
// start of the write that caused it (looked up by the object's name).
type latencyWriter struct {
	header  http.Header
	started *sync.Map // name → time.Time
	mu      sync.Mutex
	lat     []time.Duration
}

func (w *latencyWriter) Header() http.Header { return w.header }
func (w *latencyWriter) WriteHeader(int)     {}
func (w *latencyWriter) Flush()              {}
func (w *latencyWriter) Write(b []byte) (int, error) {
	now := time.Now()
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		_, rest, ok := bytes.Cut(line, []byte(`"name":"`))
		if !ok {
			continue
		}
		name, _, _ := bytes.Cut(rest, []byte(`"`))
		if t0, ok := w.started.Load(string(name)); ok {
			w.mu.Lock()
			w.lat = append(w.lat, now.Sub(t0.(time.Time)))
			w.mu.Unlock()
		}
	}
	return len(b), nil
}

// BenchmarkWatchLatency measures write→event latency (from the start of a create to
// the event in a watcher's stream) with 16 writers at 20 creates a second each (the
// issue's load), over b.N seconds, with 100 and 1,000 watchers; it reports the
// median and the 99th percentile in milliseconds.
func BenchmarkWatchLatency(b *testing.B) {
	for _, watchers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) { benchLatency(b, watchers) })
	}
}

func benchLatency(b *testing.B, watchers int) {
	be := memdb.New(memdb.Options{})
	defer be.Close()
	st, err := store.New(be, store.Options{})
	require.NoError(b, err)
	defer st.Close()
	s, err := New(Config{Store: st, Resources: testResources(), MaxWatches: watchers + 1, MaxWatchesPerUser: watchers + 1})
	require.NoError(b, err)
	defer s.Close()
	rev, err := be.Revision(context.Background())
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := &sync.Map{}
	ws := make([]*latencyWriter, watchers)
	var served sync.WaitGroup
	for i := range ws {
		ws[i] = &latencyWriter{header: http.Header{}, started: started}
		req := httptest.NewRequest("GET", fmt.Sprintf("/apis/management.service/v1/projects?watch=1&resourceVersion=%d", rev), nil)
		served.Add(1)
		go func() { defer served.Done(); s.ServeHTTP(ws[i], req.WithContext(ctx)) }()
	}
	require.Eventually(b, func() bool { _, _, n := s.InFlight(); return n == watchers }, 30*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	desc := strings.Repeat("d", 800)
	const writers, perSecond = 16, 20
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second / perSecond)
			defer tick.Stop()
			for i := range b.N * perSecond {
				<-tick.C
				name := fmt.Sprintf("w%02d-%06d", w, i)
				started.Store(name, time.Now())
				p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}, Spec: resource.ProjectSpec{Description: desc}}
				if err := st.Create(context.Background(), p, store.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	want := b.N * perSecond * writers
	require.Eventually(b, func() bool {
		for _, w := range ws {
			w.mu.Lock()
			n := len(w.lat)
			w.mu.Unlock()
			if n < want {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "every event arrives")
	b.StopTimer()
	var all []time.Duration
	for _, w := range ws {
		all = append(all, w.lat...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100])/1e6, "p99-ms")
	cancel()
	served.Wait()
}
