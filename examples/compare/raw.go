package main

import (
	"encoding/binary"
	"errors"
	"fmt"

	badgerdb "github.com/dgraph-io/badger/v4"
	gomemdb "github.com/hashicorp/go-memdb"
)

// The raw stores: go-memdb and badger used directly, the floor a store built on them
// can approach. They store the object's JSON (about 1 KB, built once) as an opaque
// value under "/<group>/<resource>/<namespace>/<name>": no encoding, no validation,
// no metadata. go-memdb also keeps the labels in a string-map index for the label
// lookup; a compare-and-swap reads the revision kept with the value and writes the
// next one.

const keyPrefix = "/management.service/virtualclusterinstances/" + benchNamespace + "/"

func rawKey(prefix string, i int) string { return keyPrefix + objName(prefix, i) }

// rawRow is a go-memdb row.
type rawRow struct {
	Key    string
	Rev    uint64
	Labels map[string]string
	Value  []byte
}

const rawTable = "objects"

func newRawMemdb() (*gomemdb.MemDB, error) {
	return gomemdb.NewMemDB(&gomemdb.DBSchema{Tables: map[string]*gomemdb.TableSchema{
		rawTable: {Name: rawTable, Indexes: map[string]*gomemdb.IndexSchema{
			"id":     {Name: "id", Unique: true, Indexer: &gomemdb.StringFieldIndex{Field: "Key"}},
			"labels": {Name: "labels", AllowMissing: true, Indexer: &gomemdb.StringMapFieldIndex{Field: "Labels"}},
		}},
	}})
}

// rawMemEnv holds the go-memdb databases: one for the single-object workloads, two
// seeded for the lists.
type rawMemEnv struct {
	write, small, large *gomemdb.MemDB
	value               []byte
}

func newRawMemEnv(cfg *config) (*rawMemEnv, error) {
	e := &rawMemEnv{value: rawValue(0)}
	var err error
	for _, db := range []**gomemdb.MemDB{&e.write, &e.small, &e.large} {
		if *db, err = newRawMemdb(); err != nil {
			return nil, err
		}
	}
	seed := func(db *gomemdb.MemDB, prefix string, n int) error {
		for i := 0; i < n; i++ {
			txn := db.Txn(true)
			if err := txn.Insert(rawTable, &rawRow{Key: rawKey(prefix, i), Rev: 1, Labels: benchLabels(i), Value: e.value}); err != nil {
				txn.Abort()
				return err
			}
			txn.Commit()
		}
		return nil
	}
	if err := seed(e.write, prefixGet, getSeed); err != nil {
		return nil, err
	}
	if err := seed(e.write, prefixUpdate, 1); err != nil {
		return nil, err
	}
	if err := seed(e.small, prefixList, cfg.small); err != nil {
		return nil, err
	}
	if err := seed(e.large, prefixList, cfg.large); err != nil {
		return nil, err
	}
	return e, nil
}

// rawMemInsert inserts one new row per transaction.
func rawMemInsert(e *rawMemEnv, row, col string) *bench {
	var rows []*rawRow
	next := 0
	return &bench{row: row, col: col, allocs: true,
		prepare: func(n int) {
			rows = rows[:0]
			for i := 0; i < n; i++ {
				rows = append(rows, &rawRow{Key: rawKey(prefixCreate, next), Rev: 1, Labels: benchLabels(next), Value: e.value})
				next++
			}
		},
		run: func(n int) error {
			for _, r := range rows {
				txn := e.write.Txn(true)
				if err := txn.Insert(rawTable, r); err != nil {
					txn.Abort()
					return err
				}
				txn.Commit()
			}
			return nil
		}}
}

var sink int

func rawMemGet(e *rawMemEnv, row, col string) *bench {
	keys := make([]string, getSeed)
	for i := range keys {
		keys[i] = rawKey(prefixGet, i)
	}
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			txn := e.write.Txn(false)
			raw, err := txn.First(rawTable, "id", keys[i%len(keys)])
			if err != nil {
				return err
			}
			if raw == nil {
				return errors.New("not found")
			}
			sink += len(raw.(*rawRow).Value)
		}
		return nil
	}}
}

// rawMemCAS reads the row, checks its revision and writes the next one, in one
// write transaction.
func rawMemCAS(e *rawMemEnv, row, col string) *bench {
	key := rawKey(prefixUpdate, 0)
	want := uint64(1)
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			txn := e.write.Txn(true)
			raw, err := txn.First(rawTable, "id", key)
			if err != nil || raw == nil {
				txn.Abort()
				return fmt.Errorf("read %s: %v", key, err)
			}
			old := raw.(*rawRow)
			if old.Rev != want {
				txn.Abort()
				return fmt.Errorf("revision %d, want %d", old.Rev, want)
			}
			nr := *old
			nr.Rev++
			if err := txn.Insert(rawTable, &nr); err != nil {
				txn.Abort()
				return err
			}
			txn.Commit()
			want = nr.Rev
		}
		return nil
	}}
}

// rawMemPrefix collects the values of every row under the prefix.
func rawMemPrefix(db *gomemdb.MemDB, row, col string, want int) *bench {
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			it, err := db.Txn(false).Get(rawTable, "id_prefix", keyPrefix)
			if err != nil {
				return err
			}
			var out [][]byte
			for raw := it.Next(); raw != nil; raw = it.Next() {
				out = append(out, raw.(*rawRow).Value)
			}
			if len(out) != want {
				return fmt.Errorf("listed %d, want %d", len(out), want)
			}
		}
		return nil
	}}
}

// rawMemLabel collects the values of the rows with the selector label, from the
// label index (scan false) or by checking every row under the prefix (scan true).
func rawMemLabel(db *gomemdb.MemDB, row, col string, want int, scan bool) *bench {
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			var it gomemdb.ResultIterator
			var err error
			if scan {
				it, err = db.Txn(false).Get(rawTable, "id_prefix", keyPrefix)
			} else {
				it, err = db.Txn(false).Get(rawTable, "labels", selectorKey, selectorValue)
			}
			if err != nil {
				return err
			}
			var out [][]byte
			for raw := it.Next(); raw != nil; raw = it.Next() {
				r := raw.(*rawRow)
				if r.Labels[selectorKey] == selectorValue {
					out = append(out, r.Value)
				}
			}
			if len(out) != want {
				return fmt.Errorf("listed %d, want %d", len(out), want)
			}
		}
		return nil
	}}
}

// rawBadgerEnv holds badger databases with synced writes and without.
type rawBadgerEnv struct {
	sync, noSync *badgerdb.DB
	value        []byte
}

func (e *rawBadgerEnv) close() {
	for _, db := range []*badgerdb.DB{e.sync, e.noSync} {
		if db != nil {
			_ = db.Close()
		}
	}
}

// withRev is the stored value: an 8-byte revision, then the object.
func withRev(rev uint64, value []byte) []byte {
	b := make([]byte, 8+len(value))
	binary.BigEndian.PutUint64(b, rev)
	copy(b[8:], value)
	return b
}

func newRawBadgerEnv(cfg *config) (*rawBadgerEnv, error) {
	e := &rawBadgerEnv{value: rawValue(0)}
	open := func(sync bool) (*badgerdb.DB, error) {
		dir, err := cfg.tempDir("raw-badger")
		if err != nil {
			return nil, err
		}
		// badger's defaults, its logger off, and syncs as asked.
		db, err := badgerdb.Open(badgerdb.DefaultOptions(dir).WithSyncWrites(sync).WithLogger(nil))
		if err != nil {
			return nil, err
		}
		for i := 0; i < getSeed; i++ {
			if err := db.Update(func(txn *badgerdb.Txn) error {
				return txn.Set([]byte(rawKey(prefixGet, i)), withRev(1, e.value))
			}); err != nil {
				return nil, err
			}
		}
		return db, db.Update(func(txn *badgerdb.Txn) error {
			return txn.Set([]byte(rawKey(prefixUpdate, 0)), withRev(1, e.value))
		})
	}
	var err error
	if e.sync, err = open(true); err != nil {
		e.close()
		return nil, err
	}
	if e.noSync, err = open(false); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// rawBadgerSet writes a new key per transaction.
func rawBadgerSet(db *badgerdb.DB, value []byte, row, col string) *bench {
	var keys [][]byte
	next := 0
	return &bench{row: row, col: col, allocs: true,
		prepare: func(n int) {
			keys = keys[:0]
			for i := 0; i < n; i++ {
				keys = append(keys, []byte(rawKey(prefixCreate, next)))
				next++
			}
		},
		run: func(n int) error {
			for _, k := range keys {
				if err := db.Update(func(txn *badgerdb.Txn) error { return txn.Set(k, withRev(1, value)) }); err != nil {
					return err
				}
			}
			return nil
		}}
}

// rawBadgerGet reads a value (a copy, as ours returns).
func rawBadgerGet(db *badgerdb.DB, row, col string) *bench {
	keys := make([][]byte, getSeed)
	for i := range keys {
		keys[i] = []byte(rawKey(prefixGet, i))
	}
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			if err := db.View(func(txn *badgerdb.Txn) error {
				item, err := txn.Get(keys[i%len(keys)])
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				sink += len(v)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}}
}

// rawBadgerCAS reads the revision, checks it and writes the next one, in one
// transaction.
func rawBadgerCAS(db *badgerdb.DB, value []byte, row, col string) *bench {
	key := []byte(rawKey(prefixUpdate, 0))
	want := uint64(1)
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			if err := db.Update(func(txn *badgerdb.Txn) error {
				item, err := txn.Get(key)
				if err != nil {
					return err
				}
				var rev uint64
				if err := item.Value(func(v []byte) error { rev = binary.BigEndian.Uint64(v); return nil }); err != nil {
					return err
				}
				if rev != want {
					return fmt.Errorf("revision %d, want %d", rev, want)
				}
				return txn.Set(key, withRev(rev+1, value))
			}); err != nil {
				return err
			}
			want++
		}
		return nil
	}}
}

// rawBadgerWriters writes new keys from writers goroutines, one per transaction.
func rawBadgerWriters(db *badgerdb.DB, value []byte, row, col string, writers int) *bench {
	var keys [][]byte
	next := 0
	return &bench{row: row, col: col,
		prepare: func(n int) {
			keys = keys[:0]
			for i := 0; i < n; i++ {
				keys = append(keys, []byte(rawKey("w-", next)))
				next++
			}
		},
		run: func(n int) error {
			return concurrent(writers, n, func(i int) error {
				return db.Update(func(txn *badgerdb.Txn) error { return txn.Set(keys[i], withRev(1, value)) })
			})
		}}
}
