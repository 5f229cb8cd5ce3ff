package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// loadConfig is what the -load flags set: the load comparison of issue 25 item 4.
type loadConfig struct {
	enabled  bool
	duration time.Duration
	rounds   int
	objects  int
	listSize int
	watchers int
	writers  int
	drain    time.Duration
	memdb    bool
	only     string
	// floor adds the floor (load_floor.go) to the throughput workloads.
	floor bool
	// floorServe, when set, makes the program the floor's server, serving the
	// answers captured in this directory (how -load-floor starts it).
	floorServe string
}

// registerLoadFlags adds the -load flags to fs.
func registerLoadFlags(fs *flag.FlagSet, c *loadConfig) {
	fs.BoolVar(&c.enabled, "load", false, "instead of the cases, run the load comparison (throughput, watch latency, memory) on both servers")
	fs.DurationVar(&c.duration, "load-duration", 2*time.Second, "-load: how long each throughput workload and the watch writers run, per server and round")
	fs.IntVar(&c.rounds, "load-rounds", 3, "-load: rounds (the table shows medians)")
	fs.IntVar(&c.objects, "load-objects", 10000, "-load: VirtualClusterInstances created before the workloads (memory is measured then)")
	fs.IntVar(&c.listSize, "load-list-size", 1000, "-load: objects per namespace, the size of a LIST")
	fs.IntVar(&c.watchers, "load-watchers", 100, "-load: watchers of the watch workload")
	fs.IntVar(&c.writers, "load-writers", 16, "-load: writers (creates at full speed) of the watch workload")
	fs.DurationVar(&c.drain, "load-drain", 5*time.Second, "-load: how long watchers may take after the last write before a missing event counts as lost")
	fs.StringVar(&c.only, "load-only", "", "-load: run only the workloads whose name (\"GET c=16\", \"LIST 1,000 c=1\", \"watch\", ...) matches this regular expression; objects are always created and memory measured")
	fs.BoolVar(&c.memdb, "load-memdb", false, "-load: also run our server in memory over plain HTTP")
	fs.BoolVar(&c.floor, "load-floor", false, "-load: also run the throughput workloads on a server that does no work (it replays our server's answers over TLS): the most any Go net/http server can reach with this load generator on this machine")
	fs.StringVar(&c.floorServe, "load-floor-serve", "", "internal: serve as -load-floor's server the answers captured in this directory")
}

// median is the middle of xs (the mean of the two middle values for an even count);
// NaN for none. xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// loadRow is one line of the load table: a measure, its value per server (kube
// first), and whether bigger is better (throughput) or smaller (latency, memory).
type loadRow struct {
	Name   string
	Unit   string
	Values []float64
	// Higher is true when bigger is better.
	Higher bool
	// Note is printed after the ratios.
	Note string
}

// formatValue prints v with a precision that suits its size.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// ratio is ours ÷ kube, printed with two decimals and ×; "-" when either is missing
// or kube's is 0.
func ratio(ours, kube float64) string {
	if math.IsNaN(ours) || math.IsNaN(kube) || kube == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", ours/kube)
}

// printLoadTable writes rows as an aligned table: one column per server, then one
// ratio ours÷kube per server after the first (which is kube).
func printLoadTable(w io.Writer, servers []string, rows []loadRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"measure", "unit"}
	head = append(head, servers...)
	for _, s := range servers[1:] {
		head = append(head, s+"÷"+servers[0])
	}
	head = append(head, "note")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		cells := []string{r.Name, r.Unit}
		for i := range servers {
			v := math.NaN()
			if i < len(r.Values) {
				v = r.Values[i]
			}
			cells = append(cells, formatValue(v))
		}
		for i := 1; i < len(servers); i++ {
			v := math.NaN()
			if i < len(r.Values) {
				v = r.Values[i]
			}
			k := math.NaN()
			if len(r.Values) > 0 {
				k = r.Values[0]
			}
			cells = append(cells, ratio(v, k))
		}
		cells = append(cells, r.Note)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}

// rssFromStatus reads VmRSS (bytes) from the text of /proc/<pid>/status.
func rssFromStatus(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
			return 0, fmt.Errorf("VmRSS line %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line in the status")
}

// fieldString finds the first "key":"value" in a JSON text and returns value (no
// unescaping: names and resource versions need none); "" when absent. It lets the
// load generator read a watch event or a response cheaply, without decoding it.
func fieldString(b []byte, key string) string {
	pat := []byte(`"` + key + `":"`)
	i := bytes.Index(b, pat)
	if i < 0 {
		return ""
	}
	b = b[i+len(pat):]
	j := bytes.IndexByte(b, '"')
	if j < 0 {
		return ""
	}
	return string(b[:j])
}
