//go:build kubediff

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Our server's admission bounds for the load run: one admin key drives all the load,
// and a caller may hold half of each bound (store/httpapi Config.Max*PerUser), so the
// bounds are raised far above what the load generator opens at once.
const (
	loadMaxInflight         = 4000
	loadMaxMutatingInflight = 4000
)

// loadTarget is one server under load.
type loadTarget struct {
	name   string
	base   string
	client *http.Client
	header http.Header
	// watchHeaders, when set, authenticate the watchers in turn (several
	// identities, see watchIdentities).
	watchHeaders []http.Header
	// rss reports the memory the server holds.
	rss func() (int64, error)
	// throughputOnly marks the floor: it runs the throughput workloads only.
	throughputOnly bool
}

// loadPad makes a VirtualClusterInstance about 1 KB as stored.
var loadPad = strings.Repeat("x", 600)

// loadVCI is a VirtualClusterInstance of about 1 KB; rv, when set, makes the body
// an update of that version; gen changes an annotation so an update changes it.
func loadVCI(ns, project, name, rv string, gen int) string {
	rvField := ""
	if rv != "" {
		rvField = `,"resourceVersion":"` + rv + `"`
	}
	return `{"apiVersion":"` + Group + `/` + Version + `","kind":"VirtualClusterInstance","metadata":{"name":"` + name +
		`","namespace":"` + ns + `","labels":{"` + projectLabel + `":"` + project + `","load":"yes"},"annotations":{"load.example/pad":"` +
		loadPad + `","load.example/gen":"` + strconv.Itoa(gen) + `"}` + rvField +
		`},"spec":{"displayName":"Instance under load","description":"An instance the load program reads and writes","clusterRef":{"cluster":"c1","namespace":"vc","virtualCluster":"vc1"}}}`
}

func loadNS(project string) string { return "p-" + project }

func (t *loadTarget) do(ctx context.Context, method, path, query, body string) (int, []byte, error) {
	u := t.base + path
	if query != "" {
		u += "?" + query
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// opError is a request answered with an unexpected code.
type opError struct {
	code int
	body string
}

func (e *opError) Error() string {
	b := e.body
	if len(b) > 200 {
		b = b[:200] + "…"
	}
	return fmt.Sprintf("%d %s", e.code, strings.TrimSpace(b))
}

func (t *loadTarget) expect(ctx context.Context, method, path, query, body string, codes ...int) ([]byte, error) {
	code, b, err := t.do(ctx, method, path, query, body)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(codes, code) {
		return b, &opError{code: code, body: string(b)}
	}
	return b, nil
}

func (t *loadTarget) createProject(ctx context.Context, name string) error {
	body := `{"apiVersion":"` + Group + `/` + Version + `","kind":"Project","metadata":{"name":"` + name + `"},"spec":{"displayName":"Load"}}`
	_, err := t.expect(ctx, http.MethodPost, projects, "", body, http.StatusCreated, http.StatusConflict)
	if err != nil {
		return fmt.Errorf("%s: creating project %s: %w", t.name, name, err)
	}
	return nil
}

func vciPath(ns string) string { return strings.ReplaceAll(vcis, "{ns}", ns) }

// throughput runs op on c workers for d and returns completed operations per
// second, the failures, and the first failure.
func throughput(ctx context.Context, c int, d time.Duration, op func(ctx context.Context, worker, i int) error) (float64, int64, error) {
	var ok, failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
				err := op(rctx, w, i)
				cancel()
				if err != nil {
					failed.Add(1)
					once.Do(func() { firstErr = err })
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), failed.Load(), firstErr
}

// loadRun is the state of a -load run.
type loadRun struct {
	lc      loadConfig
	targets []*loadTarget
	nsCount int
	log     func(string)
}

func (l *loadRun) populated(i int) (ns, name string) {
	return loadNS(fmt.Sprintf("ld-%d", i/l.lc.listSize)), fmt.Sprintf("o-%d", i%l.lc.listSize)
}

// populate creates the objects (16 at a time) on t and checks a LIST has listSize.
func (l *loadRun) populate(ctx context.Context, t *loadTarget) (float64, error) {
	for i := range l.nsCount {
		if err := t.createProject(ctx, fmt.Sprintf("ld-%d", i)); err != nil {
			return 0, err
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	start := time.Now()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= l.lc.objects || ctx.Err() != nil {
					return
				}
				ns, name := l.populated(i)
				p := strings.TrimPrefix(ns, "p-")
				if _, err := t.expect(ctx, http.MethodPost, vciPath(ns), "", loadVCI(ns, p, name, "", 0), http.StatusCreated); err != nil {
					errs <- fmt.Errorf("%s: creating %s/%s: %w", t.name, ns, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rate := float64(l.lc.objects) / time.Since(start).Seconds()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	ns, _ := l.populated(0)
	b, err := t.expect(ctx, http.MethodGet, vciPath(ns), "", "", http.StatusOK)
	if err != nil {
		return 0, fmt.Errorf("%s: listing %s: %w", t.name, ns, err)
	}
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(b, &list); err != nil {
		return 0, fmt.Errorf("%s: list of %s: %w", t.name, ns, err)
	}
	if len(list.Items) != l.lc.listSize {
		return 0, fmt.Errorf("%s: list of %s has %d items, want %d", t.name, ns, len(list.Items), l.lc.listSize)
	}
	return rate, nil
}

// workload is one throughput measure.
type workload struct {
	name string
	c    int
	// op is one operation; round and target name let it use its own objects.
	op func(l *loadRun, t *loadTarget, round int) func(ctx context.Context, worker, i int) error
}

func workloads() []workload {
	get := func(l *loadRun, t *loadTarget, _ int) func(context.Context, int, int) error {
		return func(ctx context.Context, _, _ int) error {
			ns, name := l.populated(mrand.IntN(l.lc.objects))
			_, err := t.expect(ctx, http.MethodGet, vciPath(ns)+"/"+name, "", "", http.StatusOK)
			return err
		}
	}
	list := func(l *loadRun, t *loadTarget, _ int) func(context.Context, int, int) error {
		return func(ctx context.Context, w, _ int) error {
			ns, _ := l.populated(0)
			_, err := t.expect(ctx, http.MethodGet, vciPath(ns), "", "", http.StatusOK)
			return err
		}
	}
	paged := func(l *loadRun, t *loadTarget, _ int) func(context.Context, int, int) error {
		return func(ctx context.Context, w, _ int) error {
			ns, _ := l.populated(0)
			q := "limit=500"
			for pages := 0; ; pages++ {
				b, err := t.expect(ctx, http.MethodGet, vciPath(ns), q, "", http.StatusOK)
				if err != nil {
					return err
				}
				cont := fieldString(b, "continue")
				if cont == "" {
					return nil
				}
				if pages > l.lc.listSize {
					return errors.New("paging does not end")
				}
				q = "limit=500&continue=" + cont
			}
		}
	}
	create := func(c int) func(l *loadRun, t *loadTarget, round int) func(context.Context, int, int) error {
		return func(l *loadRun, t *loadTarget, round int) func(context.Context, int, int) error {
			p := fmt.Sprintf("ldc-r%d-c%d", round, c)
			ns := loadNS(p)
			return func(ctx context.Context, w, i int) error {
				_, err := t.expect(ctx, http.MethodPost, vciPath(ns), "", loadVCI(ns, p, fmt.Sprintf("w%d-%d", w, i), "", 0), http.StatusCreated)
				return err
			}
		}
	}
	update := func(l *loadRun, t *loadTarget, round int) func(context.Context, int, int) error {
		// Each worker updates its own object of the last populated namespace, with
		// the resourceVersion of its last answer.
		rvs := map[int]string{}
		var mu sync.Mutex
		return func(ctx context.Context, w, i int) error {
			ns, name := l.populated(l.lc.objects - 1 - w)
			p := strings.TrimPrefix(ns, "p-")
			mu.Lock()
			rv := rvs[w]
			mu.Unlock()
			if rv == "" {
				b, err := t.expect(ctx, http.MethodGet, vciPath(ns)+"/"+name, "", "", http.StatusOK)
				if err != nil {
					return err
				}
				rv = fieldString(b, "resourceVersion")
			}
			b, err := t.expect(ctx, http.MethodPut, vciPath(ns)+"/"+name, "", loadVCI(ns, p, name, rv, round*1_000_000+i+1), http.StatusOK)
			if err != nil {
				rv = ""
			} else {
				rv = fieldString(b, "resourceVersion")
			}
			mu.Lock()
			rvs[w] = rv
			mu.Unlock()
			return err
		}
	}
	return []workload{
		{"GET", 1, get}, {"GET", 16, get},
		{"LIST 1,000", 1, list}, {"LIST 1,000", 4, list},
		{"LIST 1,000 paged by 500", 1, paged},
		{"CREATE", 1, create(1)}, {"CREATE", 16, create(16)},
		{"UPDATE", 1, update}, {"UPDATE", 16, update},
	}
}

// watchResult is one round of the watch workload on one server.
type watchResult struct {
	writes      int64
	writeRate   float64
	lost        int64
	reordered   int64
	ended       int64
	p50, p99    time.Duration
	max         time.Duration
	refused     int
	refusedNote string
}

// watcher reads one watch stream without decoding it: one event per line, the
// object's name carries the writer, its sequence number and the send time.
type watcher struct {
	received  atomic.Int64
	reordered int64
	ended     bool
	last      []int
	lat       []time.Duration
}

func (w *watcher) read(body io.Reader, writers int) {
	w.last = make([]int, writers)
	for i := range w.last {
		w.last[i] = -1
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		now := time.Now()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if typ := fieldString(line, "type"); typ != "ADDED" {
			if typ == "ERROR" {
				w.ended = true
			}
			continue
		}
		parts := strings.Split(fieldString(line, "name"), "-")
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "w") {
			continue
		}
		wr, err1 := strconv.Atoi(parts[0][1:])
		seq, err2 := strconv.Atoi(parts[1])
		sent, err3 := strconv.ParseInt(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || wr < 0 || wr >= writers {
			continue
		}
		if seq <= w.last[wr] {
			w.reordered++
		} else {
			w.last[wr] = seq
		}
		w.lat = append(w.lat, now.Sub(time.Unix(0, sent)))
		w.received.Add(1)
	}
}

// watchRound opens the watchers on a new project's namespace, runs the writers
// (creates at full speed) for d, and waits up to drain for every event.
func (l *loadRun) watchRound(ctx context.Context, t *loadTarget, round int) (watchResult, error) {
	var res watchResult
	p := fmt.Sprintf("ldw-r%d", round)
	ns := loadNS(p)
	if err := t.createProject(ctx, p); err != nil {
		return res, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws := make([]*watcher, 0, l.lc.watchers)
	var wg sync.WaitGroup
	for range l.lc.watchers {
		req, err := http.NewRequestWithContext(wctx, http.MethodGet, t.base+vciPath(ns)+"?watch=1", nil)
		if err != nil {
			return res, err
		}
		h := t.header
		if len(t.watchHeaders) > 0 {
			h = t.watchHeaders[(len(ws)+res.refused)%len(t.watchHeaders)]
		}
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Accept", "application/json")
		resp, err := t.client.Do(req)
		if err != nil {
			return res, fmt.Errorf("%s: opening watch %d: %w", t.name, len(ws), err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			res.refused++
			if res.refusedNote == "" {
				res.refusedNote = (&opError{code: resp.StatusCode, body: string(b)}).Error()
			}
			continue
		}
		w := &watcher{}
		ws = append(ws, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			w.read(resp.Body, l.lc.writers)
			if wctx.Err() == nil {
				w.ended = true
			}
		}()
	}
	// Writers.
	var writes atomic.Int64
	var wwg sync.WaitGroup
	start := time.Now()
	end := start.Add(l.lc.duration)
	for wr := range l.lc.writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d-%d-%d", wr, i, time.Now().UnixNano())
				if _, err := t.expect(ctx, http.MethodPost, vciPath(ns), "", loadVCI(ns, p, name, "", 0), http.StatusCreated); err == nil {
					writes.Add(1)
				}
			}
		}()
	}
	wwg.Wait()
	res.writes = writes.Load()
	res.writeRate = float64(res.writes) / time.Since(start).Seconds()
	deadline := time.Now().Add(l.lc.drain)
	for time.Now().Before(deadline) {
		all := true
		for _, w := range ws {
			all = all && w.received.Load() >= res.writes
		}
		if all {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	var lat []time.Duration
	for _, w := range ws {
		if got := w.received.Load(); got < res.writes {
			res.lost += res.writes - got
		}
		res.reordered += w.reordered
		if w.ended {
			res.ended++
		}
		lat = append(lat, w.lat...)
	}
	slices.Sort(lat)
	res.p50, res.p99 = percentile(lat, 50), percentile(lat, 99)
	if len(lat) > 0 {
		res.max = lat[len(lat)-1]
	}
	return res, nil
}

// watchesPerIdentity is how many watches the load gives one identity of our server:
// a caller may hold half of its 1,000 watches (store/httpapi DefaultMaxWatches,
// MaxWatchesPerUser), and examples/server has no flag to raise either.
const watchesPerIdentity = 450

// watchIdentities makes enough access keys (each its own subject, scoped to reading
// VirtualClusterInstances) for n watchers on our server, and returns their headers.
func watchIdentities(ctx context.Context, t *loadTarget, n int) ([]http.Header, error) {
	k := (n + watchesPerIdentity - 1) / watchesPerIdentity
	if k <= 1 {
		return nil, nil
	}
	var hs []http.Header
	for i := range k {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		key := base64.RawURLEncoding.EncodeToString(b)
		body := fmt.Sprintf(`{"apiVersion":"%s/%s","kind":"AccessKey","metadata":{"name":"load-watcher-%d"},"spec":{"subject":"load-watcher-%d","key":"%s","scope":{"rules":[{"verbs":["get","list","watch"],"resources":[{"group":"%s","resources":["virtualclusterinstances"]}]}]}}}`,
			Group, Version, i, i, key, Group)
		if _, err := t.expect(ctx, http.MethodPost, apiV1+"/accesskeys", "", body, http.StatusCreated); err != nil {
			return nil, fmt.Errorf("%s: creating access key %d for the watchers: %w", t.name, i, err)
		}
		hs = append(hs, http.Header{"Authorization": {"Bearer " + key}})
	}
	return hs, nil
}

// procRSS reads the resident memory of a process.
func procRSS(pid string) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0, err
	}
	return rssFromStatus(string(b))
}

// startOursLoad runs examples/server for the load run: on badger over TLS in a
// directory under dir (onBadger), or in memory over plain HTTP, with the admission
// bounds raised; it returns the target and the function that stops the server.
func startOursLoad(ctx context.Context, bin, dir, name string, onBadger bool) (*loadTarget, func(), error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, err
	}
	key := base64.RawURLEncoding.EncodeToString(b)
	args := []string{"--addr", "127.0.0.1:0", "--access-key", key, "--write-kubeconfig=",
		"--max-requests-inflight", strconv.Itoa(loadMaxInflight),
		"--max-mutating-requests-inflight", strconv.Itoa(loadMaxMutatingInflight)}
	caFile := filepath.Join(dir, name+"-ca.crt")
	if onBadger {
		args = append(args, "--data-dir", filepath.Join(dir, name+"-data"), "--write-ca", caFile)
	} else {
		args = append(args, "--http", "--write-ca=")
	}
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &oursServer{cmd: cmd, done: make(chan error, 1), Key: key}
	urls := listeningURLs(stdout)
	go func() {
		s.done <- cmd.Wait()
		_ = logf.Close()
	}()
	select {
	case s.URL = <-urls:
	case err := <-s.done:
		return nil, nil, fmt.Errorf("examples/server exited at start (%v); its log: %s", err, logPath)
	case <-time.After(60 * time.Second):
		s.Stop()
		return nil, nil, fmt.Errorf("examples/server printed no URL in 60s; its log: %s", logPath)
	case <-ctx.Done():
		s.Stop()
		return nil, nil, ctx.Err()
	}
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 256,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	if onBadger {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			s.Stop()
			return nil, nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			s.Stop()
			return nil, nil, errors.New("no certificate in " + caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	return &loadTarget{
		name:   name,
		base:   s.URL,
		client: &http.Client{Transport: tr},
		header: http.Header{"Authorization": {"Bearer " + key}},
		rss:    func() (int64, error) { return procRSS(pid) },
	}, s.Stop, nil
}

// runLoad is the -load command.
func runLoad(ctx context.Context, lc loadConfig, bin, dir string, crds []map[string]any, stdout io.Writer, progress func(string)) (int, error) {
	if lc.listSize <= 0 || lc.objects < lc.listSize || lc.objects%lc.listSize != 0 || lc.rounds <= 0 || lc.objects < 16 {
		return 2, fmt.Errorf("-load-objects must be a positive multiple of -load-list-size (and ≥ 16), -load-rounds positive")
	}
	baseline, err := procRSS("self")
	if err != nil {
		return 1, err
	}
	kube, err := startKube(ctx, dir, crds, progress)
	if err != nil {
		return 1, fmt.Errorf("starting the reference apiserver: %w", err)
	}
	defer kube.Stop()
	ktr := kube.client.Transport.(*http.Transport).Clone()
	ktr.MaxIdleConnsPerHost = 256
	kt := &loadTarget{name: "kube", base: kube.URL, client: &http.Client{Transport: ktr},
		rss: func() (int64, error) {
			r, err := procRSS("self")
			return r - baseline, err
		}}
	targets := []*loadTarget{kt}
	ob, stopB, err := startOursLoad(ctx, bin, dir, "ours-badger-tls", true)
	if err != nil {
		return 1, err
	}
	defer stopB()
	targets = append(targets, ob)
	if lc.memdb {
		om, stopM, err := startOursLoad(ctx, bin, dir, "ours-mem-http", false)
		if err != nil {
			return 1, err
		}
		defer stopM()
		targets = append(targets, om)
	}
	only, err := regexp.Compile(lc.only)
	if err != nil {
		return 2, fmt.Errorf("-load-only: %w", err)
	}
	identities := 1
	for _, t := range targets[1:] {
		if t.watchHeaders, err = watchIdentities(ctx, t, lc.watchers); err != nil {
			return 1, err
		}
		identities = max(identities, len(t.watchHeaders))
	}
	l := &loadRun{lc: lc, targets: targets, nsCount: lc.objects / lc.listSize, log: progress}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	var rows []loadRow
	started := time.Now()

	// Populate, then memory.
	popRate := make([]float64, len(targets))
	mem := make([]float64, len(targets))
	for i, t := range targets {
		progress(fmt.Sprintf("%s: creating %d objects", t.name, lc.objects))
		r, err := l.populate(ctx, t)
		if err != nil {
			return 1, err
		}
		popRate[i] = r
	}
	time.Sleep(2 * time.Second)
	for i, t := range targets {
		r, err := t.rss()
		if err != nil {
			return 1, err
		}
		mem[i] = float64(r) / (1 << 20)
	}

	if lc.floor {
		ft, stopF, err := startFloor(ctx, ob, l, dir)
		if err != nil {
			return 1, fmt.Errorf("starting the floor: %w", err)
		}
		defer stopF()
		targets = append(targets, ft)
		names = append(names, ft.name)
		popRate = append(popRate, math.NaN())
		mem = append(mem, math.NaN())
	}

	// Throughput, alternating the servers (the order turns each round).
	wls := workloads()
	tp := make([][][]float64, len(wls))
	notes := make([]string, len(wls))
	for i := range tp {
		tp[i] = make([][]float64, len(targets))
	}
	order := func(round int) []int {
		idx := make([]int, len(targets))
		for i := range idx {
			idx[i] = (i + round) % len(targets)
		}
		return idx
	}
	for round := range lc.rounds {
		for wi, w := range wls {
			if !only.MatchString(fmt.Sprintf("%s c=%d", w.name, w.c)) {
				continue
			}
			for _, ti := range order(round) {
				t := targets[ti]
				if ctx.Err() != nil {
					return 1, ctx.Err()
				}
				if w.name == "CREATE" {
					if err := t.createProject(ctx, fmt.Sprintf("ldc-r%d-c%d", round, w.c)); err != nil {
						return 1, err
					}
				}
				rate, failed, ferr := throughput(ctx, w.c, lc.duration, w.op(l, t, round))
				tp[wi][ti] = append(tp[wi][ti], rate)
				if failed > 0 {
					notes[wi] += fmt.Sprintf("%s r%d: %d failed (%v); ", t.name, round, failed, ferr)
				}
				progress(fmt.Sprintf("round %d %s c=%d %s: %.0f/s", round+1, w.name, w.c, t.name, rate))
			}
		}
	}
	for wi, w := range wls {
		if !only.MatchString(fmt.Sprintf("%s c=%d", w.name, w.c)) {
			continue
		}
		r := loadRow{Name: fmt.Sprintf("%s c=%d", w.name, w.c), Unit: "req/s", Higher: true, Note: notes[wi]}
		if strings.HasPrefix(w.name, "LIST") {
			r.Unit = "lists/s"
		}
		for ti := range targets {
			r.Values = append(r.Values, median(tp[wi][ti]))
		}
		rows = append(rows, r)
	}

	// Watch.
	wres := make([][]watchResult, len(targets))
	runWatch := only.MatchString("watch")
	for round := range lc.rounds {
		if !runWatch {
			break
		}
		for _, ti := range order(round) {
			t := targets[ti]
			if t.throughputOnly {
				continue
			}
			progress(fmt.Sprintf("round %d watch %s: %d watchers, %d writers", round+1, t.name, lc.watchers, lc.writers))
			r, err := l.watchRound(ctx, t, round)
			if err != nil {
				return 1, err
			}
			progress(fmt.Sprintf("  %d writes (%.0f/s), lost %d, p50 %s p99 %s, refused %d %s", r.writes, r.writeRate, r.lost, r.p50, r.p99, r.refused, r.refusedNote))
			wres[ti] = append(wres[ti], r)
		}
	}
	wrow := func(name, unit string, f func(watchResult) float64, agg func([]float64) float64) loadRow {
		r := loadRow{Name: name, Unit: unit}
		for ti := range targets {
			var xs []float64
			for _, w := range wres[ti] {
				xs = append(xs, f(w))
			}
			r.Values = append(r.Values, agg(xs))
		}
		return r
	}
	maxOf := func(xs []float64) float64 {
		if len(xs) == 0 {
			return math.NaN()
		}
		return slices.Max(xs)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	wlabel := fmt.Sprintf("watch %dw/%dwr", lc.watchers, lc.writers)
	if runWatch {
		rows = append(rows,
			wrow(wlabel+" writes", "writes/s", func(w watchResult) float64 { return w.writeRate }, median),
			wrow(wlabel+" events lost (max)", "events", func(w watchResult) float64 { return float64(w.lost) }, maxOf),
			wrow(wlabel+" reordered (max)", "events", func(w watchResult) float64 { return float64(w.reordered) }, maxOf),
			wrow(wlabel+" streams ended (max)", "watches", func(w watchResult) float64 { return float64(w.ended) }, maxOf),
			wrow(wlabel+" refused (max)", "watches", func(w watchResult) float64 { return float64(w.refused) }, maxOf),
			wrow(wlabel+" write→event p50", "ms", func(w watchResult) float64 { return ms(w.p50) }, median),
			wrow(wlabel+" write→event p99", "ms", func(w watchResult) float64 { return ms(w.p99) }, median),
			wrow(wlabel+" write→event max", "ms", func(w watchResult) float64 { return ms(w.max) }, maxOf),
		)
		for ti, t := range targets {
			for _, w := range wres[ti] {
				if w.refusedNote != "" {
					rows[len(rows)-4].Note += t.name + ": " + w.refusedNote + "; "
					break
				}
			}
		}
	}
	rows = append(rows,
		loadRow{Name: fmt.Sprintf("populate %d objects c=16", lc.objects), Unit: "creates/s", Values: popRate, Higher: true},
		loadRow{Name: fmt.Sprintf("RSS after %d objects", lc.objects), Unit: "MiB", Values: mem},
	)

	fmt.Fprintf(stdout, "kubediff -load: %d rounds (medians; lost/reordered/ended/refused/max: worst round), %s per workload, ~1 KB VirtualClusterInstances, HTTP/1.1 keep-alive, loopback\n",
		lc.rounds, lc.duration)
	fmt.Fprintf(stdout, "kube: k8s.io/apiextensions-apiserver v0.37.2 on etcd, in this process, TLS, client certificate (system:masters), priority and fairness off\n")
	fmt.Fprintf(stdout, "ours-badger-tls: examples/server --data-dir (badger), TLS; ours-mem-http: in memory, plain HTTP; both with --max-requests-inflight %d --max-mutating-requests-inflight %d so that the one admin key (per-caller share: half) is not throttled; watches: server default (%d, half per caller, no flag)\n",
		loadMaxInflight, loadMaxMutatingInflight, 1000)
	if identities > 1 {
		fmt.Fprintf(stdout, "watch on ours: the watchers take turns among %d access keys (scoped to reading VirtualClusterInstances), since one caller may hold only half of the server's %d watches and no flag raises it; kube's use the one client certificate\n", identities, 1000)
	}
	if lc.floor {
		fmt.Fprintf(stdout, "floor-tls: a server that does no work, over TLS, answering each throughput request with ours-badger-tls's captured answer (POST and PUT echo the body); no watch, no memory\n")
	}
	fmt.Fprintf(stdout, "memory: ours = VmRSS of the server process; kube = VmRSS of this process (etcd + apiserver + the load generator) minus its VmRSS before etcd started (%.0f MiB)\n", float64(baseline)/(1<<20))
	fmt.Fprintf(stdout, "watch: each writer creates objects one after another for %s; write→event = from sending the create to reading its event; lost = events not read %s after the last write\n\n", lc.duration, lc.drain)
	if err := printLoadTable(stdout, names, rows); err != nil {
		return 1, err
	}
	progress(fmt.Sprintf("load done in %s", time.Since(started).Round(time.Second)))
	return 0, nil
}

// startFloor captures ob's answers to the throughput workloads' reads (one object,
// a namespace's list, its two pages of 500) into a directory under dir, starts this
// program as the floor's server on them (-load-floor-serve) and returns its target
// and the function that stops it.
func startFloor(ctx context.Context, ob *loadTarget, l *loadRun, dir string) (*loadTarget, func(), error) {
	fdir := filepath.Join(dir, "floor")
	if err := os.MkdirAll(fdir, 0o700); err != nil {
		return nil, nil, err
	}
	ns, name := l.populated(0)
	page1, err := ob.expect(ctx, http.MethodGet, vciPath(ns), "limit=500", "", http.StatusOK)
	if err != nil {
		return nil, nil, err
	}
	cont := fieldString(page1, "continue")
	if cont == "" {
		return nil, nil, fmt.Errorf("%s: a list with limit=500 of %s gave no continue token", ob.name, ns)
	}
	captured := map[string][]byte{floorPage1: page1}
	for file, q := range map[string][2]string{
		floorObject: {vciPath(ns) + "/" + name, ""},
		floorList:   {vciPath(ns), ""},
		floorPage2:  {vciPath(ns), "limit=500&continue=" + cont},
	} {
		b, err := ob.expect(ctx, http.MethodGet, q[0], q[1], "", http.StatusOK)
		if err != nil {
			return nil, nil, err
		}
		captured[file] = b
	}
	for file, b := range captured {
		if err := os.WriteFile(filepath.Join(fdir, file), b, 0o600); err != nil {
			return nil, nil, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, "-load-floor-serve", fdir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	urls := listeningURLs(stdout)
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		stop()
		return nil, nil, errors.New("the floor printed no URL in 30s")
	case <-ctx.Done():
		stop()
		return nil, nil, ctx.Err()
	}
	pemBytes, err := os.ReadFile(filepath.Join(fdir, floorCA))
	if err != nil {
		stop()
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		stop()
		return nil, nil, errors.New("no certificate in the floor's " + floorCA)
	}
	// The same client as ours-badger-tls's: HTTP/1.1 keep-alive over TLS.
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 256,
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &loadTarget{name: "floor-tls", base: url, client: &http.Client{Transport: tr},
		header: ob.header, throughputOnly: true}, stop, nil
}

// listeningURLs reads a server's stdout and sends the URL of its "listening on URL"
// line (the channel holds one; later ones are dropped).
func listeningURLs(stdout io.Reader) <-chan string {
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				select {
				case urls <- strings.TrimSpace(u):
				default:
				}
			}
		}
	}()
	return urls
}
