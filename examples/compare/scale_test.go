package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScaleMeasure runs every contender of the scale table on a few objects, in this
// process, and prints their rows: each load must complete, and each list find what
// was loaded (scaleMeasure checks the counts).
func TestScaleMeasure(t *testing.T) {
	var rows []scaleResult
	for _, c := range scaleContenders {
		t.Run(c, func(t *testing.T) {
			res, err := scaleMeasure(context.Background(), c, 300)
			require.NoError(t, err)
			assert.Positive(t, res.LoadPerSec)
			assert.Positive(t, res.GetNs)
			if c == scaleFake {
				assert.Zero(t, res.ListNsPer, "the fake client has no pages")
				assert.Positive(t, res.WholeListNsPer)
			} else {
				assert.Positive(t, res.ListNsPer)
			}
			assert.Positive(t, res.SelectNs)
			if c == scaleOursBadger || c == scaleRawBadger {
				assert.Positive(t, res.DiskPerObj)
			}
			if c == scaleOursMem || c == scaleOursBadger {
				assert.Positive(t, res.WholeListNsPer, "ours lists everything in one response too")
			}
			rows = append(rows, res)
		})
	}
	var out bytes.Buffer
	printScale(&out, rows)
	assert.Contains(t, out.String(), "| 300 | ours-badger |")
	t.Log("\n" + out.String())
}
