package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
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

// TestFairLimiter checks the seat rules of one in-flight bound: a flow over its share
// is refused at once, a full bound queues, a freed seat goes to the flows waiting in
// turn, a full queue and a request that stops waiting are refused.
func TestFairLimiter(t *testing.T) {
	acquire := func(t *testing.T, l *fairLimiter, key string) func() {
		t.Helper()
		release, err := l.acquire(context.Background(), key)
		require.NoError(t, err)
		return release
	}
	t.Run("a flow at its share is refused at once while seats are free", func(t *testing.T) {
		l := newFairLimiter(4, 2, 8)
		acquire(t, l, "a")
		acquire(t, l, "a")
		_, err := l.acquire(context.Background(), "a")
		assert.Equal(t, 429, resource.CodeOf(err))
		acquire(t, l, "b")
		assert.Equal(t, 3, l.inFlight())
	})
	t.Run("a freed seat goes to the flows waiting in turn, not to the flow with most waiting", func(t *testing.T) {
		l := newFairLimiter(2, 2, 8)
		held := []func(){acquire(t, l, "a"), acquire(t, l, "b")}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		wait := func(key string) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, err := l.acquire(context.Background(), key)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				order = append(order, key)
				mu.Unlock()
				release()
			}()
		}
		for range 3 {
			wait("a")
			waitQueued(t, l, "a")
		}
		wait("c")
		waitQueued(t, l, "c")
		held[0]() // one seat: a (first in turn), then c before a's other two
		wg.Wait()
		held[1]()
		assert.Equal(t, []string{"a", "c", "a", "a"}, order)
		assert.Equal(t, 0, l.inFlight())
		assert.Empty(t, l.flows, "idle flows are forgotten")
	})
	t.Run("a full queue is refused", func(t *testing.T) {
		l := newFairLimiter(1, 1, 0)
		release := acquire(t, l, "a")
		defer release()
		_, err := l.acquire(context.Background(), "b")
		assert.Equal(t, 429, resource.CodeOf(err))
	})
	t.Run("a request that stops waiting is refused and leaves the queue", func(t *testing.T) {
		l := newFairLimiter(1, 1, 4)
		release := acquire(t, l, "a")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { _, err := l.acquire(ctx, "b"); done <- err }()
		waitQueued(t, l, "b")
		cancel()
		assert.Equal(t, 429, resource.CodeOf(<-done))
		release()
		assert.Equal(t, 0, l.inFlight(), "the seat went to nobody")
		assert.Empty(t, l.flows)
	})
}

// waitQueued waits until flow key has a request waiting in l.
func waitQueued(t *testing.T, l *fairLimiter, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		f := l.flows[key]
		return f != nil && len(f.waiting) > 0
	}, 10*time.Second, time.Millisecond)
}

// TestFairness_one_key_floods_another_keeps_working floods a server with one key's
// requests (many connections trickling request bodies, unauthenticated trickles,
// heavy creates and lists) and checks that another key's creates, gets and lists all
// succeed meanwhile, while the flood is refused with 429.
func TestFairness_one_key_floods_another_keeps_working(t *testing.T) {
	b := memdb.New(memdb.Options{})
	defer b.Close()
	st, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	authn := BearerAuthenticator(func(_ context.Context, tok string) (*store.UserInfo, error) {
		switch tok {
		case "flood", "good":
			return &store.UserInfo{Name: tok}, nil
		}
		return nil, resource.NewUnauthorized("unknown token")
	})
	s, err := New(Config{Store: st, Resources: testResources(), Authenticator: authn,
		MaxRequestsInFlight: 8, MaxMutatingRequestsInFlight: 8})
	require.NoError(t, err)
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	const gv = "/apis/management.service/v1"
	for i := range 300 {
		require.NoError(t, st.Create(context.Background(), &resource.Project{ObjectMeta: resource.ObjectMeta{
			Name: fmt.Sprintf("seed-%03d", i)}, Spec: resource.ProjectSpec{Description: strings.Repeat("s", 2000)}}, store.CreateOptions{}))
	}

	stop := make(chan struct{})
	var flood sync.WaitGroup
	stopFlood := sync.OnceFunc(func() { close(stop); flood.Wait() })
	defer stopFlood()
	var mu sync.Mutex
	floodCodes := map[int]int{}
	count := func(code int) {
		mu.Lock()
		floodCodes[code]++
		mu.Unlock()
	}
	// Trickled bodies: each connection declares 4 KB and sends a byte every 20 ms.
	trickle := func(token string) {
		defer flood.Done()
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{", gv, token)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return // answered (429, 401) and closed
			}
		}
	}
	for range 40 {
		flood.Add(2)
		go trickle("flood")
		go trickle("nobody") // unauthenticated: 401 before it holds anything
	}
	client := &http.Client{Timeout: 30 * time.Second}
	do := func(token, method, path string, body []byte) (int, error) {
		req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	// Heavy requests: large creates and lists of everything, as fast as they go.
	big := []byte(fmt.Sprintf(`{"metadata":{"generateName":"big-"},"spec":{"description":%q}}`, strings.Repeat("b", 100<<10)))
	for i := range 8 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				method, path, body := "GET", gv+"/projects", []byte(nil)
				if i%2 == 0 {
					method, path, body = "POST", gv+"/projects", big
				}
				if code, err := do("flood", method, path, body); err == nil {
					count(code)
				}
			}
		}()
	}
	// Let the flood take what it can.
	time.Sleep(300 * time.Millisecond)

	for i := range 20 {
		name := fmt.Sprintf("good-%02d", i)
		code, err := do("good", "POST", gv+"/projects", []byte(fmt.Sprintf(`{"metadata":{"name":%q}}`, name)))
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, "create %d during the flood", i)
		code, err = do("good", "GET", gv+"/projects/"+name, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, "get %d during the flood", i)
		code, err = do("good", "GET", gv+"/projects?limit=10", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, "list %d during the flood", i)
	}
	stopFlood()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("the flood's heavy requests got %v", floodCodes)
	assert.Positive(t, floodCodes[http.StatusTooManyRequests], "the flood was refused in part")
}

// TestFairness_no_seat_before_authentication holds trickled request bodies of
// unknown callers open on a server with one mutating seat: they are answered 401
// before they take it, and a known caller's create gets it.
func TestFairness_no_seat_before_authentication(t *testing.T) {
	b := memdb.New(memdb.Options{})
	defer b.Close()
	st, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	authn := BearerAuthenticator(func(_ context.Context, tok string) (*store.UserInfo, error) {
		if tok == "good" {
			return &store.UserInfo{Name: tok}, nil
		}
		return nil, resource.NewUnauthorized("unknown token")
	})
	s, err := New(Config{Store: st, Resources: testResources(), Authenticator: authn, MaxMutatingRequestsInFlight: 1})
	require.NoError(t, err)
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	for range 3 {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		fmt.Fprintf(conn, "POST /apis/management.service/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer x\r\n"+
			"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{")
		line, err := bufio.NewReader(conn).ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, line, " 401 ", "an unknown caller is refused before its body is read")
	}
	_, mutating, _ := s.InFlight()
	assert.Zero(t, mutating)
	req, err := http.NewRequest("POST", ts.URL+"/apis/management.service/v1/projects", strings.NewReader(`{"metadata":{"name":"a"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer good")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
}

// TestBodyReadTimeout checks that the time a request has to send its body grows with
// the size it declares, within the request timeout.
func TestBodyReadTimeout(t *testing.T) {
	const maxBody = 3 << 20
	for _, c := range []struct {
		name   string
		length int64
		want   time.Duration
	}{
		{"a small body has the base time", 1 << 10, bodyReadBase + time.Second/16},
		{"a larger body has more", 256 << 10, bodyReadBase + 16*time.Second},
		{"no more than the request timeout", 3 << 20, time.Minute},
		{"a body of unknown size counts as the largest", -1, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.ContentLength = c.length
			assert.Equal(t, c.want, bodyReadTimeout(r, maxBody, time.Minute))
		})
	}
}
