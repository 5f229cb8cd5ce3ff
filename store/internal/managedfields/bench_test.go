package managedfields

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// benchObject is a ~1.3 KB VirtualClusterInstance as the store encodes it (compact
// JSON from encoding/json, resourceVersion cleared): 5 labels, a 400-byte annotation
// and a spec with nested objects. description is the spec field the update changes.
func benchObject(description string, mf []resource.ManagedFieldsEntry) []byte {
	obj := &resource.VirtualClusterInstance{
		TypeMeta: resource.TypeMeta{APIVersion: gv, Kind: "VirtualClusterInstance"},
		ObjectMeta: resource.ObjectMeta{
			Namespace:         "p-bench",
			Name:              "vci-000042",
			UID:               "0b5e6c1e-3f0a-4c4f-9d7e-2a1b3c4d5e6f",
			Generation:        1,
			CreationTimestamp: resource.NewTime(t0),
			Labels: map[string]string{
				"app": "bench", "tier": "backend", "team": "team-2",
				"one-in-hundred": "false", "management.service/project": "bench",
			},
			Annotations:   map[string]string{"description": strings.Repeat("x", 400)},
			Finalizers:    []string{"management.service/cleanup"},
			ManagedFields: mf,
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: "Instance 42",
			Description: description,
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"},
			TemplateRef: &resource.TemplateRef{Name: "default", Version: "1.0.0"},
			Parameters:  "replicas: 1\nsleepAfter: 3600\n",
		},
		Status: resource.VirtualClusterInstanceStatus{Phase: "Ready", Reason: "Running",
			Message: "the virtual cluster is running"},
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return b
}

// benchCase is one Update call of the benchmarks.
type benchCase struct {
	entries        []resource.ManagedFieldsEntry
	oldObj, newObj []byte
	w              Write
}

func benchCases(tb testing.TB) map[string]benchCase {
	w := func(m string, min int) Write {
		return Write{Manager: m, APIVersion: gv, Now: at(min), StatusSubresource: true}
	}
	desc := strings.Repeat("d", 200)
	created := benchObject(desc, nil)
	live, err := Update(nil, nil, created, w("alice", 1))
	require.NoError(tb, err)
	// A second manager owns the display name and a status writer owns status: three
	// entries, as after a few writes by a controller and a user.
	mid := benchObject(desc, live)
	live, err = Update(live, mid, mid, w("bob", 2))
	require.NoError(tb, err)
	live = append(live, resource.ManagedFieldsEntry{Manager: "bob", Operation: resource.ManagedFieldsOperationUpdate,
		APIVersion: gv, Time: resource.NewTimePtr(at(2)), FieldsType: resource.FieldsTypeV1,
		FieldsV1: json.RawMessage(`{"f:spec":{"f:displayName":{}}}`)},
		resource.ManagedFieldsEntry{Manager: "status-controller", Operation: resource.ManagedFieldsOperationUpdate,
			APIVersion: gv, Time: resource.NewTimePtr(at(3)), FieldsType: resource.FieldsTypeV1, Subresource: "status",
			FieldsV1: json.RawMessage(`{"f:status":{".":{},"f:message":{},"f:phase":{},"f:reason":{}}}`)})
	live, err = Update(live, mid, mid, w("bob", 2))
	require.NoError(tb, err)
	require.Len(tb, live, 3, "entries")
	stored := benchObject(desc, live)
	changed := benchObject(strings.Repeat("e", 200), live)
	n := len(benchObject(desc, nil))
	require.True(tb, n >= 1200 && n <= 1400, "object is %d bytes, want ~1.3 KB", n)
	return map[string]benchCase{
		// create: no entries, no old object.
		"create": {oldObj: nil, newObj: created, w: w("alice", 1)},
		// bob changes spec.description, which alice owns: it moves to bob.
		"update-spec-other": {entries: live, oldObj: stored, newObj: changed, w: w("bob", 5)},
		// alice changes a field she owns: only her time changes.
		"update-spec-own": {entries: live, oldObj: stored, newObj: changed, w: w("alice", 5)},
		// a write that changes nothing tracked.
		"update-noop": {entries: live, oldObj: stored, newObj: stored, w: w("bob", 5)},
	}
}

func BenchmarkUpdate(b *testing.B) {
	cases := benchCases(b)
	for _, name := range []string{"create", "update-spec-other", "update-spec-own", "update-noop"} {
		bc := cases[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Update(bc.entries, bc.oldObj, bc.newObj, bc.w); err != nil {
					require.NoError(b, err) // only on failure: b.Helper is not free in the timed loop
				}
			}
		})
	}
}

func TestBenchCases(t *testing.T) {
	cases := benchCases(t)
	for name, bc := range cases {
		got, err := Update(bc.entries, bc.oldObj, bc.newObj, bc.w)
		require.NoError(t, err, name)
		if testing.Verbose() {
			t.Logf("%s (%d bytes):", name, len(bc.newObj))
			for _, e := range got {
				t.Logf("  %s %s %s %s", e.Manager, e.Subresource, e.Time.Format(time.RFC3339), e.FieldsV1)
			}
		}
	}
}
