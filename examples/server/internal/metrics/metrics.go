// Package metrics keeps the example server's metrics and writes them in the
// Prometheus text exposition format (version 0.0.4). It holds counters and
// histograms with labels, fed from httpapi's Config.OnRequest and the store's
// Observer, and gauges read when scraped. It is small on purpose: the library has no
// metrics dependency, and the server needs no more than this.
package metrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

// Buckets are the upper bounds, in seconds, of the latency histograms.
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Registry holds the server's metrics. The zero value is not usable; use New.
type Registry struct {
	mu       sync.Mutex
	requests map[[3]string]float64    // verb, resource, code
	latency  map[[2]string]*histogram // verb, resource
	txns     map[string]float64       // outcome
	commit   *histogram
	gauges   []gauge
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(Buckets, v)
	h.counts[i]++ // i == len(Buckets) is +Inf
	h.sum += v
	h.count++
}

type gauge struct {
	name, help string
	read       func(context.Context) []sample
}

// sample is one value of a gauge, with its labels ("k", "v" pairs).
type sample struct {
	labels []string
	value  float64
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{requests: map[[3]string]float64{}, latency: map[[2]string]*histogram{},
		txns: map[string]float64{}, commit: newHistogram()}
}

func newHistogram() *histogram { return &histogram{counts: make([]uint64, len(Buckets)+1)} }

// Request records an answered request (httpapi Config.OnRequest). A watch is counted
// but not timed: its duration is its life, not a latency.
func (m *Registry) Request(i httpapi.RequestInfo) {
	verb, res := i.Verb, i.Resource
	if verb == "" {
		verb = strings.ToLower(i.Method)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[[3]string{verb, res, strconv.Itoa(i.Code)}]++
	if verb == "watch" {
		return
	}
	k := [2]string{verb, res}
	h := m.latency[k]
	if h == nil {
		h = newHistogram()
		m.latency[k] = h
	}
	h.observe(i.Duration.Seconds())
}

// Commit records a backend transaction of the store (store.Observer).
func (m *Registry) Commit(d time.Duration, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.txns[outcome]++
	if outcome == store.OutcomeCommitted {
		m.commit.observe(d.Seconds())
	}
}

// Server adds the gauges of an HTTP server: requests in flight and open watches.
func (m *Registry) Server(s *httpapi.Server) {
	m.gauges = append(m.gauges,
		gauge{"mgmt_http_requests_in_flight", "Requests being served, by kind.", func(context.Context) []sample {
			ro, mu, _ := s.InFlight()
			return []sample{{[]string{"kind", "readonly"}, float64(ro)}, {[]string{"kind", "mutating"}, float64(mu)}}
		}},
		gauge{"mgmt_http_watches_open", "Watches open.", func(context.Context) []sample {
			_, _, w := s.InFlight()
			return []sample{{nil, float64(w)}}
		}})
}

// Store adds the gauges of a store: its objects, revision and kept history.
func (m *Registry) Store(s *store.Store) {
	stats := func(ctx context.Context) store.Stats { st, _ := s.Stats(ctx); return st }
	m.gauges = append(m.gauges,
		gauge{"mgmt_store_objects", "Objects stored.", func(ctx context.Context) []sample {
			return []sample{{nil, float64(stats(ctx).Objects)}}
		}},
		gauge{"mgmt_store_revision", "The store's current revision.", func(ctx context.Context) []sample {
			return []sample{{nil, float64(stats(ctx).Revision)}}
		}},
		gauge{"mgmt_store_history_revisions", "Revisions of history the backend keeps (revision - compact revision).",
			func(ctx context.Context) []sample {
				st := stats(ctx)
				return []sample{{nil, float64(st.Revision - st.CompactRevision)}}
			}})
}

// ServeHTTP writes the metrics in the Prometheus text format.
func (m *Registry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = m.Write(r.Context(), w)
}

// Write writes the metrics in the Prometheus text format.
func (m *Registry) Write(ctx context.Context, out io.Writer) error {
	var b strings.Builder
	m.mu.Lock()
	header(&b, "mgmt_http_requests_total", "counter", "Requests answered, by verb, resource and code.")
	for _, k := range sortedKeys(m.requests, func(k [3]string) string { return strings.Join(k[:], "\x00") }) {
		line(&b, "mgmt_http_requests_total", []string{"verb", k[0], "resource", k[1], "code", k[2]}, m.requests[k])
	}
	header(&b, "mgmt_http_request_duration_seconds", "histogram", "Time to answer a request (watches excluded), by verb and resource.")
	for _, k := range sortedKeys(m.latency, func(k [2]string) string { return k[0] + "\x00" + k[1] }) {
		writeHistogram(&b, "mgmt_http_request_duration_seconds", []string{"verb", k[0], "resource", k[1]}, m.latency[k])
	}
	header(&b, "mgmt_store_transactions_total", "counter", "Backend transactions of writes, by outcome (a conflict runs the write again).")
	for _, k := range sortedKeys(m.txns, func(k string) string { return k }) {
		line(&b, "mgmt_store_transactions_total", []string{"outcome", k}, m.txns[k])
	}
	header(&b, "mgmt_store_commit_duration_seconds", "histogram", "Time the backend took to commit a write.")
	writeHistogram(&b, "mgmt_store_commit_duration_seconds", nil, m.commit)
	gauges := m.gauges
	m.mu.Unlock()
	for _, g := range gauges {
		header(&b, g.name, "gauge", g.help)
		for _, s := range g.read(ctx) {
			line(&b, g.name, s.labels, s.value)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func sortedKeys[K comparable, V any](m map[K]V, str func(K) string) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return str(keys[i]) < str(keys[j]) })
	return keys
}

func header(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func writeHistogram(b *strings.Builder, name string, labels []string, h *histogram) {
	var cum uint64
	for i, le := range Buckets {
		cum += h.counts[i]
		line(b, name+"_bucket", append(append([]string{}, labels...), "le", strconv.FormatFloat(le, 'g', -1, 64)), float64(cum))
	}
	cum += h.counts[len(Buckets)]
	line(b, name+"_bucket", append(append([]string{}, labels...), "le", "+Inf"), float64(cum))
	line(b, name+"_sum", labels, h.sum)
	line(b, name+"_count", labels, float64(h.count))
}

// line writes one sample; labels are "name", "value" pairs.
func line(b *strings.Builder, name string, labels []string, v float64) {
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(escape(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	switch {
	case math.IsInf(v, 1):
		b.WriteString("+Inf")
	default:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	b.WriteByte('\n')
}

// escape escapes a label value as the text format asks: backslash, quote, newline.
func escape(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
