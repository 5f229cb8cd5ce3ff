package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// benchStore opens a store on memdb for a write benchmark. With admitted, it runs
// admission as examples/server does: a mutating hook (here one that changes
// nothing) and the JSON Schema validation of the built-in kinds.
func benchStore(b *testing.B, sch *resource.Scheme, admitted bool) *store.Store {
	opts := store.Options{Scheme: sch}
	if admitted {
		opts.Mutating = []store.MutatingAdmitter{store.MutatingAdmitterFunc(
			func(context.Context, *store.AdmissionRequest) error { return nil })}
		opts.Validating = []store.ValidatingAdmitter{schema.NewAdmitter(nil)}
	}
	be := memdb.New(memdb.Options{})
	s, err := store.New(be, opts)
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close(); _ = be.Close() })
	return s
}

// benchWidget is an object of a kind registered at run time (resource.RawObject),
// the shape store/crclient creates for a typed custom resource: five labels, an
// annotation of 400 bytes and a spec of ~300.
func benchWidget(k *resource.KindInfo, i int) *resource.RawObject {
	o := k.New().(*resource.RawObject)
	o.Namespace, o.Name = "ns", fmt.Sprintf("w-%07d", i)
	o.Labels = map[string]string{"app": "bench", "tier": "backend", "team": "t", "pick": "false", "x": "y"}
	o.Annotations = map[string]string{"description": strings.Repeat("x", 400)}
	o.Fields = map[string]json.RawMessage{"spec": json.RawMessage(
		`{"size":1,"color":"red","tags":{"description":"` + strings.Repeat("d", 200) + `","owner":"alice"}}`)}
	return o
}

// BenchmarkCreateGeneric creates objects of a kind registered at run time with a
// status subresource (what store/crclient creates for a typed custom resource).
func BenchmarkCreateGeneric(b *testing.B) {
	sch := resource.NewScheme()
	require.NoError(b, sch.Register(resource.RawKind(resource.KindInfo{
		Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true, HasStatus: true})))
	k, _ := sch.KindFor("example.com/v1", "Widget")
	s := benchStore(b, sch, false)
	ctx := context.Background()
	objs := make([]*resource.RawObject, 0, 1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			b.StopTimer()
			objs = objs[:0]
			for j := range 1024 {
				objs = append(objs, benchWidget(k, i+j))
			}
			b.StartTimer()
		}
		if err := s.Create(ctx, objs[i%1024], store.CreateOptions{}); err != nil {
			require.NoError(b, err)
		}
	}
}

// manyLabels returns a VirtualClusterInstance carrying n labels (about 500 KB at
// 40,000), the object of issue 25's "a write's cost grows linearly with its size".
func manyLabels(n int) *resource.VirtualClusterInstance {
	o := &resource.VirtualClusterInstance{
		TypeMeta:   resource.TypeMeta{APIVersion: resource.GroupVersion, Kind: resource.KindVirtualClusterInstance},
		ObjectMeta: resource.ObjectMeta{Namespace: "p-bench", Name: "big", Labels: make(map[string]string, n)},
		Spec: resource.VirtualClusterInstanceSpec{DisplayName: "big", Owner: &resource.Owner{User: "alice"},
			ClusterRef: resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"}},
	}
	for i := range n {
		o.Labels[fmt.Sprintf("l%05d", i)] = fmt.Sprint(i % 10)
	}
	return o
}

// BenchmarkLabels creates an object carrying n labels (n = 400, 4,000 and 40,000:
// the cost per label must not grow with n) and patches one of its labels, on a store
// without hooks (plain) and with examples/server's admission (admitted).
func BenchmarkLabels(b *testing.B) {
	ctx := context.Background()
	for _, admitted := range []bool{false, true} {
		for _, n := range []int{400, 4000, 40000} {
			name := fmt.Sprintf("plain/%d", n)
			if admitted {
				name = fmt.Sprintf("admitted/%d", n)
			}
			b.Run("create/"+name, func(b *testing.B) {
				s := benchStore(b, nil, admitted)
				src := manyLabels(n)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					o := src.DeepCopyResource().(*resource.VirtualClusterInstance)
					o.Name = fmt.Sprintf("big-%d", i)
					b.StartTimer()
					if err := s.Create(ctx, o, store.CreateOptions{}); err != nil {
						require.NoError(b, err)
					}
				}
			})
			b.Run("patch/"+name, func(b *testing.B) {
				s := benchStore(b, nil, admitted)
				require.NoError(b, s.Create(ctx, manyLabels(n), store.CreateOptions{}))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					out := &resource.VirtualClusterInstance{}
					out.Namespace, out.Name = "p-bench", "big"
					patch := fmt.Appendf(nil, `{"metadata":{"labels":{"l00007":"p%d"}}}`, i)
					if err := s.Patch(ctx, out, store.PatchTypeMerge, patch, store.PatchOptions{}); err != nil {
						require.NoError(b, err)
					}
				}
			})
		}
	}
}

// BenchmarkCreateAdmitted creates the ~1 KB objects of the store benchmarks with
// examples/server's admission (see benchStore), for the share of JSON Schema
// validation in a create.
func BenchmarkCreateAdmitted(b *testing.B) {
	s := benchStore(b, nil, true)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		o := storetest.BenchInstance(i)
		b.StartTimer()
		if err := s.Create(ctx, o, store.CreateOptions{}); err != nil {
			require.NoError(b, err)
		}
	}
}
