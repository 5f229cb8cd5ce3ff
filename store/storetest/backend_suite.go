package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

// Notes on the backend half of this package (the files named backend_*.go):
//
// RunBackend is the conformance suite of the store/backend contract. A backend's own
// test calls it once with a constructor; every case runs as a named subtest on a
// fresh backend, so a backend cannot leave a case out. Cases are grouped by what they
// protect (Txn, Read, Watch, Compact, Close, Concurrency) and named after the
// property they check.
//
// Optional capabilities are found by type assertion. A case that needs one the
// backend lacks (today only backend.Compactor) is reported as skipped, with the
// reason, never left out silently.
//
// The suite waits for events with a generous time limit only to turn a hang into a
// failure; it asserts no durations. It expects a backend to keep at least a few
// thousand revisions of history unless compacted (the concurrency case replays about
// 1,600 revisions).

// RunBackend runs the conformance suite of the [backend.Backend] contract against the
// backends newBackend returns, one fresh backend per case. newBackend may register
// cleanups with t; the suite also closes the backend when the case ends (a second
// Close returning [backend.ErrClosed] is fine).
func RunBackend(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	t.Helper()
	groups := []struct {
		name  string
		cases []backendCase
	}{
		{"Txn", backendTxnCases()},
		{"Read", backendReadCases()},
		{"Watch", backendWatchCases()},
		{"Compact", backendCompactCases()},
		{"Close", backendCloseCases()},
		{"Concurrency", backendConcurrencyCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					b := newBackend(t)
					require.NotNil(t, b, "newBackend returned nil")
					t.Cleanup(func() { _ = b.Close() })
					c.run(t, b)
				})
			}
		})
	}
}

// backendCase is one case of the backend suite.
type backendCase struct {
	name string
	run  func(t *testing.T, b backend.Backend)
}
