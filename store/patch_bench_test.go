package store_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkManyLabelsCPU creates and patches (one label, a merge patch) an object
// of 40,000 labels (~500 KB; issue 25) on a store with examples/server's admission
// (admitted) and without hooks (plain), and reports the process's CPU time per
// operation (cpu-ms/op), the store's background work included: the target
// is under 100 ms of server CPU for each.
func BenchmarkManyLabelsCPU(b *testing.B) {
	ctx := context.Background()
	for _, admitted := range []bool{false, true} {
		name := "plain"
		if admitted {
			name = "admitted"
		}
		b.Run("create/"+name, func(b *testing.B) {
			s := benchStore(b, nil, admitted)
			src := manyLabels(40000)
			cpu, n := processCPU(b), 0
			for i := 0; b.Loop(); i++ {
				o := src.DeepCopyResource().(*resource.VirtualClusterInstance)
				o.Name = fmt.Sprintf("big-%d", i)
				if err := s.Create(ctx, o, store.CreateOptions{}); err != nil {
					require.NoError(b, err)
				}
				n++
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(n)/1e6, "cpu-ms/op")
		})
		b.Run("patch/"+name, func(b *testing.B) {
			s := benchStore(b, nil, admitted)
			require.NoError(b, s.Create(ctx, manyLabels(40000), store.CreateOptions{}))
			cpu, n := processCPU(b), 0
			for i := 0; b.Loop(); i++ {
				out := &resource.VirtualClusterInstance{}
				out.Namespace, out.Name = "p-bench", "big"
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{"l00007":"p%d"}}}`, i)
				if err := s.Patch(ctx, out, store.PatchTypeMerge, patch, store.PatchOptions{}); err != nil {
					require.NoError(b, err)
				}
				n++
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(n)/1e6, "cpu-ms/op")
		})
	}
}
