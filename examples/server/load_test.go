package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loadRequests is how many requests of each kind the load test sends; the race
// detector slows everything about tenfold, so it sends fewer under it.
// MGMT_LOAD_REQUESTS overrides it, for measuring.
func loadRequests() int {
	if v, err := strconv.Atoi(os.Getenv("MGMT_LOAD_REQUESTS")); err == nil && v > 0 {
		return v
	}
	if raceEnabled {
		return 500
	}
	return 2000
}

// TestLoad runs 50 concurrent clients over loopback HTTP against the server: first a
// fixed number of DirectClusterEndpointToken creations, then as many gets and lists
// (alternating), within a time cap. It reports requests per second for each and
// fails on any error or non-2xx answer.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ts := startServer(t, nil)
	const clients = 50
	n := loadRequests()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: clients, MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	phase := func(name string, next func(i int) (method, path, body string, want int)) {
		var issued, failed atomic.Int64
		var firstErr atomic.Value
		start := time.Now()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(issued.Add(1)) - 1
					if i >= n || ctx.Err() != nil {
						return
					}
					method, path, body, want := next(i)
					var rb io.Reader
					if body != "" {
						rb = strings.NewReader(body)
					}
					req, _ := http.NewRequestWithContext(ctx, method, ts.URL+path, rb)
					req.Header.Set("Authorization", "Bearer "+teamKey)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != want {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, trim(b)))
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		done := min(int(issued.Load()), n)
		if ctx.Err() != nil {
			require.FailNow(t, fmt.Sprintf("%s: time cap reached after %d of %d requests", name, done, n))
		}
		if f := failed.Load(); f > 0 {
			require.FailNow(t, fmt.Sprintf("%s: %d of %d requests failed; first: %v", name, f, n, firstErr.Load()))
		}
		t.Logf("load: %-28s %5d requests, %2d clients, %7.0f requests/s (race detector: %v)",
			name, n, clients, float64(n)/d.Seconds(), raceEnabled)
	}
	phase("token creation", func(int) (string, string, string, int) {
		return "POST", gv + "/directclusterendpointtokens",
			`{"metadata":{"generateName":"load-"},"spec":{"ttl":600,"scope":{"projects":[{"project":"a"}]}}}`, 201
	})
	phase("get/list (alternating)", func(i int) (string, string, string, int) {
		if i%2 == 0 {
			return "GET", gv + "/projects/a", "", 200
		}
		return "GET", gv + "/namespaces/p-a/virtualclusterinstances", "", 200
	})
}
