package objcodec_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// A write's way through objcodec: copy the caller's object as a JSON round trip
// would, encode it without managedFields, then splice them in. Each step gives what
// encoding/json gives.
func Example() {
	k, _ := resource.NewScheme().KindFor("management.service/v1", "Project")
	sent := &resource.Project{
		TypeMeta: resource.TypeMeta{APIVersion: "management.service/v1", Kind: "Project"},
		ObjectMeta: resource.ObjectMeta{
			Name:              "web",
			Labels:            map[string]string{}, // omitempty: a round trip leaves nil
			CreationTimestamp: resource.Time{Time: time.Date(2026, 1, 2, 4, 5, 6, 789, time.FixedZone("CET", 3600))},
		},
		Spec: resource.ProjectSpec{DisplayName: "<Web>"},
	}

	// Normalize: the copy is what decoding the encoding gives; sent is left alone.
	work, err := objcodec.Copy(k, sent, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(work.GetObjectMeta().Labels == nil, work.GetObjectMeta().CreationTimestamp.Time)

	// Encode: json.Marshal's bytes, through the encoder compiled for *Project.
	data, ok := objcodec.Encode(work)
	want, _ := json.Marshal(work)
	fmt.Println(ok, string(data) == string(want))
	fmt.Println(string(data))

	// Splice: the same encoding with managedFields, as json.Marshal writes it.
	mf := []resource.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", FieldsType: "FieldsV1",
		FieldsV1: json.RawMessage(`{"f:spec":{"f:displayName":{}}}`)}}
	spliced, ok := objcodec.SpliceMeta(data, 0, 0, mf, objcodectest.FindMember)
	work.GetObjectMeta().ManagedFields = mf
	want, _ = json.Marshal(work)
	fmt.Println(ok, string(spliced) == string(want))

	// Copy: a copy that shares nothing with its source.
	c := objcodec.DeepCopy(work)
	c.GetObjectMeta().ManagedFields[0].Manager = "other"
	fmt.Println(work.GetObjectMeta().ManagedFields[0].Manager)
	// Output:
	// true 2026-01-02 03:05:06 +0000 UTC
	// true true
	// {"kind":"Project","apiVersion":"management.service/v1","metadata":{"name":"web","creationTimestamp":"2026-01-02T03:05:06Z"},"spec":{"displayName":"\u003cWeb\u003e"}}
	// true true
	// kubectl
}
