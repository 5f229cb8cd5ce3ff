package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// config is what the flags set.
type config struct {
	caseSel   string
	json      bool
	slow      bool
	messages  bool
	root      string
	serverBin string
	verbose   bool
	list      bool
	keep      bool
	load      loadConfig
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "kubediff:", err)
	}
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("kubediff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.caseSel, "case", "", "run only the case of this name (or, if none has it, those matching it as a regular expression)")
	fs.BoolVar(&c.json, "json", false, "print the results as JSON on stdout")
	fs.BoolVar(&c.slow, "slow", false, "also run the slow cases (the idle-watch bookmark waits ~75 s)")
	fs.BoolVar(&c.messages, "messages", false, "also compare the messages of Status errors")
	fs.StringVar(&c.root, "root", "../..", "the repository root (examples/server and schema/schemas are found there)")
	fs.StringVar(&c.serverBin, "server-bin", "", "a built examples/server to run instead of building one")
	fs.BoolVar(&c.verbose, "v", false, "print each request as it is sent (stderr)")
	fs.BoolVar(&c.list, "list", false, "list the cases and exit")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary directory (logs, etcd data, certificates)")
	registerLoadFlags(fs, &c.load)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return c, nil
}

// selectCases returns the cases to run: by exact name, else by regular expression;
// slow ones only with slow (or when named exactly).
func selectCases(all []Case, sel string, slow bool) ([]Case, error) {
	if sel != "" {
		for _, c := range all {
			if c.Name == sel {
				return []Case{c}, nil
			}
		}
		r, err := regexp.Compile(sel)
		if err != nil {
			return nil, fmt.Errorf("-case %q: no case of that name, and not a regular expression: %w", sel, err)
		}
		var out []Case
		for _, c := range all {
			if r.MatchString(c.Name) && (slow || !c.Slow) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("-case %q matches no case (-list shows them)", sel)
		}
		return out, nil
	}
	var out []Case
	for _, c := range all {
		if slow || !c.Slow {
			out = append(out, c)
		}
	}
	return out, nil
}

// run is the command; the exit code is 0 when every case ran (differences or not),
// 1 when the servers could not be started or a case could not run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return 2, err
	}
	if c.load.floorServe != "" {
		return 1, serveFloor(c.load.floorServe, stdout)
	}
	all := Cases()
	if c.list {
		for _, cs := range all {
			slow := ""
			if cs.Slow {
				slow = "  (slow: -slow)"
			}
			fmt.Fprintf(stdout, "%-45s area %s%s\n", cs.Name, cs.Area, slow)
		}
		return 0, nil
	}
	cases, err := selectCases(all, c.caseSel, c.slow)
	if err != nil {
		return 2, err
	}
	root, err := filepath.Abs(c.root)
	if err != nil {
		return 1, err
	}
	progress := func(s string) { fmt.Fprintf(stderr, "kubediff: %s\n", s) }

	schemas, err := loadSchemas(filepath.Join(root, "schema", "schemas"))
	if err != nil {
		return 1, err
	}
	crds, err := schemas.CRDs()
	if err != nil {
		return 1, fmt.Errorf("generating the CRDs: %w", err)
	}

	dir, err := os.MkdirTemp("", "kubediff-")
	if err != nil {
		return 1, err
	}
	if c.keep {
		progress("keeping " + dir)
	} else {
		defer os.RemoveAll(dir)
	}

	bin := c.serverBin
	if bin == "" {
		progress("building examples/server")
		if bin, err = buildOurs(ctx, root, dir); err != nil {
			return 1, err
		}
	}
	if c.load.enabled {
		return runLoad(ctx, c.load, bin, dir, crds, stdout, progress)
	}
	start := time.Now()
	kube, err := startKube(ctx, dir, crds, progress)
	if err != nil {
		return 1, fmt.Errorf("starting the reference apiserver: %w", err)
	}
	defer kube.Stop()
	progress(fmt.Sprintf("etcd and apiextensions-apiserver up in %s", time.Since(start).Round(time.Millisecond)))
	ours, err := startOurs(ctx, bin, filepath.Join(dir, "ours.log"))
	if err != nil {
		return 1, err
	}
	defer ours.Stop()
	progress("examples/server at " + ours.URL)

	kt, ot := kube.Target(), ours.Target()
	kt.Verbose, ot.Verbose, kt.Log, ot.Log = c.verbose, c.verbose, stderr, stderr
	results := RunCases(ctx, cases, kt, ot, c, progress)
	if c.json {
		if err := PrintJSON(stdout, results); err != nil {
			return 1, err
		}
	} else {
		PrintText(stdout, results)
	}
	progress(fmt.Sprintf("done in %s", time.Since(start).Round(time.Millisecond)))
	for _, r := range results {
		if r.Error != "" {
			return 1, nil
		}
	}
	return 0, nil
}

// RunCases runs each case on both servers and compares the answers.
func RunCases(ctx context.Context, cases []Case, kube, ours *Target, c config, progress func(string)) []CaseResult {
	var results []CaseResult
	for i, cs := range cases {
		if ctx.Err() != nil {
			break
		}
		n := namesFor(caseIndex(cs.Name))
		r := CaseResult{Name: cs.Name, Area: cs.Area}
		if c.verbose {
			progress(fmt.Sprintf("case %d/%d %s", i+1, len(cases), cs.Name))
		}
		kr, ksetup, kerr := cs.Run(ctx, kube, n, c.messages)
		or, osetup, oerr := cs.Run(ctx, ours, n, c.messages)
		var krefused, orefused *RefusedError
		errors.As(kerr, &krefused)
		errors.As(oerr, &orefused)
		switch {
		case krefused != nil || orefused != nil:
			// A setup step refused by one server (or both, differently) is the
			// difference; what follows it is not compared.
			label := ""
			if krefused != nil {
				label = krefused.Label
			} else {
				label = orefused.Label
			}
			kv, ov := ksetup[label], osetup[label]
			if kv == nil || ov == nil || render(kv) != render(ov) {
				r.Differences = []Difference{{Path: label + ".code", Kube: summaryOrAbsent(kv), Ours: summaryOrAbsent(ov)}}
			} else {
				r.Error = fmt.Sprintf("both servers refused setup step %q: %s", label, summary(kv))
			}
		case kerr != nil || oerr != nil:
			r.Error = fmt.Sprintf("kube: %v; ours: %v", kerr, oerr)
		default:
			r.Differences = Compare(kr, or)
		}
		Classify(cs.Name, r.Differences)
		r.Same = r.Error == "" && len(r.Differences) == 0
		if c.json {
			r.Kube, r.Ours = kr, or
		}
		results = append(results, r)
	}
	return results
}

func summaryOrAbsent(v map[string]any) string {
	if v == nil {
		return Absent
	}
	return summary(v)
}

// caseIndex gives a case a stable number from its name (its position in Cases),
// so that its objects have the same names however the cases are selected.
func caseIndex(name string) int {
	for i, c := range Cases() {
		if c.Name == name {
			return i + 1
		}
	}
	return 0
}
