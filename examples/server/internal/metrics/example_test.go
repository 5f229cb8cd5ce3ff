package metrics_test

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/management-service/mgmt/examples/server/internal/metrics"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

// A request and a commit, written in the Prometheus text format (the histogram
// buckets left out here).
func Example() {
	m := metrics.New()
	m.Request(httpapi.RequestInfo{Method: "GET", Verb: "get", Resource: "projects.management.service", Code: 200,
		Duration: 3 * time.Millisecond})
	m.Commit(2*time.Millisecond, store.OutcomeCommitted)
	m.Commit(time.Millisecond, store.OutcomeConflict)
	var b strings.Builder
	_ = m.Write(context.Background(), &b)
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.Contains(l, "_bucket") && !strings.HasPrefix(l, "# HELP") && l != "" {
			os.Stdout.WriteString(l + "\n")
		}
	}
	// Output:
	// # TYPE mgmt_http_requests_total counter
	// mgmt_http_requests_total{verb="get",resource="projects.management.service",code="200"} 1
	// # TYPE mgmt_http_request_duration_seconds histogram
	// mgmt_http_request_duration_seconds_sum{verb="get",resource="projects.management.service"} 0.003
	// mgmt_http_request_duration_seconds_count{verb="get",resource="projects.management.service"} 1
	// # TYPE mgmt_store_transactions_total counter
	// mgmt_store_transactions_total{outcome="committed"} 1
	// mgmt_store_transactions_total{outcome="conflict"} 1
	// # TYPE mgmt_store_commit_duration_seconds histogram
	// mgmt_store_commit_duration_seconds_sum 0.002
	// mgmt_store_commit_duration_seconds_count 1
}
