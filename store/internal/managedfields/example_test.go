package managedfields_test

import (
	"fmt"
	"time"

	"github.com/management-service/mgmt/store/internal/managedfields"
)

// Alice creates an object, then Bob changes a field Alice set: the field moves to Bob,
// and Alice's time stays that of her own write.
func Example() {
	created := []byte(`{"apiVersion":"management.service/v1","kind":"DirectClusterEndpointToken",
		"metadata":{"name":"t1","labels":{"team":"a"}},"spec":{"ttl":3600}}`)
	updated := []byte(`{"apiVersion":"management.service/v1","kind":"DirectClusterEndpointToken",
		"metadata":{"name":"t1","labels":{"team":"a"}},"spec":{"ttl":60}}`)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

	entries, err := managedfields.Update(nil, nil, created, managedfields.Write{
		Manager: "alice", APIVersion: "management.service/v1", Now: t0,
	})
	if err != nil {
		panic(err)
	}
	entries, err = managedfields.Update(entries, created, updated, managedfields.Write{
		Manager: "bob", APIVersion: "management.service/v1", Now: t0.Add(time.Minute),
	})
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println(e.Manager, e.Operation, e.Time.Format(time.RFC3339), string(e.FieldsV1))
	}
	// Output:
	// alice Update 2024-05-01T12:00:00Z {"f:metadata":{"f:labels":{".":{},"f:team":{}}},"f:spec":{}}
	// bob Update 2024-05-01T12:01:00Z {"f:spec":{"f:ttl":{}}}
}
