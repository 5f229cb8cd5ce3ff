package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// A bench is one contender on one operation: a column of a row of the table.
type bench struct {
	row, col string
	// prepare, when set, runs untimed before each timed run, with the number of
	// operations about to run (to build the objects a create writes, say).
	prepare func(n int)
	// run performs n operations and checks their results.
	run func(n int) error
	// allocs says whether to count the allocations per operation (single-goroutine
	// workloads only; the store's background goroutine adds its share).
	allocs bool
}

// result is the median of the samples of one bench.
type result struct {
	nsPerOp     float64
	allocsPerOp float64 // -1 when not counted
	n           int     // operations per sample
}

// measurer times benches: it calibrates each one to the sample duration, then
// takes cfg.count samples of every bench of a row in rounds, rotating the order,
// so that ours and theirs run interleaved and see the same load.
type measurer struct {
	cfg     *config
	results map[[2]string]result
	// ratios are the medians of the per-sample ratios of paired rows.
	ratios map[string]float64
	logf   func(format string, args ...any)
}

func (m *measurer) get(row, col string) (result, bool) {
	r, ok := m.results[[2]string{row, col}]
	return r, ok
}

// sample runs b once with n operations and returns ns/op and allocs/op.
func (m *measurer) sample(b *bench, n int) (float64, float64, error) {
	if b.prepare != nil {
		b.prepare(n)
	}
	if m.cfg.gc {
		runtime.GC()
	}
	var before, after runtime.MemStats
	if b.allocs {
		runtime.ReadMemStats(&before)
	}
	t0 := time.Now()
	err := b.run(n)
	d := time.Since(t0)
	allocs := -1.0
	if b.allocs {
		runtime.ReadMemStats(&after)
		allocs = float64(after.Mallocs-before.Mallocs) / float64(n)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s / %s: %w", b.row, b.col, err)
	}
	return float64(d.Nanoseconds()) / float64(n), allocs, nil
}

// rowTimeScale lengthens the samples of the rows whose operations wait for a sync
// to disk: a sample must hold enough of them for the disk's jitter to average out.
var rowTimeScale = map[string]float64{rowCreateSync: 5, rowUpdateSync: 5, rowWriters: 5}

// calibrate finds the number of operations that makes a sample last about the
// sample duration.
func (m *measurer) calibrate(b *bench) (int, error) {
	if m.cfg.iterations > 0 {
		return m.cfg.iterations, nil
	}
	target := float64(m.cfg.benchtime.Nanoseconds()) * max(1, rowTimeScale[b.row])
	n := 1
	for {
		ns, _, err := m.sample(b, n)
		if err != nil {
			return 0, err
		}
		total := ns * float64(n)
		if total >= target*0.8 || n >= m.cfg.maxOps {
			return n, nil
		}
		next := int(target / ns * 1.1)
		if total < target/100 {
			next = min(next, n*100)
		}
		n = max(min(next, m.cfg.maxOps), n+1)
	}
}

// measure calibrates and samples the benches of one row.
func (m *measurer) measure(all ...*bench) error {
	var benches []*bench
	for _, b := range all {
		if m.cfg.wants(b.row) {
			benches = append(benches, b)
		}
	}
	if len(benches) == 0 {
		return nil
	}
	ns := make([]int, len(benches))
	samples := make([][]float64, len(benches))
	allocs := make([][]float64, len(benches))
	for i, b := range benches {
		n, err := m.calibrate(b)
		if err != nil {
			return err
		}
		ns[i] = n
	}
	for r := 0; r < m.cfg.count; r++ {
		for k := range benches {
			i := (k + r) % len(benches)
			v, a, err := m.sample(benches[i], ns[i])
			if err != nil {
				return err
			}
			samples[i] = append(samples[i], v)
			allocs[i] = append(allocs[i], a)
		}
	}
	for i, b := range benches {
		res := result{nsPerOp: median(samples[i]), allocsPerOp: median(allocs[i]), n: ns[i]}
		m.results[[2]string{b.row, b.col}] = res
		m.logf("  %-44s %-26s %12s/op  (%d ops/sample)", b.row, b.col, fmtDur(res.nsPerOp), ns[i])
	}
	return nil
}

// measurePaired times two contenders alternately inside one loop, operation by
// operation (the method of the token package's BenchmarkPaired), for workloads that
// are long enough for a clock reading per operation not to matter. It records both
// medians and the median of the per-sample ratios a ÷ b.
func (m *measurer) measurePaired(row, colA, colB string, a, b func() error) error {
	if !m.cfg.wants(row) {
		return nil
	}
	pass := func(n int) (float64, float64, error) {
		if m.cfg.gc {
			runtime.GC()
		}
		var da, db time.Duration
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := a(); err != nil {
				return 0, 0, fmt.Errorf("%s / %s: %w", row, colA, err)
			}
			t1 := time.Now()
			if err := b(); err != nil {
				return 0, 0, fmt.Errorf("%s / %s: %w", row, colB, err)
			}
			da += t1.Sub(t0)
			db += time.Since(t1)
		}
		return float64(da.Nanoseconds()) / float64(n), float64(db.Nanoseconds()) / float64(n), nil
	}
	n := m.cfg.iterations
	if n <= 0 {
		n = 1
		for {
			x, y, err := pass(n)
			if err != nil {
				return err
			}
			total := (x + y) * float64(n)
			if total >= float64(m.cfg.benchtime.Nanoseconds())*0.8 || n >= m.cfg.maxOps {
				break
			}
			n = max(min(int(float64(m.cfg.benchtime.Nanoseconds())/(x+y)*1.1), n*100, m.cfg.maxOps), n+1)
		}
	}
	var as, bs, rs []float64
	for r := 0; r < m.cfg.count; r++ {
		x, y, err := pass(n)
		if err != nil {
			return err
		}
		as, bs, rs = append(as, x), append(bs, y), append(rs, x/y)
	}
	m.results[[2]string{row, colA}] = result{nsPerOp: median(as), allocsPerOp: -1, n: n}
	m.results[[2]string{row, colB}] = result{nsPerOp: median(bs), allocsPerOp: -1, n: n}
	m.ratios[row] = median(rs)
	m.logf("  %-44s %s %s/op, %s %s/op, ratio %.3g (paired, %d ops/sample)", row, colA, fmtDur(median(as)), colB, fmtDur(median(bs)), median(rs), n)
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentile returns the p-th percentile (0 < p <= 100) of v, nearest rank.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(k, len(s)-1))]
}

// fmtDur formats nanoseconds with three significant digits.
func fmtDur(ns float64) string {
	switch {
	case ns <= 0:
		return "—"
	case ns < 1e3:
		return fmt.Sprintf("%.3g ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	default:
		return fmt.Sprintf("%.3g s", ns/1e9)
	}
}
