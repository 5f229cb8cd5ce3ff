package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/memdb"
)

// The scale table (-scale): for each N, each contender loads N objects (~1 KB
// VirtualClusterInstances with 5 labels, over 100 namespaces) with 16 writers, in a
// process of its own so that heap and RSS are its alone; then it measures what it
// holds (heap and RSS per object after a collection, disk per object), its open
// time (badger: close, open again, ready to serve), a get, a list of everything paged
// by 500, and a list of the 1% carrying a label. Ours loads while a watcher reads
// every event and the garbage collector runs; badger runs without fsync on both
// sides (a load of a million synced writes takes too long on this machine).

var (
	scaleFlag    = flag.Bool("scale", false, "print the scale table instead of the comparison (see -scale-n)")
	scaleN       = flag.String("scale-n", "10000,100000", "comma-separated object counts of the scale table (1000000 is long: minutes per contender)")
	scaleWho     = flag.String("scale-only", "", "contenders of the scale table, comma-separated (default: all): "+strings.Join(scaleContenders, ","))
	scaleChild   = flag.String("scale-child", "", "internal: measure one contender (child process)")
	scaleChildN  = flag.Int("scale-child-n", 0, "internal: objects of the child's measurement")
	scaleTimeout = flag.Duration("scale-timeout", 2*time.Hour, "give up on one contender's measurement after this long")
	scaleSettle  = flag.Duration("scale-settle", 30*time.Second, "badger contenders: how long to leave the store idle after the load before the heap is measured again (badger keeps the buffers of its compactions pooled, releasing one every 2 s once idle); 0: no second measurement")
	scaleProfile = flag.String("scale-heapprofile", "", "write each child's heap profile after its load to this path plus \".<contender>.<N>\" (for go tool pprof)")
)

// Contenders of the scale table.
const (
	scaleOursMem    = "ours-memdb"
	scaleOursBadger = "ours-badger"
	scaleRawMem     = "raw-go-memdb"
	scaleRawBadger  = "raw-badger"
)

var scaleContenders = []string{scaleOursMem, scaleOursBadger, scaleRawMem, scaleRawBadger, scaleFake}

// scaleNamespaces is how many namespaces the objects are spread over.
const scaleNamespaces = 100

// scaleWriters is how many goroutines load the objects.
const scaleWriters = 16

// scalePage is the page size of the paged list of everything.
const scalePage = 500

// scaleResult is what one child measured.
type scaleResult struct {
	Contender  string  `json:"contender"`
	N          int     `json:"n"`
	LoadPerSec float64 `json:"loadPerSec"`
	HeapPerObj float64 `json:"heapPerObj"` // bytes
	// SettledHeapPerObj is the heap per object after -scale-settle of idleness
	// (badger contenders only; 0 when not measured).
	SettledHeapPerObj float64 `json:"settledHeapPerObj,omitempty"`
	RSSPerObj         float64 `json:"rssPerObj"`  // bytes
	DiskPerObj        float64 `json:"diskPerObj"` // bytes; 0 in memory
	OpenSeconds       float64 `json:"openSeconds"`
	OpenHeapMiB       float64 `json:"openHeapMiB"` // heap right after open
	GetNs             float64 `json:"getNs"`
	ListNsPer         float64 `json:"listNsPerObj"` // list of everything, paged, per object (0: no pages)
	// WholeListNsPer is a list of everything in one response, per object (ours and
	// the fake client; 0 when not measured).
	WholeListNsPer float64 `json:"wholeListNsPerObj,omitempty"`
	SelectNs       float64 `json:"selectNs"` // one 1% selector list
	Err            string  `json:"err,omitempty"`
}

// scaleMain runs the scale table or one of its children when asked to; it reports
// whether it did.
func scaleMain() bool {
	switch {
	case *scaleChild != "":
		res, err := scaleMeasure(context.Background(), *scaleChild, *scaleChildN)
		if err != nil {
			res.Err = err.Error()
		}
		_ = json.NewEncoder(os.Stdout).Encode(res)
		return true
	case *scaleFlag:
		if err := scaleTable(os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "compare -scale:", err)
			os.Exit(1)
		}
		return true
	}
	return false
}

// scaleTable runs a child per contender and N, and prints the table.
func scaleTable(out, logw io.Writer) error {
	var ns []int
	for _, f := range strings.Split(*scaleN, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			return fmt.Errorf("-scale-n: %q is not a count of at least 100", f)
		}
		ns = append(ns, n)
	}
	who := scaleContenders
	if *scaleWho != "" {
		who = strings.Split(*scaleWho, ",")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var rows []scaleResult
	for _, n := range ns {
		for _, c := range who {
			fmt.Fprintf(logw, "scale: %s, %d objects...\n", c, n)
			ctx, cancel := context.WithTimeout(context.Background(), *scaleTimeout)
			cmd := exec.CommandContext(ctx, self, "-scale-child", c, "-scale-child-n", strconv.Itoa(n), "-scale-heapprofile", *scaleProfile)
			cmd.Stderr = logw
			b, err := cmd.Output()
			cancel()
			var r scaleResult
			if jerr := json.Unmarshal(b, &r); jerr != nil {
				r = scaleResult{Contender: c, N: n, Err: fmt.Sprintf("%v %v", err, jerr)}
			}
			fmt.Fprintf(logw, "scale: %+v\n", r)
			rows = append(rows, r)
		}
	}
	printScale(out, rows)
	return nil
}

func printScale(out io.Writer, rows []scaleResult) {
	fmt.Fprintln(out, "| N | contender | load/s | heap/obj | heap/obj, idle | RSS/obj | disk/obj | open | get | list all, paged by 500, per object | list all, unpaged, per object | list 1% by label |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		if r.Err != "" {
			fmt.Fprintf(out, "| %d | %s | failed: %s |||||||||\n", r.N, r.Contender, r.Err)
			continue
		}
		disk, open, settled, paged, whole := "-", "-", "-", "-", "-"
		if r.ListNsPer != 0 {
			paged = fmtDur(r.ListNsPer)
		}
		if r.WholeListNsPer != 0 {
			whole = fmtDur(r.WholeListNsPer)
		}
		if r.SettledHeapPerObj != 0 {
			settled = fmtBytes(r.SettledHeapPerObj)
		}
		if r.DiskPerObj > 0 {
			disk = fmtBytes(r.DiskPerObj)
			open = fmt.Sprintf("%.2f s (heap %.0f MiB)", r.OpenSeconds, r.OpenHeapMiB)
		}
		fmt.Fprintf(out, "| %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.N, r.Contender, r.LoadPerSec,
			fmtBytes(r.HeapPerObj), settled, fmtBytes(r.RSSPerObj), disk, open, fmtDur(r.GetNs), paged, whole, fmtDur(r.SelectNs))
	}
}

func fmtBytes(b float64) string {
	if b >= 10*1024 {
		return fmt.Sprintf("%.1f KiB", b/1024)
	}
	return fmt.Sprintf("%.0f B", b)
}

// scaleObject is object i of the scale table: the comparison's object, in one of
// 100 namespaces.
func scaleObject(i int) *resource.VirtualClusterInstance {
	o := oursInstance("obj-", i)
	o.Namespace = scaleNS(i)
	return o
}

func scaleNS(i int) string { return fmt.Sprintf("p-ns%03d", i%scaleNamespaces) }

// scaleRawKey is the raw stores' key of object i, ordered as ours are.
func scaleRawKey(i int) string {
	return "/management.service/virtualclusterinstances/" + scaleNS(i) + "/" + objName("obj-", i)
}

// scaleRawValue is the stored form of object i for the raw stores.
func scaleRawValue(i int) []byte {
	o := scaleObject(i)
	o.APIVersion, o.Kind = "management.service/v1", "VirtualClusterInstance"
	o.UID = fmt.Sprintf("0b8e7c1a-1111-4222-8333-%012d", i)
	o.ResourceVersion = "1"
	o.Generation = 1
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

// memNow returns the heap in use after a collection, and the resident set size.
func memNow() (heap, rss float64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse), readRSS()
}

// settledHeap is the heap per object above heap0 after the store has been left idle
// for -scale-settle (0 when that is 0).
func settledHeap(heap0 float64, n int) float64 {
	if *scaleSettle <= 0 {
		return 0
	}
	time.Sleep(*scaleSettle)
	heap, _ := memNow()
	return (heap - heap0) / float64(n)
}

// recordLoaded records the heap and RSS per object a finished load left above heap0
// and rss0 (measured by loadedMem).
func recordLoaded(res *scaleResult, heap0, rss0 float64) error {
	heap, rss, err := loadedMem(res.Contender, res.N)
	if err != nil {
		return err
	}
	res.HeapPerObj, res.RSSPerObj = (heap-heap0)/float64(res.N), (rss-rss0)/float64(res.N)
	return nil
}

// loadedMem is memNow after a contender's load: it also writes the heap profile
// -scale-heapprofile asks for.
func loadedMem(who string, n int) (heap, rss float64, err error) {
	heap, rss = memNow()
	if *scaleProfile == "" {
		return heap, rss, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%s.%d", *scaleProfile, who, n))
	if err != nil {
		return heap, rss, err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return heap, rss, err
	}
	return heap, rss, f.Close()
}

func readRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func dirSize(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return float64(n)
}

// parallelLoad runs put(i) for i in [0, n) on scaleWriters goroutines, and returns
// the objects per second.
func parallelLoad(n int, put func(i int) error) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	start := time.Now()
	for range scaleWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := put(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), first
}

// timePer runs op k times, five rounds (three for the whole-store operations of a
// store of half a million objects or more), and returns the median time of one op.
func timePer(k int, op func(i int) error) (float64, error) {
	n := 5
	if *scaleChildN >= 500000 && k <= 3 {
		n = 3
	}
	var rounds []float64
	for r := range n {
		start := time.Now()
		for i := range k {
			if err := op(r*k + i); err != nil {
				return 0, err
			}
		}
		rounds = append(rounds, float64(time.Since(start).Nanoseconds())/float64(k))
	}
	sort.Float64s(rounds)
	return rounds[len(rounds)/2], nil
}

// scaleMeasure is one child's work.
func scaleMeasure(ctx context.Context, who string, n int) (scaleResult, error) {
	res := scaleResult{Contender: who, N: n}
	dir, err := os.MkdirTemp("", "compare-scale-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	heap0, rss0 := memNow()
	switch who {
	case scaleOursMem, scaleOursBadger:
		return res, scaleOurs(ctx, &res, dir, who == scaleOursBadger, heap0, rss0)
	case scaleRawMem:
		return res, scaleRawMemdb(&res, heap0, rss0)
	case scaleRawBadger:
		return res, scaleRawBadgerDB(&res, dir, heap0, rss0)
	case scaleFake:
		return res, scaleFakeClient(ctx, &res, heap0, rss0)
	}
	return res, fmt.Errorf("unknown contender %q", who)
}

func scaleOurs(ctx context.Context, res *scaleResult, dir string, onBadger bool, heap0, rss0 float64) error {
	n := res.N
	var be interface{ Close() error }
	var s *store.Store
	open := func() error {
		if onBadger {
			b, err := badger.Open(filepath.Join(dir, "db"), badger.Options{NoSync: true})
			if err != nil {
				return err
			}
			be = b
			s, err = store.New(b, store.Options{})
			return err
		}
		b := memdb.New(memdb.Options{})
		be = b
		var err error
		s, err = store.New(b, store.Options{})
		return err
	}
	if err := open(); err != nil {
		return err
	}
	// A watcher reads every event while the objects load; the garbage collector runs
	// in the store anyway.
	wctx, stopWatch := context.WithCancel(ctx)
	w, err := s.Watch(wctx, &resource.VirtualClusterInstance{}, store.WatchOptions{})
	if err != nil {
		stopWatch()
		return err
	}
	var seen atomic.Int64
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for range w.ResultChan() {
			seen.Add(1)
		}
	}()
	rate, err := parallelLoad(n, func(i int) error {
		return s.Create(ctx, scaleObject(i), store.CreateOptions{})
	})
	if err != nil {
		stopWatch()
		return err
	}
	res.LoadPerSec = rate
	if err := s.Settle(ctx); err != nil {
		stopWatch()
		return err
	}
	stopWatch()
	<-watched
	if err := recordLoaded(res, heap0, rss0); err != nil {
		return err
	}
	if onBadger {
		res.SettledHeapPerObj = settledHeap(heap0, n)
		_ = s.Close()
		_ = be.Close()
		res.DiskPerObj = dirSize(dir) / float64(n)
		start := time.Now()
		if err := open(); err != nil {
			return err
		}
		res.OpenSeconds = time.Since(start).Seconds()
		h, _ := memNow()
		res.OpenHeapMiB = h / (1 << 20)
		// The label index builds in the background; the reads below use it.
		if err := s.Settle(ctx); err != nil {
			return err
		}
	}
	defer func() { _ = s.Close(); _ = be.Close() }()
	r := rand.New(rand.NewSource(1))
	res.GetNs, err = timePer(2000, func(int) error {
		i := r.Intn(n)
		return s.Get(ctx, scaleNS(i), objName("obj-", i), &resource.VirtualClusterInstance{}, store.GetOptions{})
	})
	if err != nil {
		return err
	}
	res.ListNsPer, err = timePer(1, func(int) error {
		cont, got := "", 0
		for {
			l := &resource.VirtualClusterInstanceList{}
			if err := s.List(ctx, l, store.ListOptions{Limit: scalePage, Continue: cont}); err != nil {
				return err
			}
			got += len(l.Items)
			if cont = l.Continue; cont == "" {
				break
			}
		}
		if got != n {
			return fmt.Errorf("listed %d of %d", got, n)
		}
		return nil
	})
	res.ListNsPer /= float64(n)
	if err != nil {
		return err
	}
	res.WholeListNsPer, err = timePer(1, func(int) error {
		l := &resource.VirtualClusterInstanceList{}
		if err := s.List(ctx, l, store.ListOptions{}); err != nil {
			return err
		}
		if len(l.Items) != n {
			return fmt.Errorf("listed %d of %d in one response", len(l.Items), n)
		}
		return nil
	})
	res.WholeListNsPer /= float64(n)
	if err != nil {
		return err
	}
	res.SelectNs, err = timePer(3, func(int) error {
		l := &resource.VirtualClusterInstanceList{}
		if err := s.List(ctx, l, store.ListOptions{LabelSelector: selectorKey + "=" + selectorValue}); err != nil {
			return err
		}
		if len(l.Items) != (n+99)/100 {
			return fmt.Errorf("selected %d of %d", len(l.Items), n)
		}
		return nil
	})
	return err
}

func scaleRawMemdb(res *scaleResult, heap0, rss0 float64) error {
	n := res.N
	db, err := newRawMemdb()
	if err != nil {
		return err
	}
	var mu sync.Mutex // go-memdb has one writer at a time
	rate, err := parallelLoad(n, func(i int) error {
		row := &rawRow{Key: scaleRawKey(i), Rev: 1, Labels: benchLabels(i), Value: scaleRawValue(i)}
		mu.Lock()
		defer mu.Unlock()
		txn := db.Txn(true)
		if err := txn.Insert(rawTable, row); err != nil {
			txn.Abort()
			return err
		}
		txn.Commit()
		return nil
	})
	if err != nil {
		return err
	}
	res.LoadPerSec = rate
	if err := recordLoaded(res, heap0, rss0); err != nil {
		return err
	}
	r := rand.New(rand.NewSource(1))
	decode := func(v []byte) error {
		return json.Unmarshal(v, &resource.VirtualClusterInstance{})
	}
	res.GetNs, err = timePer(2000, func(int) error {
		raw, err := db.Txn(false).First(rawTable, "id", scaleRawKey(r.Intn(n)))
		if err != nil || raw == nil {
			return errors.Join(errors.New("get failed"), err)
		}
		return decode(raw.(*rawRow).Value)
	})
	if err != nil {
		return err
	}
	res.ListNsPer, err = timePer(1, func(int) error {
		it, err := db.Txn(false).Get(rawTable, "id_prefix", "/management.service/virtualclusterinstances/")
		if err != nil {
			return err
		}
		got := 0
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if err := decode(raw.(*rawRow).Value); err != nil {
				return err
			}
			got++
		}
		if got != n {
			return fmt.Errorf("listed %d of %d", got, n)
		}
		return nil
	})
	res.ListNsPer /= float64(n)
	if err != nil {
		return err
	}
	res.SelectNs, err = timePer(3, func(int) error {
		it, err := db.Txn(false).Get(rawTable, "labels", selectorKey, selectorValue)
		if err != nil {
			return err
		}
		got := 0
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if err := decode(raw.(*rawRow).Value); err != nil {
				return err
			}
			got++
		}
		if got != (n+99)/100 {
			return fmt.Errorf("selected %d of %d", got, n)
		}
		return nil
	})
	return err
}

func scaleRawBadgerDB(res *scaleResult, dir string, heap0, rss0 float64) error {
	n := res.N
	path := filepath.Join(dir, "db")
	open := func() (*badgerdb.DB, error) {
		return badgerdb.Open(badgerdb.DefaultOptions(path).WithSyncWrites(false).WithLogger(nil))
	}
	db, err := open()
	if err != nil {
		return err
	}
	rate, err := parallelLoad(n, func(i int) error {
		return db.Update(func(txn *badgerdb.Txn) error {
			return txn.Set([]byte(scaleRawKey(i)), withRev(1, scaleRawValue(i)))
		})
	})
	if err != nil {
		_ = db.Close()
		return err
	}
	res.LoadPerSec = rate
	if err := recordLoaded(res, heap0, rss0); err != nil {
		return err
	}
	res.SettledHeapPerObj = settledHeap(heap0, n)
	if err := db.Close(); err != nil {
		return err
	}
	res.DiskPerObj = dirSize(path) / float64(n)
	start := time.Now()
	if db, err = open(); err != nil {
		return err
	}
	res.OpenSeconds = time.Since(start).Seconds()
	h, _ := memNow()
	res.OpenHeapMiB = h / (1 << 20)
	defer db.Close()
	decode := func(v []byte) (*resource.VirtualClusterInstance, error) {
		o := &resource.VirtualClusterInstance{}
		return o, json.Unmarshal(v[8:], o)
	}
	r := rand.New(rand.NewSource(1))
	res.GetNs, err = timePer(2000, func(int) error {
		return db.View(func(txn *badgerdb.Txn) error {
			item, err := txn.Get([]byte(scaleRawKey(r.Intn(n))))
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error { _, err := decode(v); return err })
		})
	})
	if err != nil {
		return err
	}
	// The same scan for both lists: every object decoded; the selector keeps 1%.
	scan := func(keep func(o *resource.VirtualClusterInstance) bool) (int, error) {
		got := 0
		err := db.View(func(txn *badgerdb.Txn) error {
			it := txn.NewIterator(badgerdb.IteratorOptions{PrefetchValues: true, PrefetchSize: 100,
				Prefix: []byte("/management.service/virtualclusterinstances/")})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				if err := it.Item().Value(func(v []byte) error {
					o, err := decode(v)
					if err == nil && keep(o) {
						got++
					}
					return err
				}); err != nil {
					return err
				}
			}
			return nil
		})
		return got, err
	}
	res.ListNsPer, err = timePer(1, func(int) error {
		got, err := scan(func(*resource.VirtualClusterInstance) bool { return true })
		if err == nil && got != n {
			err = fmt.Errorf("listed %d of %d", got, n)
		}
		return err
	})
	res.ListNsPer /= float64(n)
	if err != nil {
		return err
	}
	// Without an index, a selector list is the whole scan: once per round.
	res.SelectNs, err = timePer(1, func(int) error {
		got, err := scan(func(o *resource.VirtualClusterInstance) bool { return o.Labels[selectorKey] == selectorValue })
		if err == nil && got != (n+99)/100 {
			err = fmt.Errorf("selected %d of %d", got, n)
		}
		return err
	})
	return err
}
