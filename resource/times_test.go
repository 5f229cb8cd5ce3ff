package resource_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// TestDecode_zeroTimePointersAreNil checks that a *Time decoded from "" or the zero
// time is no pointer at all, as it would be after encoding (null) and decoding again.
func TestDecode_zeroTimePointersAreNil(t *testing.T) {
	codec := resource.NewCodec(resource.NewScheme(), resource.CodecOptions{})
	for _, v := range []string{`""`, `"0001-01-01T00:00:00Z"`, `null`} {
		t.Run(v, func(t *testing.T) {
			obj, err := codec.Decode([]byte(`{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance",`+
				`"metadata":{"name":"a","deletionTimestamp":`+v+`},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":`+v+`}]}}`),
				resource.MediaTypeJSON, nil)
			require.NoError(t, err)
			vci := obj.(*resource.VirtualClusterInstance)
			assert.Nil(t, vci.DeletionTimestamp)
			require.Len(t, vci.Status.Conditions, 1)
			assert.Nil(t, vci.Status.Conditions[0].LastTransitionTime)
		})
	}
}
