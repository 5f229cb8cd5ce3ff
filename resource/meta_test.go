package resource_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func TestObjectMetaWire(t *testing.T) {
	t.Run("empty metadata writes only a null creationTimestamp", func(t *testing.T) {
		b, err := json.Marshal(resource.ObjectMeta{})
		require.NoError(t, err)
		assert.Equal(t, `{"creationTimestamp":null}`, string(b))
	})
	t.Run("empty collections are left out", func(t *testing.T) {
		b, err := json.Marshal(resource.ObjectMeta{Name: "a", Labels: map[string]string{}, Finalizers: []string{}})
		require.NoError(t, err)
		assert.Equal(t, `{"name":"a","creationTimestamp":null}`, string(b))
	})
	t.Run("every field has its Kubernetes name", func(t *testing.T) {
		b, err := json.Marshal(fullMeta("p-a"))
		require.NoError(t, err)
		assert.JSONEq(t, `{
			"name": "full", "generateName": "full-", "namespace": "p-a",
			"uid": "6f1c7d52-2a4e-4c8e-9f0a-1b2c3d4e5f60", "resourceVersion": "42", "generation": 3,
			"creationTimestamp": "2024-05-06T07:08:09Z", "deletionTimestamp": "2024-05-06T08:08:09Z",
			"deletionGracePeriodSeconds": 30,
			"labels": {"app": "web", "management.service/project": "a"},
			"annotations": {"note": "free <form> & text: yes"},
			"ownerReferences": [{"apiVersion": "management.service/v1", "kind": "Project", "name": "a", "uid": "u-1",
				"controller": true, "blockOwnerDeletion": false}],
			"finalizers": ["management.service/cleanup"],
			"managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "management.service/v1",
				"time": "2024-05-06T07:08:09Z", "fieldsType": "FieldsV1",
				"fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}]
		}`, string(b))
	})
	t.Run("an owner reference always writes its four required fields", func(t *testing.T) {
		b, err := json.Marshal(resource.OwnerReference{})
		require.NoError(t, err)
		assert.Equal(t, `{"apiVersion":"","kind":"","name":"","uid":""}`, string(b))
	})
	t.Run("a list writes its metadata and items", func(t *testing.T) {
		l := resource.ProjectList{TypeMeta: resource.TypeMeta{Kind: "ProjectList", APIVersion: resource.GroupVersion},
			ListMeta: resource.ListMeta{ResourceVersion: "7", Continue: "c"}, Items: []resource.Project{{ObjectMeta: resource.ObjectMeta{Name: "a"}}}}
		b, err := json.Marshal(&l)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"ProjectList","apiVersion":"management.service/v1","metadata":{"resourceVersion":"7","continue":"c"},`+
			`"items":[{"metadata":{"name":"a","creationTimestamp":null}}]}`, string(b))
	})
}

func TestTimeWire(t *testing.T) {
	t.Run("a time is written in UTC at second precision", func(t *testing.T) {
		loc := time.FixedZone("x", 2*3600)
		tm := resource.Time{Time: time.Date(2024, 1, 2, 3, 4, 5, 999_999_999, loc)}
		b, err := json.Marshal(tm)
		require.NoError(t, err)
		assert.Equal(t, `"2024-01-02T01:04:05Z"`, string(b))
	})
	t.Run("the zero time is null", func(t *testing.T) {
		b, err := json.Marshal(resource.Time{})
		require.NoError(t, err)
		assert.Equal(t, "null", string(b))
	})
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"an offset is moved to UTC", `"2024-01-02T03:04:05+02:00"`, time.Date(2024, 1, 2, 1, 4, 5, 0, time.UTC)},
		{"fractional seconds are dropped", `"2024-01-02T03:04:05.75Z"`, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"null is the zero time", `null`, time.Time{}},
		{"an empty string is the zero time", `""`, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tm resource.Time
			require.NoError(t, json.Unmarshal([]byte(tc.in), &tm))
			assert.True(t, tc.want.Equal(tm.Time), "%v", tm.Time)
			assert.Equal(t, time.UTC, tm.Location())
		})
	}
	for _, bad := range []string{`"2024-01-02"`, `12`, `"9999-12-31T23:00:00-01:00"`, `"0000-01-01T00:00:00+01:00"`} {
		t.Run("timestamp "+bad+" is rejected", func(t *testing.T) {
			var tm resource.Time
			assert.Error(t, json.Unmarshal([]byte(bad), &tm))
		})
	}
	t.Run("a year past 9999 cannot be written", func(t *testing.T) {
		_, err := json.Marshal(resource.Time{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
		assert.Error(t, err)
	})
}
