package store_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

var listScaleN = flag.String("listscale.n", "10000", "comma-separated object counts of BenchmarkListScale")

// BenchmarkListScale lists every object of a store of N (-listscale.n) ~1 KB objects,
// paged by 500 and unpaged, on memdb and badger (without fsync), beside the same scan
// of the backend with a decode of each value (raw): the store's list must cost the
// same per object whatever N and the paging, and at most twice the raw scan. It
// reports ns/obj; the store's object cache is on (its default) or off.
func BenchmarkListScale(b *testing.B) {
	ctx := context.Background()
	for _, f := range strings.Split(*listScaleN, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(b, err)
		for _, be := range []string{"memdb", "badger"} {
			b.Run(fmt.Sprintf("%s/%d", be, n), func(b *testing.B) {
				var bk backend.Backend
				if be == "memdb" {
					bk = memdb.New(memdb.Options{})
				} else {
					bb, err := badger.Open(b.TempDir(), badger.Options{NoSync: true})
					require.NoError(b, err)
					bk = bb
				}
				s, err := store.New(bk, store.Options{})
				require.NoError(b, err)
				b.Cleanup(func() { _ = s.Close(); _ = bk.Close() })
				storetest.SeedBench(b, s, n)
				require.NoError(b, s.Settle(ctx))
				list := func(limit int64) func(b *testing.B) {
					return func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							cont, got := "", 0
							for {
								l := &resource.VirtualClusterInstanceList{}
								if err := s.List(ctx, l, store.ListOptions{Limit: limit, Continue: cont}); err != nil {
									require.NoError(b, err)
								}
								got += len(l.Items)
								if cont = l.Continue; cont == "" {
									break
								}
							}
							if got != n {
								require.Equal(b, n, got)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/obj")
					}
				}
				b.Run("paged", list(500))
				b.Run("unpaged", list(0))
				b.Run("raw", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						res, err := bk.Range(ctx, backend.RangeOptions{Prefix: "/management.service/virtualclusterinstances/"})
						require.NoError(b, err)
						got := 0
						for _, kv := range res.KVs {
							var o resource.VirtualClusterInstance
							if err := json.Unmarshal(kv.Value, &o); err != nil {
								require.NoError(b, err)
							}
							got++
						}
						if got != n {
							require.Equal(b, n, got)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/obj")
				})
			})
		}
	}
}
