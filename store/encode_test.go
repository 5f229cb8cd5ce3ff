package store

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// TestEncodeFirst_keeps_the_size_limit checks that leaving managedFields out of the
// first encoding changes nothing about which writes are too large, nor the error.
func TestEncodeFirst_keeps_the_size_limit(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	k := resource.NewScheme().Kinds()[0]
	for i := 0; i < 3000; i++ {
		obj := k.New()
		objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
		work, err := objcodec.Copy(k, obj, false)
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
