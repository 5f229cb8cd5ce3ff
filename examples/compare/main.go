// Command compare runs the workloads of the performance issue (issue 11) side by
// side, in one run, on our store and on what users would pick instead, and prints a
// table of medians and ratios (ours ÷ theirs) and which targets hold:
//
//   - ours: store.New over memdb, and over store/badger with synced writes and
//     without;
//   - controller-runtime's fake client (sigs.k8s.io/controller-runtime/pkg/client/fake)
//     with its default, field-managed tracker and with client-go's plain object
//     tracker, on a typed CRD-like mirror of VirtualClusterInstance and on
//     unstructured objects;
//   - raw go-memdb and raw badger, used directly;
//   - for policy evaluation, an RBAC RulesAllow-equivalent and
//     k8s.io/component-helpers' rule matching; for tokens, go-jose.
//
// Every object is the ~1 KB VirtualClusterInstance with 5 labels of
// store/bench_test.go. Each measurement is calibrated to about -benchtime, then
// sampled -count times with the contenders of an operation taking turns (ours and
// theirs interleaved, so that they see the same load on a shared machine); the
// median is reported. Ratios are the result, not absolute times.
//
// It is a nested module, so that the library never requires Kubernetes modules. Run
// it from its directory:
//
//	cd examples/compare && go run .
//
// Flags: -count (samples per measurement, 5), -benchtime (duration of a sample),
// -iterations (a fixed number of operations per sample instead of calibrating),
// -small and -large (objects in the two lists), -watchers and -watch-writes,
// -writers, -token-bench (run the token package's paired benchmark in the root
// module for the sign ratio), -only (a regular expression: measure only the
// operations it matches, e.g. -only 'create|update'), -v (each measurement as it is
// taken), -crclient (only the table of issue 23: store/crclient, the
// controller-runtime client backed by the store, against the fake client; -only
// applies to its rows too).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"
)

// config is what the flags set.
type config struct {
	count          int
	benchtime      time.Duration
	iterations     int
	maxOps         int
	small, large   int
	watchers       int
	watchWrites    int
	writers        int
	tokenBench     bool
	tokenBenchtime string
	root           string
	gc             bool
	verbose        bool
	only           *regexp.Regexp
	tmp            string
}

// wants says whether the operation row is to be measured (-only).
func (c *config) wants(row string) bool { return c.only == nil || c.only.MatchString(row) }

func (c *config) tempDir(name string) (string, error) { return os.MkdirTemp(c.tmp, name+"-") }

func defaultConfig() *config {
	return &config{count: 5, benchtime: 40 * time.Millisecond, maxOps: 1 << 22,
		small: 1000, large: 10000, watchers: 100, watchWrites: 200, writers: 16,
		tokenBench: true, tokenBenchtime: "300ms"}
}

func main() {
	cfg := defaultConfig()
	flag.IntVar(&cfg.count, "count", cfg.count, "samples per measurement (the median is reported)")
	flag.DurationVar(&cfg.benchtime, "benchtime", cfg.benchtime, "target duration of one sample")
	flag.IntVar(&cfg.iterations, "iterations", 0, "operations per sample (0: calibrate to -benchtime)")
	flag.IntVar(&cfg.small, "small", cfg.small, "objects in the store for the list-all workload")
	flag.IntVar(&cfg.large, "large", cfg.large, "objects in the store for the label-selector list (1% match)")
	flag.IntVar(&cfg.watchers, "watchers", cfg.watchers, "watchers that each write must reach")
	flag.IntVar(&cfg.watchWrites, "watch-writes", cfg.watchWrites, "writes per watch sample")
	flag.IntVar(&cfg.writers, "writers", cfg.writers, "goroutines of the concurrent-writers workload")
	flag.BoolVar(&cfg.tokenBench, "token-bench", cfg.tokenBench, "run the token package's BenchmarkPaired (go test, root module) for the sign/verify ratios")
	flag.StringVar(&cfg.tokenBenchtime, "token-benchtime", cfg.tokenBenchtime, "-benchtime of the token benchmark")
	flag.StringVar(&cfg.root, "root", "", "directory of the root module (default: found from the working directory)")
	flag.BoolVar(&cfg.gc, "gc", cfg.gc, "collect garbage before each sample (slow when the heap is large)")
	flag.BoolVar(&cfg.verbose, "v", false, "print each measurement as it is taken")
	crTable := flag.Bool("crclient", false, "measure only store/crclient against the fake client (issue 23's table)")
	only := flag.String("only", "", "measure only the operations whose name matches this regular expression (create, get, update, list, writers, scaling, policy, token, watch)")
	flag.Parse()
	if scaleMain() { // -scale: scale.go
		return
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare: -only:", err)
			os.Exit(2)
		}
		cfg.only = re
	}
	if *crTable {
		t, err := measureCRClient(context.Background(), cfg, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		t.print(os.Stdout)
		return
	}
	if err := run(context.Background(), cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// run measures everything and prints the report to out, progress to logw.
func run(ctx context.Context, cfg *config, out, logw io.Writer) error {
	if cfg.small < 100 || cfg.large < 100 || cfg.small%100 != 0 || cfg.large%100 != 0 {
		return fmt.Errorf("-small and -large must be multiples of 100")
	}
	dir, err := os.MkdirTemp(cfg.tmp, "compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.tmp = dir
	rep, err := measureAll(ctx, cfg, logw)
	if err != nil {
		return err
	}
	rep.print(out)
	return nil
}
