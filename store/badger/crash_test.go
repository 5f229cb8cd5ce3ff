package badger_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// The child process of TestKill9Writes is this test binary, run with these
// variables set.
const (
	envCrashDir    = "MGMT_CRASH_CHILD_DIR"
	envCrashNoSync = "MGMT_CRASH_CHILD_NOSYNC"
	envCrashRound  = "MGMT_CRASH_CHILD_ROUND"
	crashWriters   = 4
)

// envInt returns the integer in the environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%q", name, v)
	return n
}

// TestKill9Child is the child of TestKill9Writes: it opens the backend in
// $MGMT_CRASH_CHILD_DIR, prints READY, and writes through the store from several
// goroutines until it is killed, printing one line per acknowledged write:
//
//	ACK <name> <resourceVersion> <uid> [<counter>]
//
// Half the writes are plain creates; the other half are store transactions that
// create an object and bump the writer's counter object, which must always equal
// the number of such objects of the writer.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("the child process of TestKill9Writes")
	}
	fail := func(err error) {
		fmt.Printf("ERR %v\n", err)
		os.Exit(2)
	}
	b, err := badger.Open(dir, badger.Options{NoSync: os.Getenv(envCrashNoSync) == "1"})
	if err != nil {
		fail(err)
	}
	s, err := store.New(b, store.Options{})
	if err != nil {
		fail(err)
	}
	round := os.Getenv(envCrashRound)
	ctx := context.Background()
	var out sync.Mutex // one write(2) per line, lines never interleave
	ack := func(format string, args ...any) {
		out.Lock()
		_, _ = os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
		out.Unlock()
	}
	for g := range crashWriters {
		err := s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("counter-w%d", g)}}, store.CreateOptions{})
		if err != nil && !errors.Is(err, resource.ErrAlreadyExists) {
			fail(err)
		}
	}
	ack("READY")
	for g := range crashWriters {
		go func() {
			for i := 0; ; i++ {
				if i%2 == 0 {
					p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("plain-r%s-w%d-%06d", round, g, i)}}
					if err := s.Create(ctx, p, store.CreateOptions{}); err != nil {
						fail(err)
					}
					ack("ACK %s %s %s", p.Name, p.ResourceVersion, p.UID)
					continue
				}
				p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("t-r%s-w%d-%06d", round, g, i)}}
				var n int
				err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
					c := &resource.Project{}
					if err := tx.Get("", fmt.Sprintf("counter-w%d", g), c); err != nil {
						return err
					}
					n, _ = strconv.Atoi(c.Spec.Description)
					n++
					c.Spec.Description = strconv.Itoa(n)
					if err := tx.Create(p, store.CreateOptions{}); err != nil {
						return err
					}
					return tx.Update(c, store.UpdateOptions{})
				})
				if err != nil {
					fail(err)
				}
				ack("ACK %s %s %s %d", p.Name, p.ResourceVersion, p.UID, n)
			}
		}()
	}
	select {} // until killed
}

// crashAck is one acknowledged write the child reported.
type crashAck struct {
	rv      int64
	uid     string
	counter int // for a transaction: the writer's counter after it, else 0
}

// crashRound runs the child on dir, kills it with SIGKILL at a random moment 200 to
// 800 ms after it is ready, and returns the writes it acknowledged.
func crashRound(t *testing.T, dir string, noSync bool, round int, rng *rand.Rand) map[string]crashAck {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
	noSyncEnv := "0"
	if noSync {
		noSyncEnv = "1"
	}
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashNoSync+"="+noSyncEnv, envCrashRound+"="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()

	acks := map[string]crashAck{}
	ready := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() {
		r := bufio.NewReader(stdout)
		readySeen := false
		for {
			line, err := r.ReadString('\n')
			if err != nil { // a last line without its newline was cut by the kill
				readerDone <- nil
				return
			}
			f := strings.Fields(line)
			switch {
			case len(f) == 1 && f[0] == "READY" && !readySeen:
				readySeen = true
				close(ready)
			case len(f) >= 4 && f[0] == "ACK":
				a := crashAck{uid: f[3]}
				a.rv, err = strconv.ParseInt(f[2], 10, 64)
				if err == nil && len(f) == 5 {
					a.counter, err = strconv.Atoi(f[4])
				}
				if err != nil {
					readerDone <- fmt.Errorf("bad line %q: %w", line, err)
					return
				}
				acks[f[1]] = a
			default:
				readerDone <- fmt.Errorf("child said %q", line)
				return
			}
		}
	}()
	select {
	case <-ready:
	case err := <-readerDone:
		require.FailNow(t, "the child ended before it was ready", "%v\nstderr: %s", err, stderr.String())
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "the child is not ready", "stderr: %s", stderr.String())
	}
	time.Sleep(time.Duration(200+rng.IntN(601)) * time.Millisecond)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL
	_ = cmd.Wait()
	require.NoError(t, <-readerDone, "stderr: %s", stderr.String())
	return acks
}

// TestKill9Writes is REL-CRASH-KILL9-WRITES: rounds of a child process writing
// through the store on badger, killed with SIGKILL at a random moment, each followed
// by a reopen in this process that checks every acknowledged object is there with its
// uid and resourceVersion, every writer's counter equals its number of transaction
// objects, and the revision never went back. The same directory serves every round.
// With synced writes no acknowledged write may be lost; without, losses are reported
// (a kill -9 does not lose the page cache, so they are not expected either) but only
// atomicity violations and regressions of the revision fail the test.
// MGMT_CRASH_ROUNDS sets the rounds per mode (15 by default).
func TestKill9Writes(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		t.Skip("in the child")
	}
	rounds := envInt(t, "MGMT_CRASH_ROUNDS", 15)
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"sync", false}, {"nosync", true}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
			acked := map[string]crashAck{}
			var ackCount, lost, atomicity, regressions, uidReuse int
			var lastRecovered, maxAcked int64
			var reopen []time.Duration
			for round := range rounds {
				roundStart := time.Now()
				for name, a := range crashRound(t, dir, mode.noSync, round, rng) {
					acked[name] = a
					maxAcked = max(maxAcked, a.rv)
					ackCount++
				}

				start := time.Now()
				b, err := badger.Open(dir, badger.Options{NoSync: mode.noSync})
				require.NoError(t, err, "round %d: reopen after kill -9", round)
				reopen = append(reopen, time.Since(start))
				s, err := store.New(b, store.Options{})
				require.NoError(t, err)

				list := &resource.ProjectList{}
				require.NoError(t, s.List(t.Context(), list, store.ListOptions{}))
				found := map[string]*resource.Project{}
				uids := map[string]string{}
				txnObjects := make([]int, crashWriters)
				counters := make([]int, crashWriters)
				for i := range list.Items {
					p := &list.Items[i]
					found[p.Name] = p
					if other, dup := uids[p.UID]; dup {
						uidReuse++
						assert.Failf(t, "uid reused", "round %d: %s and %s share uid %s", round, p.Name, other, p.UID)
					}
					uids[p.UID] = p.Name
					var g, r, i int
					if _, err := fmt.Sscanf(p.Name, "t-r%d-w%d-%d", &r, &g, &i); err == nil {
						txnObjects[g]++
					}
					if _, err := fmt.Sscanf(p.Name, "counter-w%d", &g); err == nil && strings.HasPrefix(p.Name, "counter-") {
						counters[g], _ = strconv.Atoi(p.Spec.Description)
					}
				}
				for name, a := range acked {
					p := found[name]
					switch {
					case p == nil:
						lost++
						t.Logf("round %d: acknowledged %s (rv %d) is missing", round, name, a.rv)
					case p.UID != a.uid || p.ResourceVersion != strconv.FormatInt(a.rv, 10):
						lost++
						assert.Failf(t, "acknowledged write changed", "round %d: %s has uid %s rv %s, acknowledged uid %s rv %d", round, name, p.UID, p.ResourceVersion, a.uid, a.rv)
					}
				}
				for g := range crashWriters {
					if !assert.Equal(t, counters[g], txnObjects[g], "round %d: writer %d: its transaction objects must number what its counter says", round, g) {
						atomicity++
					}
				}
				rev, err := b.Revision(t.Context())
				require.NoError(t, err)
				if rev < lastRecovered || (!mode.noSync && rev < maxAcked) {
					regressions++
					assert.Failf(t, "revision went back", "round %d: reopened at revision %d; before: recovered %d, acknowledged %d", round, rev, lastRecovered, maxAcked)
				}
				probe := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("probe-%03d", round)}}
				require.NoError(t, s.Create(t.Context(), probe, store.CreateOptions{}))
				if !assert.Equal(t, strconv.FormatInt(rev+1, 10), probe.ResourceVersion, "round %d: the first write after the reopen at %d", round, rev) {
					regressions++
				}
				lastRecovered = rev + 1
				acked[probe.Name] = crashAck{rv: rev + 1, uid: probe.UID}
				require.NoError(t, s.Close())
				require.NoError(t, b.Close())
				t.Logf("round %d: %d objects, revision %d, reopen %s, round %s", round, len(list.Items), rev,
					reopen[len(reopen)-1].Round(time.Millisecond), time.Since(roundStart).Round(time.Millisecond))
			}
			slices.Sort(reopen)
			p50, p99 := reopen[len(reopen)/2], reopen[min(len(reopen)-1, len(reopen)*99/100)]
			t.Logf("RESULT name=REL-CRASH-KILL9-WRITES mode=%s rounds=%d acked=%d lost_acked=%d atomicity_violations=%d revision_regressions=%d uid_reuse=%d reopen_p50=%s reopen_p99=%s final_revision=%d",
				mode.name, rounds, ackCount, lost, atomicity, regressions, uidReuse,
				p50.Round(time.Millisecond), p99.Round(time.Millisecond), lastRecovered)
			if !mode.noSync {
				assert.Zero(t, lost, "synced writes: no acknowledged write may be lost")
			}
			assert.Zero(t, atomicity)
			assert.Zero(t, regressions)
			assert.Positive(t, ackCount, "the child acknowledged writes")
		})
	}
}
