package memdb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// benchKeys writes n keys "k/00000".. with 200-byte values in one transaction each.
func benchKeys(b *testing.B, be *memdb.Backend, n int) []string {
	b.Helper()
	keys := make([]string, n)
	value := make([]byte, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("k/%05d", i)
		if _, err := be.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: keys[i], Value: value}}}); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// BenchmarkTxnPut measures a compare-and-swap write of one 200-byte value over 1,000
// keys, with the default history of 10,000 revisions.
func BenchmarkTxnPut(b *testing.B) {
	be := memdb.New(memdb.Options{})
	defer be.Close()
	keys := benchKeys(b, be, 1000)
	ctx := context.Background()
	value := make([]byte, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := keys[i%len(keys)]
		kv, err := be.Get(ctx, k, 0)
		if err != nil {
			b.Fatal(err)
		}
		res, err := be.Txn(ctx, backend.Txn{
			Compares: []backend.Compare{{Key: k, ModRevision: kv.ModRevision}},
			Ops:      []backend.Op{{Key: k, Value: value}},
		})
		if err != nil || !res.Succeeded {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkGet measures a read of one key of 1,000 at the current revision.
func BenchmarkGet(b *testing.B) {
	be := memdb.New(memdb.Options{})
	defer be.Close()
	keys := benchKeys(b, be, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := be.Get(ctx, keys[i%len(keys)], 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRange1k measures a Range of a prefix holding 1,000 keys, out of 2,000.
func BenchmarkRange1k(b *testing.B) {
	be := memdb.New(memdb.Options{})
	defer be.Close()
	benchKeys(b, be, 1000)
	value := make([]byte, 200)
	for i := range 1000 {
		if _, err := be.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("z/%05d", i), Value: value}}}); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := be.Range(ctx, backend.RangeOptions{Prefix: "k/"})
		if err != nil || len(res.KVs) != 1000 {
			b.Fatal(err, len(res.KVs))
		}
	}
}

// BenchmarkWatchFanout100 measures one write delivered to 100 watchers of every key:
// the time per op runs from the write to the moment all 100 have received it.
func BenchmarkWatchFanout100(b *testing.B) {
	const watchers = 100
	be := memdb.New(memdb.Options{})
	defer be.Close()
	ctx := context.Background()
	ws := make([]backend.Watcher, watchers)
	for i := range ws {
		w, err := be.Watch(ctx, backend.WatchOptions{Prefix: "k/"})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	value := make([]byte, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := be.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("k/%d", i%1000), Value: value}}})
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range ws {
			if ev := <-w.Events(); ev.Revision != res.Revision {
				b.Fatalf("watcher got revision %d, want %d", ev.Revision, res.Revision)
			}
		}
	}
}
