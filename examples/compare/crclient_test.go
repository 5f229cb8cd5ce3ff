package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCRClientSmoke runs the -crclient table once at a tiny size: every workload
// checks its results (a list its count, a get the object asked for) on both
// contenders, and every row has a figure for each.
func TestCRClientSmoke(t *testing.T) {
	cfg := defaultConfig()
	cfg.count, cfg.iterations = 1, 2
	cfg.small, cfg.large = 100, 200
	var logs bytes.Buffer
	tab, err := measureCRClient(context.Background(), cfg, &logs)
	require.NoError(t, err, logs.String())
	require.Len(t, tab.rows, 10)
	for _, row := range tab.rows {
		for _, col := range []string{colCR, colFake} {
			r, ok := tab.m.get(row, col)
			assert.True(t, ok && r.nsPerOp > 0, "%s / %s: no result", row, col)
		}
		sp := tab.spread[row]
		assert.True(t, tab.m.ratios[row] > 0 && sp[0] <= tab.m.ratios[row] && tab.m.ratios[row] <= sp[1],
			"%s: the ratio %v is not the median of rounds within %v", row, tab.m.ratios[row], sp)
	}
	var out bytes.Buffer
	tab.print(&out)
	assert.Equal(t, 11, strings.Count(out.String(), "\n| "), "a header and ten rows:\n%s", out.String())
	assert.Contains(t, out.String(), "| ConfigMap: list 200, label selector 1% |")
	assert.Contains(t, out.String(), "load average ")
}
