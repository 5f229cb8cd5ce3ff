package objcodec

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// TestSpliceMeta_writes_what_json_Marshal_writes splices managedFields and
// generations into the encodings of random objects and compares with json.Marshal.
func TestSpliceMeta_writes_what_json_Marshal_writes(t *testing.T) {
	require.True(t, spliceLayoutKnown)
	r := rand.New(rand.NewSource(9))
	spliced := 0
	for _, k := range resource.NewScheme().Kinds() {
		require.True(t, Spliceable(reflect.TypeOf(k.New())), k.Kind)
		for i := 0; i < 2000; i++ {
			obj := k.New()
			objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
			work, err := Copy(k, obj, false)
			if err != nil {
				continue
			}
			meta := work.GetObjectMeta()
			meta.ResourceVersion = ""
			var mf []resource.ManagedFieldsEntry
			if r.Intn(4) > 0 {
				mf = make([]resource.ManagedFieldsEntry, r.Intn(3))
				for j := range mf {
					objcodectest.Fill(r, reflect.ValueOf(&mf[j]).Elem(), 0)
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
			got, ok := SpliceMeta(data, gen, newGen, mf, objcodectest.FindMember)
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
