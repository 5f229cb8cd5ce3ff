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

// TestSpliceMeta_raw_objects splices managedFields and generations into the
// encodings of random generic objects (resource.RawObject), whose members other than
// metadata sort before and after it, and compares with json.Marshal.
func TestSpliceMeta_raw_objects(t *testing.T) {
	require.True(t, Spliceable(reflect.TypeFor[*resource.RawObject]()))
	r := rand.New(rand.NewSource(11))
	values := []string{`1`, `"metadata"`, `{"metadata":{"managedFields":[]}}`, `[{"a":"}"}]`, `null`, `{"generation":3}`}
	keys := []string{"a", "apiVersion2", "kinds", "metadatb", "spec", "zz", "\u00e9"}
	spliced := 0
	for i := 0; i < 3000; i++ {
		obj := rawKind.New().(*resource.RawObject)
		objcodectest.Fill(r, reflect.ValueOf(&obj.ObjectMeta).Elem(), 0)
		if r.Intn(5) == 0 {
			obj.APIVersion, obj.Kind = "", ""
		}
		obj.Fields = map[string]json.RawMessage{}
		for range r.Intn(4) {
			obj.Fields[keys[r.Intn(len(keys))]] = json.RawMessage(values[r.Intn(len(values))])
		}
		if r.Intn(2) == 0 {
			obj.Status = json.RawMessage(values[r.Intn(len(values))])
		}
		work, err := Copy(&rawKind, obj, false)
		if err != nil {
			continue
		}
		meta := work.GetObjectMeta()
		var mf []resource.ManagedFieldsEntry
		if r.Intn(4) > 0 {
			mf = make([]resource.ManagedFieldsEntry, 1+r.Intn(2))
			for j := range mf {
				objcodectest.Fill(r, reflect.ValueOf(&mf[j]).Elem(), 0)
			}
		}
		meta.ManagedFields = nil
		gen := meta.Generation
		var data []byte
		if r.Intn(2) == 0 {
			var ok bool
			if data, ok = Encode(work); !ok {
				continue
			}
		} else if data, err = json.Marshal(work); err != nil {
			continue
		}
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
	assert.Greater(t, spliced, 1500, "most splices can be made")
}
