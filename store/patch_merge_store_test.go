package store

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// fixedClock is a clock that does not move, so that two stores write the same
// managedFields times.
type fixedClock struct{}

func (fixedClock) Now() time.Time                         { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
func (fixedClock) After(d time.Duration) <-chan time.Time { return make(chan time.Time) }

// TestPatch_merge_fast_and_general_agree applies the same merge patches through the
// byte-level merge and through jsonpatch (slowMergePatch), each on its own store,
// and wants the same answers: the same error, or the same object stored.
func TestPatch_merge_fast_and_general_agree(t *testing.T) {
	sch := resource.NewScheme()
	require.NoError(t, sch.Register(resource.RawKind(resource.KindInfo{
		Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true, HasStatus: true})))
	wk, _ := sch.KindFor("example.com/v1", "Widget")
	vci := func() resource.Object {
		o := &resource.VirtualClusterInstance{}
		o.Namespace, o.Name = "p-a", "vc"
		o.Labels = map[string]string{"a": "1", "b": "2"}
		o.Spec.DisplayName, o.Spec.ClusterRef.Cluster = "vc", "c1"
		return o
	}
	widget := func() resource.Object {
		o := wk.New().(*resource.RawObject)
		o.Namespace, o.Name = "ns", "w"
		o.Fields = map[string]json.RawMessage{"spec": json.RawMessage(`{"size":1,"tags":{"x":"y"},"list":[1,2]}`)}
		return o
	}
	patches := []string{
		`{"metadata":{"labels":{"c":"3"}}}`,
		`{"metadata":{"labels":{"a":null}}}`,
		`{"metadata":{"labels":{"b":"x","d":"4"},"annotations":{"n":"1"}}}`,
		`{"spec":{"displayName":"other"}}`,
		`{"spec":{"size":2,"tags":{"x":null,"z":"w"},"list":[{"a":null,"b":1}],"new":{"k":null}}}`,
		`{"spec":{"tags":"now a string"}}`,
		`{"spec":null}`,
		`{"other":{"a":1}}`,
		`{"metadata":{"name":"renamed"}}`,
		`{"metadata":{"uid":"other"}}`,
		`{"metadata":{"resourceVersion":"1"}}`,
		`{"metadata":{"labels":{"bad key!":"v"}}}`,
		`{"metadata":{"managedFields":[]}}`,
		`{"status":{"phase":"x"}}`,
		`{"kind":"Other"}`,
		`{"apiVersion":"management.service/v1"}`,
		`{"metadata":{"deletionTimestamp":""}}`,
		`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u"}],"annotations":{"t":"0001-01-01T00:00:00Z"}}}`,
		`{"spec":{"displayName":5}}`,
		`{"spec":{"bogus":null,"clusterRef":{"cluster":"c2"}}}`,
		`{"spec":{"list":[{"a":null}]},"metadata":{"labels":{"e":"5"}}}`,
		`{"metadata":{"labels":{"deep":{"x":1}}}}`,
		`{"spec":{"size":1e400}}`,
		`{}`,
	}
	for _, tc := range []struct {
		name string
		sch  *resource.Scheme
		obj  func() resource.Object
	}{{"typed", nil, vci}, {"raw", sch, widget}} {
		t.Run(tc.name, func(t *testing.T) {
			fast, _ := newTestStore(t, Options{Scheme: tc.sch, Clock: fixedClock{}})
			slow, _ := newTestStore(t, Options{Scheme: tc.sch, Clock: fixedClock{}})
			ctx := context.Background()
			for _, s := range []*Store{fast, slow} {
				require.NoError(t, s.Create(ctx, tc.obj(), CreateOptions{}))
			}
			for i, p := range patches {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					var got [2]string
					var errs [2]error
					for j, s := range []*Store{fast, slow} {
						slowMergePatch.Store(j == 1)
						out := tc.obj()
						out.GetObjectMeta().UID = ""
						opts := PatchOptions{FieldValidation: FieldValidationWarn, WriteOptions: WriteOptions{FieldManager: "m"}}
						errs[j] = s.Patch(ctx, out, PatchTypeMerge, []byte(p), opts)
						out.GetObjectMeta().UID = "" // each store made its own
						b, err := json.Marshal(out)
						require.NoError(t, err)
						got[j] = string(b)
					}
					slowMergePatch.Store(false)
					assert.Equal(t, errs[1], errs[0])
					assert.Equal(t, got[1], got[0])
				})
			}
		})
	}
}

// TestMergePatchStored_takes_the_common_case checks that a patch of a label of a
// stored object takes the byte-level merge (a test that cannot tell the two ways
// apart would not see the fast one vanish).
func TestMergePatchStored_takes_the_common_case(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := context.Background()
	o := &resource.VirtualClusterInstance{}
	o.Namespace, o.Name, o.Labels = "p-a", "vc", map[string]string{"a": "1"}
	require.NoError(t, s.Create(ctx, o, CreateOptions{}))
	_, err := s.runTxn(ctx, false, func(tx *Tx) error {
		k, err := s.kindOf(o)
		require.NoError(t, err)
		next, unknown, _, rv, uid, err := mergePatchStored(tx, s.patchCodec(), k, "p-a", "vc", []byte(`{"metadata":{"labels":{"b":"2"}}}`))
		require.NoError(t, err)
		require.NotNil(t, next)
		assert.Empty(t, unknown)
		assert.Equal(t, o.ResourceVersion, rv)
		assert.Equal(t, o.UID, uid)
		assert.Equal(t, map[string]string{"a": "1", "b": "2"}, next.GetObjectMeta().Labels)
		return nil
	})
	require.NoError(t, err)
}

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPatchManyLabels patches one label of an object carrying 40,000 labels
// (~500 KB; issue 25), through the byte-level merge (bytes) and through jsonpatch
// (jsonpatch), on a store without admission hooks. cpu-ms/op is the process's CPU
// time per patch, the store's background work (watch cache, tracker) included.
func BenchmarkPatchManyLabels(b *testing.B) {
	for _, slow := range []bool{false, true} {
		name := "bytes"
		if slow {
			name = "jsonpatch"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := newTestStore(b, Options{})
			ctx := context.Background()
			o := &resource.VirtualClusterInstance{}
			o.Namespace, o.Name, o.Labels = "p-bench", "big", make(map[string]string, 40000)
			for i := range 40000 {
				o.Labels[fmt.Sprintf("l%05d", i)] = fmt.Sprint(i % 10)
			}
			o.Spec.DisplayName, o.Spec.ClusterRef.Cluster = "big", "cluster-1"
			require.NoError(b, s.Create(ctx, o, CreateOptions{}))
			slowMergePatch.Store(slow)
			b.Cleanup(func() { slowMergePatch.Store(false) })
			b.ReportAllocs()
			cpu := processCPU(b)
			n := 0
			for i := 0; b.Loop(); i++ {
				out := &resource.VirtualClusterInstance{}
				out.Namespace, out.Name = "p-bench", "big"
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{"l00007":"p%d"}}}`, i)
				if err := s.Patch(ctx, out, PatchTypeMerge, patch, PatchOptions{}); err != nil {
					require.NoError(b, err)
				}
				n++
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(n)/1e6, "cpu-ms/op")
		})
	}
}

// FuzzPatchMergeAgrees applies arbitrary merge patches through the byte-level merge
// and through jsonpatch, each on its own store holding the same object, and wants
// the same answer: the same error, or the same object stored (and so the two stores
// stay alike for the next input).
func FuzzPatchMergeAgrees(f *testing.F) {
	for _, p := range []string{
		`{"metadata":{"labels":{"c":"3"}}}`, `{"metadata":{"labels":{"a":null}}}`,
		`{"spec":{"displayName":"x","clusterRef":{"cluster":"c2"}}}`, `{"spec":null}`, `{"status":{"phase":"Ready"}}`,
		`{"metadata":{"annotations":{"t":"0001-01-01T00:00:00Z"}}}`, `{"spec":{"bogus":null}}`, `{"kind":"Other"}`,
	} {
		f.Add([]byte(p))
	}
	fast, _ := newTestStore(f, Options{Clock: fixedClock{}})
	slow, _ := newTestStore(f, Options{Clock: fixedClock{}})
	ctx := context.Background()
	obj := func() *resource.VirtualClusterInstance {
		o := &resource.VirtualClusterInstance{}
		o.Namespace, o.Name = "p-a", "vc"
		return o
	}
	for _, s := range []*Store{fast, slow} {
		o := obj()
		o.Labels = map[string]string{"a": "1", "b": "2"}
		o.Spec.DisplayName, o.Spec.ClusterRef.Cluster = "vc", "c1"
		require.NoError(f, s.Create(ctx, o, CreateOptions{}))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		var got [2]string
		var errs [2]error
		for j, s := range []*Store{fast, slow} {
			slowMergePatch.Store(j == 1)
			out := obj()
			errs[j] = s.Patch(ctx, out, PatchTypeMerge, patch, PatchOptions{FieldValidation: FieldValidationWarn})
			out.UID = "" // each store made its own
			b, err := json.Marshal(out)
			require.NoError(t, err)
			got[j] = string(b)
		}
		slowMergePatch.Store(false)
		require.Equal(t, errs[1], errs[0])
		require.Equal(t, got[1], got[0])
	})
}
