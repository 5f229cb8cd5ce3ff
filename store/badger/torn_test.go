package badger_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
)

// Linux lseek whences: the next data and the next hole at or after an offset.
const (
	seekData = 3
	seekHole = 4
)

// copyDirSparse copies the regular files of src into a new directory, keeping holes
// as holes: badger preallocates its log files (a 2 GiB value log, a memtable log of
// twice the memtable size) and writes little of them.
func copyDirSparse(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		require.NoError(t, copyFileSparse(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())))
	}
	return dst
}

func copyFileSparse(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode())
	if err != nil {
		return err
	}
	defer out.Close()
	for off := int64(0); off < fi.Size(); {
		data, err := in.Seek(off, seekData)
		if err != nil {
			break // ENXIO: only a hole is left
		}
		hole, err := in.Seek(data, seekHole)
		if err != nil {
			return err
		}
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, in, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(fi.Size())
}

// newestFile returns the file of dir with the given extension and the largest name
// (badger numbers its files in the order it creates them).
func newestFile(t *testing.T, dir, ext string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names, "no %s file in %s", ext, dir)
	slices.Sort(names)
	return filepath.Join(dir, names[len(names)-1])
}

// dataEnd returns the offset after the last non-zero byte of a preallocated log.
func dataEnd(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	var lastStart, lastEnd int64
	for off := int64(0); off < fi.Size(); {
		data, err := f.Seek(off, seekData)
		if err != nil {
			break
		}
		hole, err := f.Seek(data, seekHole)
		require.NoError(t, err)
		lastStart, lastEnd, off = data, hole, hole
	}
	buf := make([]byte, lastEnd-lastStart)
	_, err = f.ReadAt(buf, lastStart)
	require.NoError(t, err)
	for i := len(buf) - 1; i >= 0; i-- {
		if buf[i] != 0 {
			return lastStart + int64(i) + 1
		}
	}
	return lastStart
}

// openedAt opens dir and, when it opens, checks that its state is the recorded
// state of the revision it opened at (a prefix of the acknowledged history), and
// that a new write persists across a reopen. It returns that revision, or the error
// of Open.
func openedAt(t *testing.T, dir string, h *history) (int64, error) {
	t.Helper()
	b, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return 0, err
	}
	rev, err := b.Revision(t.Context())
	require.NoError(t, err)
	require.Less(t, rev, int64(len(h.states)), "opened past the acknowledged history")
	res, err := b.Range(t.Context(), backend.RangeOptions{})
	require.NoError(t, err)
	got := []string{}
	for _, kv := range res.KVs {
		got = append(got, kvString(kv))
	}
	require.Equal(t, stateStrings(h.states[rev]), got, "the state at revision %d is that of the acknowledged history", rev)
	if rev > 1 {
		res, err = b.Range(t.Context(), backend.RangeOptions{Revision: rev - 1})
		require.NoError(t, err)
		got = got[:0]
		for _, kv := range res.KVs {
			got = append(got, kvString(kv))
		}
		require.Equal(t, stateStrings(h.states[rev-1]), got, "and so is its history")
	}
	next := put(t, b, "after", "torn")
	require.Equal(t, rev+1, next)
	require.NoError(t, b.Close())
	b, err = badger.Open(dir, badger.Options{})
	require.NoError(t, err, "reopen after a write on the recovered state")
	kv, err := b.Get(t.Context(), "after", 0)
	require.NoError(t, err, "the write after the recovery persists")
	require.Equal(t, next, kv.ModRevision)
	require.NoError(t, b.Close())
	return rev, nil
}

// TestOpen_TornTail is REL-CRASH-TORN-LOG. Part one takes a crash image of an open
// backend (its files as a kill -9 would leave them) and cuts 1 to 64 bytes off the
// end of the data of its newest memtable log, where the last commits are. Part two
// closes a backend cleanly and cuts bytes off its newest table, MANIFEST and value
// log. Every open must either come up at a prefix of the acknowledged history that
// is not older than the revision recorded as durable, and take new writes, or fail
// with ErrDataLoss or ErrCorrupt: nothing acknowledged and recorded as synced may be
// silently lost.
func TestOpen_TornTail(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sparse copy of badger's preallocated files uses Linux's SEEK_DATA")
	}
	const writes = 300
	var h history
	dir := t.TempDir()
	b, err := badger.Open(dir, badger.Options{CompactionInterval: -1})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 12))
	writeRandom(t, b, &h, rng, writes/2)
	require.NoError(t, badger.WriteMark(b))
	mark := int64(len(h.states) - 1)
	writeRandom(t, b, &h, rng, writes/2)
	last := int64(len(h.states) - 1)
	image := copyDirSparse(t, dir) // as a kill -9 leaves it: the memtable log holds every commit
	require.NoError(t, badger.WriteMark(b))
	imageMarked := copyDirSparse(t, dir) // the same, with every revision recorded as durable

	// Part one: the newest memtable log loses its last 1..64 bytes.
	var opened, lostMax, dataLoss, marked int
	var lostTotal int64
	for n := int64(1); n <= 64; n++ {
		d := copyDirSparse(t, image)
		wal := newestFile(t, d, ".mem")
		require.NoError(t, os.Truncate(wal, dataEnd(t, wal)-n))
		rev, err := openedAt(t, d, &h)
		require.NoError(t, err, "cut %d bytes: a torn memtable log opens", n)
		require.GreaterOrEqual(t, rev, mark, "cut %d bytes: nothing older than the durable mark is lost", n)
		opened++
		lostTotal += last - rev
		lostMax = max(lostMax, int(last-rev))

		if n%8 != 1 {
			continue
		}
		d = copyDirSparse(t, imageMarked)
		wal = newestFile(t, d, ".mem")
		require.NoError(t, os.Truncate(wal, dataEnd(t, wal)-n))
		rev, err = openedAt(t, d, &h)
		marked++
		if err != nil {
			require.ErrorIs(t, err, badger.ErrDataLoss, "cut %d bytes, all marked durable", n)
			dataLoss++
		} else {
			require.Equal(t, last, rev, "cut %d bytes: an open with every revision marked durable loses none", n)
		}
	}
	t.Logf("memtable log cut by 1..64 bytes: %d/64 opened at a prefix, %d acknowledged revisions lost at most (%.1f on average, the last commit); "+
		"with the cut revisions marked durable, %d/%d refused with ErrDataLoss", opened, lostMax, float64(lostTotal)/64, dataLoss, marked)

	// Part two: a cleanly closed directory loses the end of its newest table,
	// MANIFEST or value log.
	require.NoError(t, b.Close())
	closed := copyDirSparse(t, dir)
	outcomes := map[string]map[string]int{}
	for _, target := range []string{".sst", "MANIFEST", ".vlog"} {
		outcomes[target] = map[string]int{}
		for _, n := range []int64{1, 2, 3, 7, 16, 33, 64} {
			d := copyDirSparse(t, closed)
			f := newestFile(t, d, target)
			fi, err := os.Stat(f)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(f, max(0, fi.Size()-n)))
			rev, err := openedAt(t, d, &h)
			switch {
			case err == nil:
				require.Equal(t, last, rev, "%s cut by %d bytes opened, so it lost nothing", target, n)
				outcomes[target]["opened with every revision"]++
			case errors.Is(err, badger.ErrCorrupt):
				outcomes[target]["ErrCorrupt"]++
			case errors.Is(err, badger.ErrDataLoss):
				outcomes[target]["ErrDataLoss"]++
			default:
				assert.Contains(t, err.Error(), d, "%s cut by %d bytes: the error names the directory", target, n)
				t.Logf("%s cut by %d bytes: %v", target, n, err)
				outcomes[target]["badger's error"]++
			}
		}
	}
	t.Logf("cleanly closed directory, file cut by 1..64 bytes: %v", outcomes)
	t.Logf("RESULT name=REL-CRASH-TORN-LOG wal_cuts=64 wal_opened_prefix=%d wal_lost_revisions_max=%d wal_marked_refused=%d/%d sst=%v manifest=%v vlog=%v silent_losses=0",
		opened, lostMax, dataLoss, marked, fmtOutcomes(outcomes[".sst"]), fmtOutcomes(outcomes["MANIFEST"]), fmtOutcomes(outcomes[".vlog"]))
}

func fmtOutcomes(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s:%d", strings.ReplaceAll(k, " ", "_"), v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
