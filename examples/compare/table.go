package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
)

// A line of the table: an operation with ours and up to three kinds of theirs.
type line struct {
	op          string
	ours        [2]string // row, column
	def, defU   string    // columns of the fake client, default tracker (typed, unstructured)
	plain, plnU string    // columns of the fake client, plain tracker
	raw, raw2   string    // columns of the raw store or other baseline (second shown in parentheses)
	rawRow      string    // row of the raw columns when it is not ours' row
	rawLabel    string
}

func (r *report) ns(row, col string) float64 {
	if col == "" {
		return 0
	}
	res, ok := r.m.get(row, col)
	if !ok {
		return 0
	}
	return res.nsPerOp
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.3g", a/b)
}

func pair(a, b float64) string {
	switch {
	case a <= 0 && b <= 0:
		return "—"
	case b <= 0:
		return fmtDur(a)
	case a <= 0:
		return "— / " + fmtDur(b)
	}
	return fmtDur(a) + " / " + fmtDur(b)
}

func (r *report) lines() []line {
	sel := fmt.Sprintf("list %s, label selector matching 1%%", thousands(r.cfg.large))
	all := fmt.Sprintf("list %s", thousands(r.cfg.small))
	w := fmt.Sprintf("%d concurrent writers, per op", r.cfg.writers)
	ls := []line{
		{op: "create, memdb", ours: [2]string{rowCreate, colOursMem}, def: colFakeDefault, defU: colFakeDefaultU, plain: colFakePlain, plnU: colFakePlainU, raw: colRawMem, rawLabel: "memdb insert"},
		{op: "create, memdb; default tracker on a built-in ConfigMap", ours: [2]string{rowCreate, colOursMem}, def: colFakeDefaultC},
		{op: "create, badger sync on", ours: [2]string{rowCreateSync, colOursBSync}, raw: colRawBSync, rawLabel: "badger set"},
		{op: "create, badger sync off", ours: [2]string{rowCreateSync, colOursBNoSync}, raw: colRawBNoSync, rawLabel: "badger set"},
		{op: "get, memdb", ours: [2]string{rowGet, colOursMem}, def: colFakeDefault, defU: colFakeDefaultU, plain: colFakePlain, plnU: colFakePlainU, raw: colRawMem, rawLabel: "memdb get"},
		{op: "get, memdb; default tracker on a built-in ConfigMap", ours: [2]string{rowGet, colOursMem}, def: colFakeDefaultC},
		{op: "get, badger", ours: [2]string{rowGet, colOursBSync}, raw: colRawBSync, rawLabel: "badger get"},
		{op: "update, memdb", ours: [2]string{rowUpdate, colOursMem}, def: colFakeDefault, defU: colFakeDefaultU, plain: colFakePlain, plnU: colFakePlainU, raw: colRawMem, rawLabel: "memdb CAS"},
		{op: "update, memdb; default tracker on a built-in ConfigMap", ours: [2]string{rowUpdate, colOursMem}, def: colFakeDefaultC},
		{op: "update, badger sync on", ours: [2]string{rowUpdateSync, colOursBSync}, raw: colRawBSync, rawLabel: "badger CAS"},
		{op: "update, badger sync off", ours: [2]string{rowUpdateSync, colOursBNoSync}, raw: colRawBNoSync, rawLabel: "badger CAS"},
		{op: all + ", memdb", ours: [2]string{rowList, colOursMem}, def: colFakeDefault, defU: colFakeDefaultU, plain: colFakePlain, plnU: colFakePlainU, raw: colRawMem, rawLabel: "memdb prefix"},
		{op: sel + ", memdb", ours: [2]string{rowSelect, colOursMem}, def: colFakeDefault, plain: colFakePlain, raw: colRawMem, raw2: colRawMemScan, rawLabel: "memdb label index (scan)"},
		{op: w + ", badger sync on", ours: [2]string{rowWriters, colOursBSync}, raw: colRawBSync, rawLabel: "badger set"},
		{op: w + ", badger sync off", ours: [2]string{rowWriters, colOursBNoSync}, raw: colRawBNoSync, rawLabel: "badger set"},
	}
	for _, n := range []int{10, 100} {
		for _, sub := range []string{"", "status"} {
			row := policyRow(n, sub)
			ls = append(ls, line{op: row, ours: [2]string{row, colPolicyOurs}, raw: colRulesAllowEq, raw2: colCovers, rawLabel: "RulesAllow-eq. (Covers)"})
		}
	}
	ls = append(ls, line{op: rowVerify, ours: [2]string{rowVerify, colTokenOurs}, raw: colGoJose, rawLabel: "go-jose"})
	return ls
}

// print writes the report: the table, the watch, the tokens, the targets.
func (r *report) print(out io.Writer) {
	c := r.cfg
	fmt.Fprintf(out, "# Comparison (issue 11): medians of %d samples, ~%v each (5× longer for the badger rows); %s, GOMAXPROCS %d, %d CPUs\n",
		c.count, c.benchtime, runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(out, "load average (1/5/15 min) at the start, before the token benchmark, at the end: %s; run took %.0fs\n\n",
		strings.Join(r.load, " | "), r.elapsed.Seconds())
	fmt.Fprintln(out, "Objects: ~1 KB VirtualClusterInstance, 5 labels. Fake = controller-runtime v0.25 fake client; theirs cells are typed / unstructured.")
	fmt.Fprintln(out, "Ratios are ours ÷ theirs (below 1: ours is faster), against the typed variant and the first raw figure.")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| operation | ours | fake, default tracker | fake, plain tracker | raw / other | ours ÷ default | ours ÷ plain | ours ÷ raw/other |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	for _, l := range r.lines() {
		o := r.ns(l.ours[0], l.ours[1])
		if o <= 0 && c.only != nil {
			continue
		}
		d, du := r.ns(l.ours[0], l.def), r.ns(l.ours[0], l.defU)
		p, pu := r.ns(l.ours[0], l.plain), r.ns(l.ours[0], l.plnU)
		rr, r2 := r.ns(l.ours[0], l.raw), r.ns(l.ours[0], l.raw2)
		rawCell := "—"
		if rr > 0 {
			rawCell = fmtDur(rr)
			if r2 > 0 {
				rawCell += " (" + fmtDur(r2) + ")"
			}
			rawCell += " " + l.rawLabel
		}
		rawRatio := ratio(o, rr)
		if pr, ok := r.m.ratios[l.ours[0]]; ok {
			rawRatio = fmt.Sprintf("%.3g (paired)", pr)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", l.op, fmtDur(o), pair(d, du), pair(p, pu), rawCell,
			ratio(o, d), ratio(o, p), rawRatio)
	}
	// Watch.
	wo, wd, wp := r.watch[colOursMem], r.watch[colFakeDefault], r.watch[colFakePlain]
	if wo.p99 > 0 || c.only == nil {
		fmt.Fprintf(out, "| watch: 1 write reaches %d watchers, p50 / p99, memdb | %s | %s | %s | — | %s | %s | |\n",
			c.watchers, pair(wo.p50, wo.p99), pair(wd.p50, wd.p99), pair(wp.p50, wp.p99), ratio(wo.p99, wd.p99), ratio(wo.p99, wp.p99))
	}
	// Token sign/verify from the paired benchmark.
	if r.paired != nil {
		for _, op := range []string{"sign", "verify"} {
			p := r.paired[op]
			fmt.Fprintf(out, "| token %s, EdDSA, paired (BenchmarkPaired) | %s | — | — | %s go-jose | | | %.3g |\n",
				op, fmtDur(p.ours*1e3), fmtDur(p.jose*1e3), p.ratio)
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Token size (ten-entry scope): %d bytes. ", r.tokenBytes)
	switch {
	case r.pairedErr != nil:
		fmt.Fprintf(out, "Token paired benchmark failed: %v\n", r.pairedErr)
	case r.paired != nil:
		fmt.Fprintf(out, "Token sign/verify ratios from `%s` in the root module.\n", r.pairedCmd)
	default:
		fmt.Fprintln(out, "Token paired benchmark not run.")
	}

	// Allocations.
	if _, ok := r.m.get(rowScaleGet, colScaleSmall); ok {
		r.printAllocs(out)
	}
	if _, ok := r.m.get(policyRow(10, ""), colPolicyOurs); ok {
		r.printPolicyAllocs(out)
	}
	r.printTargets(out)
}

func (r *report) printAllocs(out io.Writer) {
	c := r.cfg
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Allocations per operation, ours on memdb, store of %s vs %s objects (time in parentheses):\n\n", thousands(c.small), thousands(c.large))
	fmt.Fprintln(out, "| operation | small store | large store |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, row := range []string{rowScaleGet, rowScaleUpdate, rowScaleCreate, rowScaleSelect} {
		s, ok := r.m.get(row, colScaleSmall)
		if !ok {
			continue
		}
		l, _ := r.m.get(row, colScaleLarge)
		fmt.Fprintf(out, "| %s | %.0f (%s) | %.0f (%s) |\n", strings.TrimPrefix(row, "scaling: "), s.allocsPerOp, fmtDur(s.nsPerOp), l.allocsPerOp, fmtDur(l.nsPerOp))
	}
}

func (r *report) printPolicyAllocs(out io.Writer) {
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Policy allocations per evaluation (ours / RulesAllow-eq. / Covers):")
	for _, n := range []int{10, 100} {
		for _, sub := range []string{"", "status"} {
			row := policyRow(n, sub)
			a, ok := r.m.get(row, colPolicyOurs)
			if !ok {
				continue
			}
			b, _ := r.m.get(row, colRulesAllowEq)
			cv, _ := r.m.get(row, colCovers)
			fmt.Fprintf(out, "  %s: %.2f / %.2f / %.1f\n", row, a.allocsPerOp, b.allocsPerOp, cv.allocsPerOp)
		}
	}

}

func (r *report) printTargets(out io.Writer) {
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Targets of issue 11:")
	for _, t := range r.targets() {
		if t.skipped && r.cfg.only != nil {
			continue
		}
		mark := "HOLDS"
		if !t.holds {
			mark = "FAILS"
		}
		if t.skipped {
			mark = "n/a  "
		}
		fmt.Fprintf(out, "  %s  %s: %s\n", mark, t.name, t.detail)
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// target is one of issue 11's targets, checked against the run.
type target struct {
	name    string
	holds   bool
	skipped bool
	detail  string
}

func (r *report) targets() []target {
	var ts []target
	// faster: ours must be at least x times faster than theirs.
	faster := func(name, row, ours, theirs string, x float64) {
		o, t := r.ns(row, ours), r.ns(row, theirs)
		ts = append(ts, target{name: name, holds: o > 0 && t > 0 && t/o >= x, skipped: o <= 0 || t <= 0,
			detail: fmt.Sprintf("%.1f× faster (%s vs %s), need ≥ %g×", t/o, fmtDur(o), fmtDur(t), x)})
	}
	// within: ours must take at most x times theirs.
	within := func(name, row, ours, theirRow, theirs string, x float64) {
		o, t := r.ns(row, ours), r.ns(theirRow, theirs)
		q := o / t
		if pr, ok := r.m.ratios[row]; ok && row == theirRow {
			q = pr // paired: the median of the per-sample ratios
		}
		ts = append(ts, target{name: name, holds: o > 0 && t > 0 && q <= x, skipped: o <= 0 || t <= 0,
			detail: fmt.Sprintf("ours ÷ theirs = %.2f (%s vs %s), need ≤ %g", q, fmtDur(o), fmtDur(t), x)})
	}
	faster("memdb create ≥ 25× faster than the fake client's default tracker", rowCreate, colOursMem, colFakeDefault, 25)
	within("memdb create within 3× of raw go-memdb insert", rowCreate, colOursMem, rowCreate, colRawMem, 3)
	faster("memdb update ≥ 25× faster than the default tracker", rowUpdate, colOursMem, colFakeDefault, 25)
	within("memdb update within 3× of raw go-memdb CAS", rowUpdate, colOursMem, rowUpdate, colRawMem, 3)
	faster("memdb get ≥ 5× faster than the default tracker", rowGet, colOursMem, colFakeDefault, 5)
	faster("(anchor's setup) memdb create ≥ 25× faster than the default tracker on a built-in ConfigMap", rowCreate, colOursMem, colFakeDefaultC, 25)
	faster("(anchor's setup) memdb update ≥ 25× faster than the default tracker on a built-in ConfigMap", rowUpdate, colOursMem, colFakeDefaultC, 25)
	faster("(anchor's setup) memdb get ≥ 5× faster than the default tracker on a built-in ConfigMap", rowGet, colOursMem, colFakeDefaultC, 5)
	g := r.ns(rowGet, colOursMem)
	ts = append(ts, target{name: "memdb get ≤ 5 µs", holds: g > 0 && g <= 5000, skipped: g <= 0, detail: fmtDur(g)})
	faster(fmt.Sprintf("memdb list of %s ≥ 20× faster than the default tracker (typed)", thousands(r.cfg.small)), rowList, colOursMem, colFakeDefault, 20)
	faster(fmt.Sprintf("memdb 1%% label-selector list of %s ≥ 25× faster than the default tracker", thousands(r.cfg.large)), rowSelect, colOursMem, colFakeDefault, 25)
	faster(fmt.Sprintf("memdb 1%% label-selector list of %s ≥ 25× faster than the plain tracker", thousands(r.cfg.large)), rowSelect, colOursMem, colFakePlain, 25)
	within("badger sync on: single writer (create) within 1.3× of a raw badger synced set", rowCreateSync, colOursBSync, rowCreateSync, colRawBSync, 1.3)
	within("badger sync on: single writer (update) within 1.3× of a raw badger synced CAS", rowUpdateSync, colOursBSync, rowUpdateSync, colRawBSync, 1.3)
	faster(fmt.Sprintf("badger sync on: %d concurrent writers ≥ 3× raw badger's %d-writer synced throughput", r.cfg.writers, r.cfg.writers),
		rowWriters, colOursBSync, colRawBSync, 3)
	within("badger get within 3× of raw badger", rowGet, colOursBSync, rowGet, colRawBSync, 3)
	w := r.watch[colOursMem]
	ts = append(ts, target{name: fmt.Sprintf("watch: one write reaches %d watchers with p99 ≤ 1 ms (memdb)", r.cfg.watchers),
		holds: w.p99 > 0 && w.p99 <= 1e6, skipped: w.p99 <= 0, detail: fmt.Sprintf("p50 %s, p99 %s (write start to last delivery)", fmtDur(w.p50), fmtDur(w.p99))})
	for _, n := range []int{10, 100} {
		for _, sub := range []string{"", "status"} {
			row := policyRow(n, sub)
			o, _ := r.m.get(row, colPolicyOurs)
			t, _ := r.m.get(row, colRulesAllowEq)
			ts = append(ts, target{name: row + ": no slower than RulesAllow(-equivalent), 0 allocations",
				holds: o.nsPerOp > 0 && o.nsPerOp <= t.nsPerOp && o.allocsPerOp < 0.05, skipped: o.nsPerOp <= 0,
				detail: fmt.Sprintf("ours ÷ RulesAllow-eq. = %.2f (%s vs %s), %.2f allocs/op (anchor: RulesAllow %s)",
					o.nsPerOp/t.nsPerOp, fmtDur(o.nsPerOp), fmtDur(t.nsPerOp), o.allocsPerOp, map[int]string{10: "545 ns", 100: "5.2 µs"}[n])})
		}
	}
	if r.paired != nil {
		for _, op := range []string{"sign", "verify"} {
			p := r.paired[op]
			ts = append(ts, target{name: "token " + op + " ≤ 1.3× go-jose's own (EdDSA, paired)", holds: p.ratio > 0 && p.ratio <= 1.3,
				detail: fmt.Sprintf("ratio %.2f (ours %s, go-jose %s; median of %d)", p.ratio, fmtDur(p.ours*1e3), fmtDur(p.jose*1e3), p.samples)})
		}
	} else {
		ts = append(ts, target{name: "token sign ≤ 1.3× go-jose's own", skipped: true, detail: "paired benchmark not run"})
	}
	within("token verify ≤ 1.3× go-jose's own (EdDSA, in process, public API)", rowVerify, colTokenOurs, rowVerify, colGoJose, 1.3)
	ts = append(ts, target{name: "token ≤ 1 KiB (ten-entry scope)", holds: r.tokenBytes > 0 && r.tokenBytes <= 1024, detail: fmt.Sprintf("%d bytes", r.tokenBytes)})
	// Allocation scaling: get, update and create must not allocate more in the large
	// store; the selector list may only grow with what it returns.
	for _, row := range []string{rowScaleGet, rowScaleUpdate, rowScaleCreate} {
		s, _ := r.m.get(row, colScaleSmall)
		l, _ := r.m.get(row, colScaleLarge)
		ts = append(ts, target{name: strings.TrimPrefix(row, "scaling: ") + ": allocations independent of the store size",
			holds: l.allocsPerOp <= s.allocsPerOp*1.1+2, skipped: s.n == 0 || l.n == 0,
			detail: fmt.Sprintf("%.1f allocs/op with %s objects, %.1f with %s", s.allocsPerOp, thousands(r.cfg.small), l.allocsPerOp, thousands(r.cfg.large))})
	}
	s, _ := r.m.get(rowScaleSelect, colScaleSmall)
	l, _ := r.m.get(rowScaleSelect, colScaleLarge)
	ps, pl := s.allocsPerOp/float64(r.cfg.small/100), l.allocsPerOp/float64(r.cfg.large/100)
	ts = append(ts, target{name: "label-selector list: allocations in proportion to what it returns only",
		holds: pl <= ps*1.1+1, skipped: s.n == 0 || l.n == 0,
		detail: fmt.Sprintf("%.1f allocs per returned object with %s objects stored, %.1f with %s", ps, thousands(r.cfg.small), pl, thousands(r.cfg.large))})
	return ts
}
