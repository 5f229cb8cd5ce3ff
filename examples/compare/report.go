package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/store"
)

// report is everything a run measured.
type report struct {
	cfg        *config
	m          *measurer
	watch      map[string]watchResult
	tokenBytes int
	paired     map[string]pairedResult
	pairedCmd  string
	pairedErr  error
	tokenAlloc float64
	load       []string
	started    time.Time
	elapsed    time.Duration
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// measureAll builds every store, runs every workload and returns the report.
func measureAll(ctx context.Context, cfg *config, logw io.Writer) (*report, error) {
	rep := &report{cfg: cfg, started: time.Now(), watch: map[string]watchResult{}}
	logf := func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	vlogf := func(string, ...any) {}
	if cfg.verbose {
		vlogf = logf
	}
	rep.m = &measurer{cfg: cfg, results: map[[2]string]result{}, ratios: map[string]float64{}, logf: vlogf}
	m := rep.m
	rep.load = append(rep.load, loadavg())
	phase := func(name string) {
		logf("[%5.1fs] %s (load %s)", time.Since(rep.started).Seconds(), name, loadavg())
	}

	phase("seeding our stores")
	ours, err := newOursEnv(ctx, cfg)
	if ours != nil {
		defer ours.close()
	}
	if err != nil {
		return nil, fmt.Errorf("our store: %w", err)
	}
	phase("seeding the fake client, default tracker")
	fd, err := newFakeEnv(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	fcm, err := newFakeConfigMapClient(ctx)
	if err != nil {
		return nil, err
	}
	cmCreate, cmGet, cmUpdate, err := fakeConfigMapBenches(ctx, fcm, colFakeDefaultC)
	if err != nil {
		return nil, err
	}
	phase("seeding the fake client, plain tracker")
	fp, err := newFakeEnv(ctx, cfg, true)
	if err != nil {
		return nil, err
	}
	phase("seeding raw go-memdb and raw badger")
	rm, err := newRawMemEnv(cfg)
	if err != nil {
		return nil, err
	}
	rb, err := newRawBadgerEnv(cfg)
	if err != nil {
		return nil, fmt.Errorf("raw badger: %w", err)
	}
	defer rb.close()

	// Single-object operations.
	phase("create")
	if err := m.measure(
		oursCreate(ctx, ours.mem, rowCreate, colOursMem),
		fakeCreate(ctx, fd.write, rowCreate, colFakeDefault, false),
		fakeCreate(ctx, fd.write, rowCreate, colFakeDefaultU, true),
		cmCreate,
		fakeCreate(ctx, fp.write, rowCreate, colFakePlain, false),
		fakeCreate(ctx, fp.write, rowCreate, colFakePlainU, true),
		rawMemInsert(rm, rowCreate, colRawMem),
	); err != nil {
		return nil, err
	}
	if err := m.measure(
		oursCreate(ctx, ours.bSync, rowCreateSync, colOursBSync),
		rawBadgerSet(rb.sync, rb.value, rowCreateSync, colRawBSync),
		oursCreate(ctx, ours.bNoSync, rowCreateSync, colOursBNoSync),
		rawBadgerSet(rb.noSync, rb.value, rowCreateSync, colRawBNoSync),
	); err != nil {
		return nil, err
	}
	phase("get")
	if err := m.measure(
		oursGet(ctx, ours.mem, rowGet, colOursMem),
		fakeGet(ctx, fd.write, rowGet, colFakeDefault, false),
		fakeGet(ctx, fd.write, rowGet, colFakeDefaultU, true),
		cmGet,
		fakeGet(ctx, fp.write, rowGet, colFakePlain, false),
		fakeGet(ctx, fp.write, rowGet, colFakePlainU, true),
		rawMemGet(rm, rowGet, colRawMem),
		oursGet(ctx, ours.bSync, rowGet, colOursBSync),
		rawBadgerGet(rb.sync, rowGet, colRawBSync),
	); err != nil {
		return nil, err
	}
	phase("update")
	var ups []*bench
	for _, b := range []struct {
		s   *store.Store
		row string
		col string
	}{{ours.mem, rowUpdate, colOursMem}, {ours.bSync, rowUpdateSync, colOursBSync}, {ours.bNoSync, rowUpdateSync, colOursBNoSync}} {
		u, err := oursUpdate(ctx, b.s, b.row, b.col)
		if err != nil {
			return nil, err
		}
		ups = append(ups, u)
	}
	for _, f := range []struct {
		c     client.Client
		col   string
		unstr bool
	}{{fd.write, colFakeDefault, false}, {fd.write, colFakeDefaultU, true}, {fp.write, colFakePlain, false}, {fp.write, colFakePlainU, true}} {
		u, err := fakeUpdate(ctx, f.c, rowUpdate, f.col, f.unstr)
		if err != nil {
			return nil, err
		}
		ups = append(ups, u)
	}
	if err := m.measure(append(append([]*bench{ups[0]}, ups[3:]...), cmUpdate, rawMemCAS(rm, rowUpdate, colRawMem))...); err != nil {
		return nil, err
	}
	if err := m.measure(
		ups[1], rawBadgerCAS(rb.sync, rb.value, rowUpdateSync, colRawBSync),
		ups[2], rawBadgerCAS(rb.noSync, rb.value, rowUpdateSync, colRawBNoSync),
	); err != nil {
		return nil, err
	}

	// Lists.
	phase("list")
	want := cfg.large / 100
	sel := store.ListOptions{LabelSelector: selectorKey + "=" + selectorValue}
	fsel := client.MatchingLabels{selectorKey: selectorValue}
	if err := m.measure(
		oursList(ctx, ours.memSmall, rowList, colOursMem, store.ListOptions{}, cfg.small),
		fakeList(ctx, fd.small, rowList, colFakeDefault, false, cfg.small),
		fakeList(ctx, fd.small, rowList, colFakeDefaultU, true, cfg.small),
		fakeList(ctx, fp.small, rowList, colFakePlain, false, cfg.small),
		fakeList(ctx, fp.small, rowList, colFakePlainU, true, cfg.small),
		rawMemPrefix(rm.small, rowList, colRawMem, cfg.small),
	); err != nil {
		return nil, err
	}
	if err := m.measure(
		oursList(ctx, ours.memLarge, rowSelect, colOursMem, sel, want),
		fakeList(ctx, fd.large, rowSelect, colFakeDefault, false, want, fsel),
		fakeList(ctx, fp.large, rowSelect, colFakePlain, false, want, fsel),
		rawMemLabel(rm.large, rowSelect, colRawMem, want, false),
		rawMemLabel(rm.large, rowSelect, colRawMemScan, want, true),
	); err != nil {
		return nil, err
	}

	// Concurrent writers.
	phase("concurrent writers")
	if err := m.measure(
		oursWriters(ctx, ours.bSync, rowWriters, colOursBSync, cfg.writers),
		rawBadgerWriters(rb.sync, rb.value, rowWriters, colRawBSync, cfg.writers),
		oursWriters(ctx, ours.bNoSync, rowWriters, colOursBNoSync, cfg.writers),
		rawBadgerWriters(rb.noSync, rb.value, rowWriters, colRawBNoSync, cfg.writers),
	); err != nil {
		return nil, err
	}

	// Allocation scaling: the same operations on the stores of cfg.small and cfg.large
	// objects (after the lists, since the creates add objects to them).
	phase("allocations against store size")
	if err := m.measure(
		oursList(ctx, ours.memSmall, rowScaleSelect, colScaleSmall, sel, cfg.small/100),
		oursList(ctx, ours.memLarge, rowScaleSelect, colScaleLarge, sel, cfg.large/100),
	); err != nil {
		return nil, err
	}
	var scale []*bench
	for _, s := range []struct {
		st  *store.Store
		col string
	}{{ours.memSmall, colScaleSmall}, {ours.memLarge, colScaleLarge}} {
		u, err := oursUpdateNamed(ctx, s.st, rowScaleUpdate, s.col, objName(prefixList, 1))
		if err != nil {
			return nil, err
		}
		scale = append(scale,
			oursGetNamed(ctx, s.st, rowScaleGet, s.col, seedNames(prefixList, getSeed)),
			u,
			oursCreate(ctx, s.st, rowScaleCreate, s.col),
		)
	}
	if err := m.measure(scale...); err != nil {
		return nil, err
	}

	// Policy.
	phase("policy")
	for _, n := range []int{10, 100} {
		if !cfg.wants(policyRow(n, "")) && !cfg.wants(policyRow(n, "status")) {
			continue
		}
		for _, sub := range []string{"", "status"} {
			bs, err := policyBenches(n, sub)
			if err != nil {
				return nil, err
			}
			if err := m.measure(bs...); err != nil {
				return nil, err
			}
		}
	}

	// Tokens.
	phase("token verify")
	te, err := newTokenEnv(ctx)
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	defer te.close()
	rep.tokenBytes = len(te.tok)
	ov, jv, err := tokenVerifyFuncs(ctx, te)
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	if err := m.measurePaired(rowVerify, colTokenOurs, colGoJose, ov, jv); err != nil {
		return nil, err
	}

	// Watch, last: its watchers would slow the other workloads down.
	if !cfg.wants(rowWatch) {
		return rep.finish(cfg, logf)
	}
	phase("watch")
	var rigs []*watchRig
	or, err := oursWatchRig(ctx)
	if err != nil {
		return nil, err
	}
	defer or.close()
	rigs = append(rigs, or)
	for _, f := range []struct {
		col   string
		plain bool
	}{{colFakeDefault, false}, {colFakePlain, true}} {
		r, err := fakeWatchRig(ctx, f.col, f.plain)
		if err != nil {
			return nil, err
		}
		rigs = append(rigs, r)
	}
	p50s := make([][]float64, len(rigs))
	p99s := make([][]float64, len(rigs))
	next := make([]int, len(rigs))
	for r := 0; r < cfg.count; r++ {
		for k := range rigs {
			i := (k + r) % len(rigs)
			if cfg.gc {
				runtime.GC()
			}
			res, err := watchRound(rigs[i], cfg.watchers, cfg.watchWrites, &next[i])
			if err != nil {
				return nil, fmt.Errorf("watch, %s: %w", rigs[i].col, err)
			}
			p50s[i] = append(p50s[i], res.p50)
			p99s[i] = append(p99s[i], res.p99)
		}
	}
	for i, r := range rigs {
		rep.watch[r.col] = watchResult{p50: median(p50s[i]), p99: median(p99s[i])}
		vlogf("  watch %-26s p50 %s p99 %s", r.col, fmtDur(median(p50s[i])), fmtDur(median(p99s[i])))
	}
	return rep.finish(cfg, logf)
}

// finish runs the token package's paired benchmark and closes the report.
func (rep *report) finish(cfg *config, logf func(string, ...any)) (*report, error) {
	rep.load = append(rep.load, loadavg())
	if cfg.tokenBench && cfg.wants(rowTokenPaired) {
		logf("[%5.1fs] token sign/verify: the token package's BenchmarkPaired (go test in the root module) (load %s)",
			time.Since(rep.started).Seconds(), loadavg())
		rep.paired, rep.pairedCmd, rep.pairedErr = runPaired(cfg)
		if rep.pairedErr != nil {
			logf("token benchmark failed: %v", rep.pairedErr)
		}
		rep.load = append(rep.load, loadavg())
	}
	rep.elapsed = time.Since(rep.started)
	logf("[%5.1fs] done (load %s)", rep.elapsed.Seconds(), loadavg())
	return rep, nil
}
