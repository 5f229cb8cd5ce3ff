package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Target is one server under comparison: where its API root is and how to
// authenticate to it.
type Target struct {
	// Name is "kube" or "ours".
	Name string
	// Base is the URL of the API root: scheme, host and base path, without a
	// trailing slash.
	Base string
	// Client sends the requests (TLS settings, client certificate).
	Client *http.Client
	// Header is added to every request (Authorization).
	Header http.Header
	// Verbose prints each request on Log.
	Verbose bool
	// Log receives the verbose lines.
	Log io.Writer
}

// Response is what a request got back.
type Response struct {
	// Code is the HTTP status code.
	Code int
	// Header holds the response headers.
	Header http.Header
	// Body is the raw body.
	Body []byte
	// Events holds the events of a watch, in the order received.
	Events []Event
}

// Event is one event of a watch stream.
type Event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// userAgent is sent by every request, so that both servers name the same field
// manager ("kubediff").
const userAgent = "kubediff/v1.0.0 (linux/amd64) kubediff/differential"

func (t *Target) newRequest(ctx context.Context, method, path, query string, header map[string]string, body string) (*http.Request, error) {
	u := t.Base + path
	if query != "" {
		u += "?" + query
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", userAgent)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if t.Verbose && t.Log != nil {
		fmt.Fprintf(t.Log, "  %s %s %s\n", t.Name, method, u)
	}
	return req, nil
}

// Do sends one request and reads the whole answer.
func (t *Target) Do(ctx context.Context, method, path, query string, header map[string]string, body string) (*Response, error) {
	req, err := t.newRequest(ctx, method, path, query, header, body)
	if err != nil {
		return nil, err
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", t.Name, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s %s: %w", t.Name, method, path, err)
	}
	return &Response{Code: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Watch is an open watch stream.
type Watch struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan Event
	done   chan struct{}
	err    error
}

// StartWatch opens a watch; the events arrive on the stream until Stop. A watch
// refused (a status code other than 200) is returned as a Response with no stream.
func (t *Target) StartWatch(ctx context.Context, path, query string, header map[string]string) (*Watch, *Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := t.newRequest(ctx, http.MethodGet, path, query, header, "")
	if err != nil {
		cancel()
		return nil, nil, err
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%s: watch %s: %w", t.Name, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return nil, &Response{Code: resp.StatusCode, Header: resp.Header, Body: b}, nil
	}
	w := &Watch{resp: resp, cancel: cancel, events: make(chan Event, 1024), done: make(chan struct{})}
	go w.read()
	return w, &Response{Code: resp.StatusCode, Header: resp.Header}, nil
}

// read decodes the stream: JSON objects one after the other (one per line on both
// servers, but a decoder does not rely on it).
func (w *Watch) read() {
	defer close(w.done)
	defer close(w.events)
	dec := json.NewDecoder(bufio.NewReader(w.resp.Body))
	for {
		var e Event
		if err := dec.Decode(&e); err != nil {
			if err != io.EOF {
				w.err = err
			}
			return
		}
		w.events <- e
	}
}

// Collect gathers events until n have arrived (n > 0), the stream ends, or wait has
// passed; then it waits settle longer for events beyond n, so that an extra event is
// seen.
func (w *Watch) Collect(n int, wait, settle time.Duration) []Event {
	var out []Event
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if n > 0 && len(out) >= n {
			break
		}
		select {
		case e, ok := <-w.events:
			if !ok {
				return out
			}
			out = append(out, e)
			continue
		case <-deadline.C:
			return out
		}
	}
	t := time.NewTimer(settle)
	defer t.Stop()
	for {
		select {
		case e, ok := <-w.events:
			if !ok {
				return out
			}
			out = append(out, e)
		case <-t.C:
			return out
		}
	}
}

// Stop closes the stream.
func (w *Watch) Stop() {
	w.cancel()
	_ = w.resp.Body.Close()
	<-w.done
}

// jsonBody decodes a body as JSON, or returns nil when it is not JSON.
func jsonBody(b []byte) any {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if dec.More() {
		return nil
	}
	return v
}
