package store

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// TestSpliceMeta_writes_what_json_Marshal_writes splices managedFields and
// generations into the encodings of random objects and compares with json.Marshal.
func TestSpliceMeta_writes_what_json_Marshal_writes(t *testing.T) {
	require.True(t, spliceLayoutKnown)
	r := rand.New(rand.NewSource(9))
	spliced := 0
	for _, k := range resource.NewScheme().Kinds() {
		require.True(t, spliceable(reflect.TypeOf(k.New())), k.Kind)
		for i := 0; i < 2000; i++ {
			obj := k.New()
			randomFill(r, reflect.ValueOf(obj).Elem(), 0)
			work, err := copyObject(k, obj, false)
			if err != nil {
				continue
			}
			meta := work.GetObjectMeta()
			meta.ResourceVersion = ""
			var mf []resource.ManagedFieldsEntry
			if r.Intn(4) > 0 {
				mf = make([]resource.ManagedFieldsEntry, r.Intn(3))
				for j := range mf {
					randomFill(r, reflect.ValueOf(&mf[j]).Elem(), 0)
				}
			}
			meta.ManagedFields = nil
			gen := meta.Generation
			data, err := json.Marshal(work)
			require.NoError(t, err)
			newGen := gen
			if r.Intn(2) == 0 {
				newGen = gen + int64(r.Intn(3)) - 1
			}
			meta.ManagedFields, meta.Generation = mf, newGen
			want, wantErr := json.Marshal(work)
			got, ok := spliceMeta(data, gen, newGen, mf)
			if !ok {
				continue
			}
			require.NoError(t, wantErr)
			require.Equal(t, string(want), string(got))
			spliced++
		}
	}
	assert.Greater(t, spliced, 2000, "most splices can be made")
}

// TestEncodeFirst_keeps_the_size_limit checks that leaving managedFields out of the
// first encoding changes nothing about which writes are too large, nor the error.
func TestEncodeFirst_keeps_the_size_limit(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	k := resource.NewScheme().Kinds()[0]
	for i := 0; i < 3000; i++ {
		obj := k.New()
		randomFill(r, reflect.ValueOf(obj).Elem(), 0)
		work, err := copyObject(k, obj, false)
		if err != nil {
			continue
		}
		full, err := json.Marshal(work) // what the first encoding used to be (give or take resourceVersion)
		require.NoError(t, err)
		s := &Store{maxSize: len(full) - 20 + r.Intn(40)}
		want, wantErr := s.encode(k, work)
		first, err := s.encodeFirst(k, work)
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		if !first.sliced {
			assert.Equal(t, want, first.data)
		}
	}
}
