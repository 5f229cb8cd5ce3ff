package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

// BenchKeys writes n keys "k/00000".. with 200-byte values into be, one transaction
// each, and returns them.
func BenchKeys(b *testing.B, be backend.Backend, n int) []string {
	b.Helper()
	keys := make([]string, n)
	value := make([]byte, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("k/%05d", i)
		_, err := be.Txn(context.Background(), backend.Txn{Ops: []backend.Op{{Key: keys[i], Value: value}}})
		require.NoError(b, err)
	}
	return keys
}

// RunBackendBenchmarks runs the backend benchmarks, the same on every backend, as
// sub-benchmarks of b, each on a fresh backend from newBackend (which closes it when
// b ends):
//
//   - TxnPut: a read and a compare-and-swap write of one 200-byte value over 1,000 keys;
//   - Get: a read of one key of 1,000 at the current revision;
//   - GetAtRevision: the same read at a past revision;
//   - Range1k: a Range of a prefix holding 1,000 keys out of 2,000;
//   - WatchFanout100: one write delivered to 100 watchers of every key, from the write
//     until all 100 have it.
//
// In the timed loops a check calls require only once it has failed: require's
// b.Helper costs about as much as a read of memdb.
func RunBackendBenchmarks(b *testing.B, newBackend func(b *testing.B) backend.Backend) {
	ctx := context.Background()
	value := make([]byte, 200)
	b.Run("TxnPut", func(b *testing.B) {
		be := newBackend(b)
		keys := BenchKeys(b, be, 1000)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := keys[i%len(keys)]
			kv, err := be.Get(ctx, k, 0)
			if err != nil {
				require.NoError(b, err)
			}
			res, err := be.Txn(ctx, backend.Txn{
				Compares: []backend.Compare{{Key: k, ModRevision: kv.ModRevision}},
				Ops:      []backend.Op{{Key: k, Value: value}},
			})
			if err != nil || !res.Succeeded {
				require.NoError(b, err)
				require.True(b, res.Succeeded, "%+v", res)
			}
		}
	})
	get := func(past bool) func(b *testing.B) {
		return func(b *testing.B) {
			be := newBackend(b)
			keys := BenchKeys(b, be, 1000)
			var rev int64 // 0: the current revision
			if past {
				// Read as of the last of the keys' writes, then write once more, so that
				// revision lies in the past.
				var err error
				rev, err = be.Revision(ctx)
				require.NoError(b, err)
				_, err = be.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: "after", Value: value}}})
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := be.Get(ctx, keys[i%len(keys)], rev); err != nil {
					require.NoError(b, err)
				}
			}
		}
	}
	b.Run("Get", get(false))
	b.Run("GetAtRevision", get(true))
	b.Run("Range1k", func(b *testing.B) {
		be := newBackend(b)
		BenchKeys(b, be, 1000)
		for i := range 1000 {
			_, err := be.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("z/%05d", i), Value: value}}})
			require.NoError(b, err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := be.Range(ctx, backend.RangeOptions{Prefix: "k/"})
			if err != nil || len(res.KVs) != 1000 {
				require.NoError(b, err)
				require.Len(b, res.KVs, 1000)
			}
		}
	})
	b.Run("WatchFanout100", func(b *testing.B) {
		be := newBackend(b)
		ws := make([]backend.Watcher, 100)
		for i := range ws {
			w, err := be.Watch(ctx, backend.WatchOptions{Prefix: "k/"})
			require.NoError(b, err)
			defer w.Stop()
			ws[i] = w
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := be.Txn(ctx, backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("k/%d", i%1000), Value: value}}})
			if err != nil {
				require.NoError(b, err)
			}
			for _, w := range ws {
				if ev := <-w.Events(); ev.Revision != res.Revision {
					require.Equal(b, res.Revision, ev.Revision, "the revision a watcher got")
				}
			}
		}
	})
}
