package main

import (
	"bytes"
	"flag"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{3, 1, 2}, 2},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"an outlier does not move it", []float64{1, 2, 1000}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.in...)
			assert.InDelta(t, tc.want, median(in), 1e-9)
			assert.Equal(t, tc.in, in, "the input is not reordered")
		})
	}
	assert.True(t, math.IsNaN(median(nil)))
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0.1, 1 * time.Millisecond},
	} {
		assert.Equal(t, tc.want, percentile(xs, tc.p), "p%v", tc.p)
	}
	assert.Equal(t, 5*time.Millisecond, percentile([]time.Duration{5 * time.Millisecond}, 99))
	assert.Equal(t, time.Duration(0), percentile(nil, 50))
}

func TestRatioAndFormat(t *testing.T) {
	assert.Equal(t, "2.50×", ratio(5, 2))
	assert.Equal(t, "-", ratio(5, 0), "no ratio to a zero")
	assert.Equal(t, "-", ratio(math.NaN(), 2))
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{math.NaN(), "-"}, {0, "0"}, {12345.6, "12346"}, {42.25, "42.2"}, {1.234, "1.23"}, {3, "3"},
	} {
		assert.Equal(t, tc.want, formatValue(tc.v), "%v", tc.v)
	}
}

func TestPrintLoadTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, printLoadTable(&b, []string{"kube", "ours"}, []loadRow{
		{Name: "GET c=1", Unit: "req/s", Values: []float64{100, 650}, Higher: true},
		{Name: "p99", Unit: "ms", Values: []float64{200, 50}, Note: "lower is better"},
		{Name: "short", Unit: "x", Values: []float64{1}},
	}))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, []string{"measure", "unit", "kube", "ours", "ours÷kube", "note"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"GET", "c=1", "req/s", "100", "650", "6.50×"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"p99", "ms", "200", "50", "0.25×", "lower", "is", "better"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"short", "x", "1", "-", "-"}, strings.Fields(lines[3]), "a missing value is -")
}

func TestRSSFromStatus(t *testing.T) {
	status := "Name:\tmgmt\nVmPeak:\t  900000 kB\nVmRSS:\t  235520 kB\nRssAnon:\t 1 kB\n"
	n, err := rssFromStatus(status)
	require.NoError(t, err)
	assert.Equal(t, int64(235520*1024), n)
	_, err = rssFromStatus("Name:\tx\n")
	require.Error(t, err)
	_, err = rssFromStatus("VmRSS:\tlots\n")
	require.Error(t, err)
}

func TestFieldString(t *testing.T) {
	ev := []byte(`{"type":"ADDED","object":{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance","metadata":{"name":"w3-17-1764390000000000000","namespace":"p-ldw-r0","resourceVersion":"812"}}}`)
	assert.Equal(t, "ADDED", fieldString(ev, "type"))
	assert.Equal(t, "w3-17-1764390000000000000", fieldString(ev, "name"))
	assert.Equal(t, "812", fieldString(ev, "resourceVersion"))
	assert.Equal(t, "", fieldString(ev, "continue"), "absent")
	assert.Equal(t, "", fieldString([]byte(`{"name":"unterminated`), "name"))
}

func FuzzFieldString(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","resourceVersion":"1"}}`), "name")
	f.Add([]byte(`"name":"`), "name")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		v := fieldString(b, key)
		assert.NotContains(t, v, `"`)
		if v != "" {
			assert.Contains(t, string(b), `"`+key+`":"`+v+`"`)
		}
	})
}

func TestLoadFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c loadConfig
	registerLoadFlags(fs, &c)
	require.NoError(t, fs.Parse(nil))
	assert.Equal(t, loadConfig{duration: 2 * time.Second, rounds: 3, objects: 10000, listSize: 1000, watchers: 100, writers: 16, drain: 5 * time.Second}, c)
	require.NoError(t, fs.Parse([]string{"-load", "-load-watchers", "1000", "-load-memdb"}))
	assert.True(t, c.enabled)
	assert.True(t, c.memdb)
	assert.Equal(t, 1000, c.watchers)
}
