package crclient

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/management-service/mgmt/resource"
)

// The field-by-field metadata conversions give exactly what a JSON round trip gives.
func TestMetaConversions_agree_with_JSON(t *testing.T) {
	yes, no := true, false
	grace := int64(30)
	at := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600)))
	tests := map[string]metav1.ObjectMeta{
		"empty": {},
		"full": {Name: "n", GenerateName: "g-", Namespace: "ns", UID: "u", ResourceVersion: "7", Generation: 3,
			CreationTimestamp: at, DeletionTimestamp: &at, DeletionGracePeriodSeconds: &grace,
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "<d>"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "o", UID: "ou", Controller: &yes, BlockOwnerDeletion: &no}},
			Finalizers:      []string{"f"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &at, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{ "f:a" : {} }`)}, Subresource: "status"}}},
		"empty collections": {Labels: map[string]string{}, Annotations: map[string]string{}, Finalizers: []string{},
			OwnerReferences: []metav1.OwnerReference{}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
	}
	for name, m := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(&m)
			require.NoError(t, err)
			var want resource.ObjectMeta
			require.NoError(t, json.Unmarshal(b, &want))
			got := toStoreMeta(&m)
			assert.Equal(t, want, got, "to the store")

			b, err = json.Marshal(&want)
			require.NoError(t, err)
			var wantBack metav1.ObjectMeta
			require.NoError(t, json.Unmarshal(b, &wantBack))
			var gotBack metav1.ObjectMeta
			fromStoreMeta(&want, &gotBack)
			assert.Equal(t, wantBack, gotBack, "from the store")
		})
	}
}
