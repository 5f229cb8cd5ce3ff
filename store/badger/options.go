package badger

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	dgbadger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Defaults of [Options].
const (
	// DefaultHistoryRevisions is how many revisions the background compaction keeps
	// when [Options].HistoryRevisions is zero.
	DefaultHistoryRevisions = 10000
	// DefaultCompactionInterval is how often the background compaction runs when
	// [Options].CompactionInterval is zero.
	DefaultCompactionInterval = 30 * time.Second
	// DefaultValueLogGCInterval is how often the value-log garbage collection runs
	// when [Options].ValueLogGCInterval is zero.
	DefaultValueLogGCInterval = 10 * time.Minute
	// DefaultValueLogGCDiscardRatio is the share of a value-log file that must be
	// garbage before the collection rewrites it, when [Options].ValueLogGCDiscardRatio
	// is zero.
	DefaultValueLogGCDiscardRatio = 0.5
	// DefaultMemTableSize is the size of badger's memtable when
	// [Options].MemTableSize is zero: 64 MiB, badger's own default.
	DefaultMemTableSize = 64 << 20
	// DefaultBlockCacheSize is the size of badger's block cache when
	// [Options].BlockCacheSize is zero: 256 MiB, badger's own default.
	DefaultBlockCacheSize = 256 << 20
	// DefaultWatchBuffer is the capacity of a watcher's channel when
	// [Options].WatchBuffer is zero.
	DefaultWatchBuffer = 64
)

// Options configure a [Backend]. The zero value gives the defaults: synced writes
// on disk, the last 10,000 revisions kept, background compaction every 30 seconds
// and value-log garbage collection every 10 minutes, badger silent.
type Options struct {
	// NoSync turns off the sync to disk of each commit. By default (false) a
	// transaction returns only once its batch is on stable storage: an acknowledged
	// write survives a crash of the process, of the kernel and a power loss. With
	// NoSync, writes reach the operating system's page cache (badger writes through
	// memory maps) and are synced later by the OS: they survive a crash of the process
	// (kill -9 included) but the last acknowledged writes may be lost on a kernel
	// crash or power loss. What survives is always a prefix of the acknowledged
	// history, never a torn transaction. A synced commit costs one fsync, shared by
	// every transaction of the batch (see the package documentation); NoSync makes a
	// lone writer many times faster and concurrent writers somewhat faster.
	NoSync bool
	// InMemory keeps everything in memory (badger's in-memory mode) and writes no
	// file; the directory given to [Open] must be "". For tests. Values larger than
	// 1 MiB (or 15% of MemTableSize, when that is smaller) are refused in this mode.
	InMemory bool
	// HistoryRevisions is how many of the latest revisions the background compaction
	// keeps readable, the current one included: older ones are compacted (reads and
	// watches below them fail with [backend.ErrCompacted]). Zero means
	// [DefaultHistoryRevisions]; a negative value keeps every revision until
	// [Backend.Compact] is called.
	HistoryRevisions int64
	// CompactionInterval is how often the background compaction runs. It also runs
	// early when twice HistoryRevisions revisions have piled up. Each run deletes the
	// history in bounded steps (a few hundred revisions per badger transaction).
	// Zero means [DefaultCompactionInterval]; a negative value turns the background
	// compaction off ([Backend.Compact] still works).
	CompactionInterval time.Duration
	// ValueLogGCInterval is how often badger's value-log garbage collection runs in
	// the background. Each run rewrites at most a few value-log files. Zero means
	// [DefaultValueLogGCInterval]; a negative value turns it off
	// ([Backend.RunValueLogGC] still works).
	ValueLogGCInterval time.Duration
	// ValueLogGCDiscardRatio is the share (0 to 1) of a value-log file that must be
	// garbage before the background collection rewrites it. Zero means
	// [DefaultValueLogGCDiscardRatio].
	ValueLogGCDiscardRatio float64
	// MemTableSize is the size in bytes of badger's memtable, allocated when the
	// backend opens: it sets the memory use and the largest transaction (about 15% of
	// it; larger ones fail). Zero means [DefaultMemTableSize].
	MemTableSize int64
	// BlockCacheSize is the size in bytes of badger's cache of table blocks. Zero
	// means [DefaultBlockCacheSize].
	BlockCacheSize int64
	// WatchBuffer is the capacity of each watcher's event channel. It never blocks
	// writers, who do not wait for watchers. Zero means [DefaultWatchBuffer].
	WatchBuffer int
	// Logger receives the backend's background errors and badger's own messages:
	// badger's errors and warnings at their level, its informational and debug
	// messages at debug level. Nil discards them.
	Logger *slog.Logger
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.HistoryRevisions == 0 {
		o.HistoryRevisions = DefaultHistoryRevisions
	}
	if o.CompactionInterval == 0 {
		o.CompactionInterval = DefaultCompactionInterval
	}
	if o.ValueLogGCInterval == 0 {
		o.ValueLogGCInterval = DefaultValueLogGCInterval
	}
	if o.ValueLogGCDiscardRatio <= 0 || o.ValueLogGCDiscardRatio >= 1 {
		o.ValueLogGCDiscardRatio = DefaultValueLogGCDiscardRatio
	}
	if o.MemTableSize <= 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.BlockCacheSize <= 0 {
		o.BlockCacheSize = DefaultBlockCacheSize
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	return o
}

// The tables badger writes are compressed with zstd at its fastest level, in blocks
// of 16 KiB (badger's defaults: snappy, 4 KiB). Objects of one kind share most of
// their bytes (field names, managed fields, labels), and a 16 KiB block holds several
// of them, so zstd finds what they share: ~1 KB objects then take about a third of
// the disk they take with badger's defaults, and a table's in-memory index a quarter
// of the entries. The cost is a read that misses badger's block cache: it
// decompresses a whole block, ~10 µs for 16 KiB on one core. Tables record their own
// compression, so a directory written with other settings opens and reads as before;
// its tables are rewritten with these as badger compacts them.
var tableCompression = options.ZSTD // a variable for the tests of mixed tables

// tableBlockSize is the size of the blocks of badger's tables (see tableCompression).
const tableBlockSize = 16 << 10

// badgerOptions returns the options badger is opened with.
func (o Options) badgerOptions(dir string, log *slog.Logger) dgbadger.Options {
	bo := dgbadger.DefaultOptions(dir)
	if o.InMemory {
		bo = dgbadger.DefaultOptions("").WithInMemory(true)
	}
	bo = bo.
		WithSyncWrites(!o.NoSync && !o.InMemory).
		// The committer is the only writer of the data: badger's conflict detection
		// would only cost memory.
		WithDetectConflicts(false).
		WithNumVersionsToKeep(1).
		WithCompression(tableCompression).
		WithBlockSize(tableBlockSize).
		WithMemTableSize(o.MemTableSize).
		// Values up to 1 MiB live in the tables (badger's default), but never more
		// than badger's largest batch, which a small memtable lowers.
		WithValueThreshold(min(1<<20, 15*o.MemTableSize/100)).
		WithBlockCacheSize(o.BlockCacheSize).
		WithLogger(nil)
	if log != nil {
		bo = bo.WithLogger(slogAdapter{log})
	}
	return bo
}

// slogAdapter passes badger's messages to a slog.Logger.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) logf(level slog.Level, format string, args ...any) {
	ctx := context.Background()
	if !a.l.Enabled(ctx, level) {
		return // badger logs on every write at debug level: do not format in vain
	}
	a.l.Log(ctx, level, strings.TrimSpace(fmt.Sprintf(format, args...)), "component", "badger")
}

func (a slogAdapter) Errorf(format string, args ...any) { a.logf(slog.LevelError, format, args...) }
func (a slogAdapter) Warningf(format string, args ...any) {
	a.logf(slog.LevelWarn, format, args...)
}
func (a slogAdapter) Infof(format string, args ...any)  { a.logf(slog.LevelDebug, format, args...) }
func (a slogAdapter) Debugf(format string, args ...any) { a.logf(slog.LevelDebug, format, args...) }

// discardLogger is the logger of a backend given none.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
