package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/management-service/mgmt/store/crclient"
)

// The -crclient table (issue 23): store/crclient, the controller-runtime client
// backed by the store, against controller-runtime's fake client with its default
// tracker, on the same workloads, for the typed CRD-like mirror of
// VirtualClusterInstance and for a ConfigMap of the same size and labels.

const (
	colCR   = "crclient"
	colFake = "fake, default tracker"
)

// crShape is one object type of the table.
type crShape struct {
	name     string
	mk       objMaker
	newList  func() client.ObjectList
	listLen  func(client.ObjectList) int
	newObj   func() client.Object
	update   func(obj client.Object, v string)
	fake     func() client.WithWatch
	ours     func() (*crclient.Client, error)
	listKind schema.GroupVersionKind
}

func crShapes() []crShape {
	return []crShape{
		{
			name: "typed CRD-like", mk: typedMaker,
			newList: func() client.ObjectList { return &VirtualClusterInstanceList{} },
			listLen: func(l client.ObjectList) int { return len(l.(*VirtualClusterInstanceList).Items) },
			newObj:  func() client.Object { return &VirtualClusterInstance{} },
			update:  func(o client.Object, v string) { o.(*VirtualClusterInstance).Spec.DisplayName = v },
			fake:    func() client.WithWatch { return newFakeClient(false) },
			ours: func() (*crclient.Client, error) {
				return crclient.NewClientBuilder().WithScheme(newK8sScheme()).
					WithStatusSubresource(&VirtualClusterInstance{}).BuildClient()
			},
		},
		{
			name: "ConfigMap", mk: configMapMaker,
			newList: func() client.ObjectList { return &corev1.ConfigMapList{} },
			listLen: func(l client.ObjectList) int { return len(l.(*corev1.ConfigMapList).Items) },
			newObj:  func() client.Object { return &corev1.ConfigMap{} },
			update:  func(o client.Object, v string) { o.(*corev1.ConfigMap).Data["displayName"] = v },
			fake:    func() client.WithWatch { return fake.NewClientBuilder().Build() },
			ours:    func() (*crclient.Client, error) { return crclient.NewClientBuilder().BuildClient() },
		},
	}
}

func crRow(shape, op string) string { return shape + ": " + op }

// crListBench lists all objects (with opts) n times and checks the count.
func crListBench(ctx context.Context, c client.Client, row, col string, sh crShape, want int, opts ...client.ListOption) *bench {
	return &bench{row: row, col: col, run: func(n int) error {
		for i := 0; i < n; i++ {
			l := sh.newList()
			if err := c.List(ctx, l, opts...); err != nil {
				return err
			}
			if got := sh.listLen(l); got != want {
				return fmt.Errorf("listed %d, want %d", got, want)
			}
		}
		return nil
	}}
}

// crBenches returns the benches of one contender on one shape: write is the client
// of create, get and update; small and large hold cfg.small and cfg.large objects.
func crBenches(ctx context.Context, cfg *config, sh crShape, col string, write, small, large client.Client) ([]*bench, error) {
	if err := fakeSeedWith(ctx, write, sh.mk, prefixGet, getSeed); err != nil {
		return nil, err
	}
	if err := write.Create(ctx, sh.mk(prefixUpdate, 0)); err != nil {
		return nil, err
	}
	if err := fakeSeedWith(ctx, small, sh.mk, prefixList, cfg.small); err != nil {
		return nil, err
	}
	if err := fakeSeedWith(ctx, large, sh.mk, prefixList, cfg.large); err != nil {
		return nil, err
	}
	create := fakeCreateWith(ctx, write, crRow(sh.name, "create"), col, sh.mk, prefixCreate)
	out := sh.newObj()
	get := fakeGetWith(ctx, write, crRow(sh.name, "get"), col, func() client.Object { return out })
	obj := sh.newObj()
	update, err := fakeUpdateWith(ctx, write, crRow(sh.name, "update"), col, obj, objName(prefixUpdate, 0),
		func(v string) error { sh.update(obj, v); return nil })
	if err != nil {
		return nil, err
	}
	listAll := crListBench(ctx, small, crRow(sh.name, fmt.Sprintf("list %s", thousands(cfg.small))), col, sh, cfg.small)
	listSel := crListBench(ctx, large, crRow(sh.name, fmt.Sprintf("list %s, label selector 1%%", thousands(cfg.large))), col, sh,
		cfg.large/100, client.MatchingLabels{selectorKey: selectorValue})
	return []*bench{create, get, update, listAll, listSel}, nil
}

// crTable is the result of the -crclient run.
type crTable struct {
	m    *measurer
	rows []string
	cfg  *config
	took time.Duration
	// spread is the lowest and highest per-round ratio of each row.
	spread map[string][2]float64
	// cpuRatio is the median of the rounds' ratios of CPU time on the operation's
	// own thread (where the system reports it).
	cpuRatio              map[string]float64
	loadBefore, loadAfter string
}

// measureRow times ours and theirs on one row, interleaved operation by operation:
// each is calibrated to the sample duration, then every round prepares n
// operations of each (the smaller of the two calibrations) and runs them in pairs,
// one of ours and one of theirs back to back (which goes first alternates), each
// timed on its own. So both see the same load from other processes and the same
// garbage collection cycles, in proportion to the time they take, which samples
// taken one after the other do not on a shared machine. The row's ratio is the
// median of the rounds' ratios theirs ÷ ours; the medians of each column are kept
// too.
func (t *crTable) measureRow(ours, theirs *bench) error {
	m := t.m
	if !m.cfg.wants(ours.row) {
		return nil
	}
	n := m.cfg.maxOps
	for _, b := range []*bench{ours, theirs} {
		c, err := m.calibrate(b)
		if err != nil {
			return err
		}
		n = min(n, c)
	}
	benches := [2]*bench{ours, theirs}
	var on, tn, rs, cpuRatios []float64
	for r := 0; r < m.cfg.count; r++ {
		for _, b := range benches {
			if b.prepare != nil {
				b.prepare(n)
			}
		}
		// Every round starts from a collected heap: what the seeding or the round
		// before left to collect is not charged to whichever client runs into it.
		// A round allocates far less than the heap holds, so its operations are
		// timed without a collection: this leaves out the collector's share, which
		// favours the client that allocates more (the fake client, about twice our
		// bytes per create).
		runtime.GC()
		var d, cpu [2]time.Duration
		cpuOK := true
		// The goroutine stays on its thread, so that the thread's CPU clock counts
		// the operation's own work (not the time the machine gave to other
		// processes, nor the store's background goroutines').
		runtime.LockOSThread()
		for i := 0; i < n; i++ {
			for k := range 2 {
				j := (k + i + r) % 2
				c0, ok0 := threadCPUTime()
				t0 := time.Now()
				if err := benches[j].run(1); err != nil {
					runtime.UnlockOSThread()
					return fmt.Errorf("%s / %s: %w", benches[j].row, benches[j].col, err)
				}
				d[j] += time.Since(t0)
				c1, ok1 := threadCPUTime()
				cpuOK = cpuOK && ok0 && ok1
				cpu[j] += c1 - c0
			}
		}
		runtime.UnlockOSThread()
		o, th := float64(d[0].Nanoseconds())/float64(n), float64(d[1].Nanoseconds())/float64(n)
		on, tn, rs = append(on, o), append(tn, th), append(rs, th/o)
		if cpuOK && cpu[0] > 0 {
			oc, tc := float64(cpu[0].Nanoseconds())/float64(n), float64(cpu[1].Nanoseconds())/float64(n)
			cpuRatios = append(cpuRatios, tc/oc)
			m.logf("    round %d: %s %s/op (CPU %s), %s %s/op (CPU %s) (%d pairs)", r, ours.col, fmtDur(o), fmtDur(oc),
				theirs.col, fmtDur(th), fmtDur(tc), n)
		} else {
			m.logf("    round %d: %s %s/op, %s %s/op (%d pairs)", r, ours.col, fmtDur(o), theirs.col, fmtDur(th), n)
		}
	}
	if len(cpuRatios) == m.cfg.count {
		t.cpuRatio[ours.row] = median(cpuRatios)
	}
	m.results[[2]string{ours.row, ours.col}] = result{nsPerOp: median(on), allocsPerOp: -1, n: n}
	m.results[[2]string{theirs.row, theirs.col}] = result{nsPerOp: median(tn), allocsPerOp: -1, n: n}
	m.ratios[ours.row] = median(rs)
	t.spread[ours.row] = [2]float64{slices.Min(rs), slices.Max(rs)}
	m.logf("  %-44s %s %s/op, %s %s/op, ratios %.3g (%.3g–%.3g)", ours.row, ours.col, fmtDur(median(on)),
		theirs.col, fmtDur(median(tn)), median(rs), slices.Min(rs), slices.Max(rs))
	return nil
}

// loadAverage is the machine's load average (1, 5 and 15 minutes), "" where the
// system does not say.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// measureCRClient runs the -crclient table.
func measureCRClient(ctx context.Context, cfg *config, logw io.Writer) (*crTable, error) {
	start := time.Now()
	m := &measurer{cfg: cfg, results: map[[2]string]result{}, ratios: map[string]float64{},
		logf: func(format string, args ...any) {
			if cfg.verbose {
				fmt.Fprintf(logw, format+"\n", args...)
			}
		}}
	t := &crTable{m: m, cfg: cfg, spread: map[string][2]float64{}, cpuRatio: map[string]float64{}, loadBefore: loadAverage()}
	for _, sh := range crShapes() {
		fmt.Fprintf(logw, "crclient: seeding %s (%d + %d objects per contender)\n", sh.name, cfg.small, cfg.large)
		var oursClients []*crclient.Client
		for range 3 {
			c, err := sh.ours()
			if err != nil {
				return nil, err
			}
			oursClients = append(oursClients, c)
		}
		ours, err := crBenches(ctx, cfg, sh, colCR, oursClients[0], oursClients[1], oursClients[2])
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", sh.name, colCR, err)
		}
		theirs, err := crBenches(ctx, cfg, sh, colFake, sh.fake(), sh.fake(), sh.fake())
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", sh.name, colFake, err)
		}
		for i := range ours {
			t.rows = append(t.rows, ours[i].row)
			fmt.Fprintf(logw, "crclient: %s\n", ours[i].row)
			if err := t.measureRow(ours[i], theirs[i]); err != nil {
				return nil, err
			}
		}
		for _, c := range oursClients {
			_ = c.Close()
		}
	}
	t.took = time.Since(start)
	t.loadAfter = loadAverage()
	return t, nil
}

// print writes the table: medians, and the speed-up (fake ÷ crclient; the target is
// at least 2) as the median of the per-round ratios, with the lowest and highest.
func (t *crTable) print(out io.Writer) {
	c := t.cfg
	fmt.Fprintf(out, "# store/crclient vs controller-runtime's fake client (issue 23): medians of %d rounds of operations of each taken in turns (~%v of each per round, the heap collected before each round); %s, GOMAXPROCS %d; run took %.0fs; load average %s before, %s after\n\n",
		c.count, c.benchtime, runtime.Version(), runtime.GOMAXPROCS(0), t.took.Seconds(), orDash(t.loadBefore), orDash(t.loadAfter))
	fmt.Fprintln(out, "| operation | crclient | fake, default tracker | fake ÷ crclient (median of rounds) | lowest–highest round | ≥ 2× | CPU on the operation's thread: fake ÷ crclient |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	for _, row := range t.rows {
		o, ok1 := t.m.get(row, colCR)
		f, ok2 := t.m.get(row, colFake)
		if !ok1 || !ok2 {
			continue
		}
		speed, ok := t.m.ratios[row]
		if !ok {
			speed = f.nsPerOp / o.nsPerOp
		}
		mark := "no"
		if speed >= 2 {
			mark = "yes"
		}
		sp := t.spread[row]
		cpu := "—"
		if c, ok := t.cpuRatio[row]; ok {
			cpu = fmt.Sprintf("%.2f×", c)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %.2f× | %.2f–%.2f× | %s | %s |\n", row, fmtDur(o.nsPerOp), fmtDur(f.nsPerOp), speed, sp[0], sp[1], mark, cpu)
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
