package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// ApplyFieldTypes declares the list types the apply cases rely on, as the schema
// package derives them from the kinds' JSON Schemas: a Project's
// spec.allowedClusters is a map list keyed by name, an instance's
// status.conditions a map list keyed by type; everything else is deduced.
type ApplyFieldTypes struct{}

// FieldType implements store.FieldTypes.
func (ApplyFieldTypes) FieldType(gvk resource.GroupVersionKind) *store.FieldType {
	sc := &store.FieldType{Kind: store.FieldScalar}
	switch gvk.Kind {
	case resource.KindProject:
		return &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{
			"spec": {Kind: store.FieldObject, Fields: map[string]*store.FieldType{
				"allowedClusters": {Kind: store.FieldList, ListType: store.ListMap, ListMapKeys: []string{"name"},
					Elem: &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{"name": sc}}},
			}},
		}}
	case resource.KindVirtualClusterInstance:
		return &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{
			"status": {Kind: store.FieldObject, Fields: map[string]*store.FieldType{
				"conditions": {Kind: store.FieldList, ListType: store.ListMap, ListMapKeys: []string{"type"},
					Elem: &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{"type": sc}}},
			}},
		}}
	}
	return nil
}

func withApplyTypes(o *store.Options) { o.FieldTypes = ApplyFieldTypes{} }

// misfitTypes says a Project's spec.displayName is a map list, which no Project's
// value fits.
type misfitTypes struct{}

func (misfitTypes) FieldType(gvk resource.GroupVersionKind) *store.FieldType {
	return &store.FieldType{Kind: store.FieldObject, Fields: map[string]*store.FieldType{
		"spec": {Kind: store.FieldObject, Fields: map[string]*store.FieldType{
			"displayName": {Kind: store.FieldList, ListType: store.ListMap, ListMapKeys: []string{"k"},
				Elem: &store.FieldType{Kind: store.FieldObject}},
		}},
	}}
}

// apply applies the configuration (JSON) to the object named by obj as manager.
func apply(h *Harness, obj resource.Object, manager, config string, force bool) error {
	_, err := h.S.Apply(h.Ctx, obj, []byte(config), store.ApplyOptions{WriteOptions: as(manager), Force: force})
	return err
}

// projectConfig is an apply configuration of Project name with the given spec; an
// empty spec leaves spec out (applying "spec":{} would own spec itself).
// applyErr drops Apply's created.
func applyErr(_ bool, err error) error { return err }

func projectConfig(name, spec string) string {
	if spec == "" {
		return fmt.Sprintf(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":%q}}`, name)
	}
	return fmt.Sprintf(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":%q},"spec":%s}`, name, spec)
}

// fieldsOf returns an entry's fieldsV1 as a string, "" for no entry.
func fieldsOf(e *resource.ManagedFieldsEntry) string {
	if e == nil {
		return ""
	}
	return string(e.FieldsV1)
}

func applyCases() []storeCase {
	return []storeCase{
		{name: "apply creates a missing object with an Apply entry", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			created, err := h.S.Apply(h.Ctx, p, []byte(projectConfig("a", `{"displayName":"A"}`)), store.ApplyOptions{WriteOptions: as("alice")})
			require.NoError(t, err)
			assert.True(t, created)
			assert.NotEmpty(t, p.ResourceVersion)
			assert.Equal(t, "A", p.Spec.DisplayName)
			require.Len(t, p.ManagedFields, 1)
			e := p.ManagedFields[0]
			assert.Equal(t, "alice", e.Manager)
			assert.Equal(t, resource.ManagedFieldsOperationApply, e.Operation)
			assert.Equal(t, "management.service/v1", e.APIVersion)
			require.NotNil(t, e.Time)
			assert.True(t, e.Time.Time.Equal(FixtureStart))
			assert.JSONEq(t, `{"f:spec":{"f:displayName":{}}}`, string(e.FieldsV1))
			got := Project("a")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", got, store.GetOptions{}))
			assert.Equal(t, p.ResourceVersion, got.ResourceVersion)
		}},
		{name: "re-applying the same configuration writes nothing", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			cfg := projectConfig("a", `{"displayName":"A","allowedClusters":[{"name":"c1"}]}`)
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", cfg, false))
			rev := h.Revision()
			h.Clock.Step(time.Minute)
			q := Project("a")
			created, err := h.S.Apply(h.Ctx, q, []byte(cfg), store.ApplyOptions{WriteOptions: as("alice")})
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, p.ResourceVersion, q.ResourceVersion)
			assert.Equal(t, rev, h.Revision(), "no write")
			assert.Equal(t, p.ManagedFields, q.ManagedFields)
		}},
		{name: "re-applying after another manager's update writes nothing", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			cfg := projectConfig("a", `{"displayName":"A"}`)
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", cfg, false))
			p.Labels = map[string]string{"b": "1", "a.b/c": "2"}
			p.Annotations = map[string]string{"x": "<\"y\">"}
			p.Spec.Description = "d"
			p.Spec.Owner = &resource.Owner{User: "u"}
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("bob")}))
			rev := h.Revision()
			q := Project("a")
			require.NoError(t, apply(h, q, "alice", cfg, false))
			assert.Equal(t, p.ResourceVersion, q.ResourceVersion)
			assert.Equal(t, rev, h.Revision(), "no write")
		}},
		{name: "kubectl takes over from its client-side apply without conflicts", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			last := `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"annotations":{},"name":"a"},"spec":{"description":"d","displayName":"A"}}` + "\n"
			p := Project("a")
			p.Annotations = map[string]string{store.LastAppliedAnnotation: last}
			p.Spec.DisplayName, p.Spec.Description = "A", "d"
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("kubectl-client-side-apply")}))
			// Someone else changed description since: that field is still a conflict.
			p.Spec.Description = "edited"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("kubectl-client-side-apply")}))
			cfg := projectConfig("a", `{"displayName":"B","description":"e"}`)
			st := RequireReason(t, apply(h, Project("a"), "kubectl", cfg, false), resource.ReasonConflict)
			require.Len(t, st.Details.Causes, 1, "%v", st.Details.Causes)
			assert.Equal(t, ".spec.description", st.Details.Causes[0].Field)
			RequireReason(t, apply(h, Project("a"), "other", projectConfig("a", `{"displayName":"B"}`), false), resource.ReasonConflict)
			// displayName still has its last-applied value: kubectl takes it.
			q := Project("a")
			require.NoError(t, apply(h, q, "kubectl", projectConfig("a", `{"displayName":"B"}`), false))
			assert.Equal(t, "B", q.Spec.DisplayName)
			assert.JSONEq(t, `{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a"},"spec":{"displayName":"B"}}`,
				q.Annotations[store.LastAppliedAnnotation], "the annotation follows what kubectl applied")
		}},
		{name: "an apply whose only change is a manager's time writes nothing", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A"}`), false))
			h.Clock.Step(time.Minute)
			// creationTimestamp: null in the configuration changes the merged object,
			// but the store keeps the stored creationTimestamp: nothing changes.
			cfg := `{"metadata":{"name":"a","creationTimestamp":null},"spec":{"displayName":"A"}}`
			q := Project("a")
			require.NoError(t, apply(h, q, "alice", cfg, false))
			assert.Equal(t, p.ResourceVersion, q.ResourceVersion)
			assert.Equal(t, p.ManagedFields, q.ManagedFields)
		}},
		{name: "objects that do not fit their field type are still written", opts: func(o *store.Options) { o.FieldTypes = misfitTypes{} },
			run: func(t *testing.T, h *Harness) {
				p := Project("a")
				p.Finalizers = []string{"example.com/f"}
				p.Spec.DisplayName = "A"
				require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("m")}))
				assert.True(t, owns(t, entryOf(t, p, "m", ""), "spec", "displayName"))
				assert.True(t, owns(t, entryOf(t, p, "m", ""), "metadata", "finalizers"), "tracked as an atomic list")
				p.Finalizers = nil
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("m")}))
				// Apply cannot merge without the object's shape: the server's fault, 500 as
				// kube-apiserver answers when the stored object does not convert.
				st := RequireReason(t, apply(h, Project("a"), "alice", projectConfig("a", `{"displayName":"B"}`), false), resource.ReasonInternalError)
				assert.Contains(t, st.Message, "spec.displayName")
			}},
		{name: "apply without a field manager is 422", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			st := RequireReason(t, apply(h, Project("a"), "", projectConfig("a", `{}`), false), resource.ReasonInvalid)
			require.NotNil(t, st.Details)
			require.Len(t, st.Details.Causes, 1)
			assert.Equal(t, "fieldManager", st.Details.Causes[0].Field)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "bad configurations are 400", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			for _, cfg := range []string{
				`[]`,
				`{"apiVersion":"management.service/v2","kind":"Project","metadata":{"name":"a"}}`,
				`{"apiVersion":"management.service/v1","kind":"AccessKey","metadata":{"name":"a"}}`,
				`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"b"}}`,
				`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a","managedFields":[]}}`,
				`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a"},"spec":{"nope":1}}`,
			} {
				RequireReason(t, apply(h, Project("a"), "alice", cfg, false), resource.ReasonBadRequest)
			}
		}},
		{name: "a second applier changing an owned field conflicts, force takes it over", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A","description":"d"}`), false))
			rv := p.ResourceVersion
			err := apply(h, Project("a"), "bob", projectConfig("a", `{"displayName":"B"}`), false)
			st := RequireReason(t, err, resource.ReasonConflict)
			assert.Equal(t, int32(409), st.Code)
			require.NotNil(t, st.Details)
			require.Len(t, st.Details.Causes, 1)
			c := st.Details.Causes[0]
			assert.Equal(t, resource.CauseFieldManagerConflict, c.Type)
			assert.Equal(t, ".spec.displayName", c.Field)
			assert.Equal(t, `conflict with "alice"`, c.Message)
			assert.Equal(t, `Apply failed with 1 conflict: conflict with "alice": .spec.displayName`, st.Message)
			got := Project("a")
			require.NoError(t, h.S.Get(h.Ctx, "", "a", got, store.GetOptions{}))
			assert.Equal(t, rv, got.ResourceVersion, "a conflict writes nothing")

			h.Clock.Step(time.Minute)
			q := Project("a")
			require.NoError(t, apply(h, q, "bob", projectConfig("a", `{"displayName":"B"}`), true))
			assert.Equal(t, "B", q.Spec.DisplayName)
			assert.JSONEq(t, `{"f:spec":{"f:displayName":{}}}`, fieldsOf(entryOf(t, q, "bob", "")))
			alice := entryOf(t, q, "alice", "")
			assert.JSONEq(t, `{"f:spec":{"f:description":{}}}`, fieldsOf(alice))
			assert.True(t, alice.Time.Time.Equal(FixtureStart), "losing a field keeps the loser's time")
		}},
		{name: "two appliers of the same value share the field", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A","description":"d"}`), false))
			require.NoError(t, apply(h, p, "bob", projectConfig("a", `{"displayName":"A"}`), false))
			assert.True(t, owns(t, entryOf(t, p, "bob", ""), "spec", "displayName"))
			assert.True(t, owns(t, entryOf(t, p, "alice", ""), "spec", "displayName"))
			// alice drops both fields: the shared one stays (bob owns it), the other goes.
			require.NoError(t, apply(h, p, "alice", projectConfig("a", ""), false))
			assert.Equal(t, "A", p.Spec.DisplayName)
			assert.Empty(t, p.Spec.Description)
			assert.Nil(t, entryOf(t, p, "alice", ""), "alice owns nothing any more")
			// bob changes the value now that he alone owns it: no conflict.
			require.NoError(t, apply(h, p, "bob", projectConfig("a", `{"displayName":"B"}`), false))
			assert.Equal(t, "B", p.Spec.DisplayName)
		}},
		{name: "update managers own what they set and meet appliers", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A"
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("kubectl-create")}))
			err := apply(h, Project("a"), "alice", projectConfig("a", `{"displayName":"B"}`), false)
			st := RequireReason(t, err, resource.ReasonConflict)
			require.Len(t, st.Details.Causes, 1)
			assert.Equal(t, `conflict with "kubectl-create" using management.service/v1`, st.Details.Causes[0].Message)
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A","description":"d"}`), false))
			// An update (kubectl edit) takes the field it changes from the applier.
			p.Spec.Description = "edited"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("kubectl-edit")}))
			assert.True(t, owns(t, entryOf(t, p, "kubectl-edit", ""), "spec", "description"))
			assert.False(t, owns(t, entryOf(t, p, "alice", ""), "spec", "description"))
			st = RequireReason(t, apply(h, Project("a"), "alice", projectConfig("a", `{"displayName":"A","description":"d"}`), false), resource.ReasonConflict)
			assert.Equal(t, ".spec.description", st.Details.Causes[0].Field)
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A","description":"d"}`), true))
			assert.Equal(t, "d", p.Spec.Description)
			assert.Nil(t, entryOf(t, p, "kubectl-edit", ""), "the updater lost its only field")
		}},
		{name: "an object without managedFields is first given to before-first-apply", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Spec.DisplayName = "A"
			h.MustCreate(p)
			p.ManagedFields = []resource.ManagedFieldsEntry{{}}
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{}))
			require.Empty(t, p.ManagedFields, "a reset with no change leaves no entries")
			st := RequireReason(t, apply(h, Project("a"), "alice", projectConfig("a", `{"displayName":"B"}`), false), resource.ReasonConflict)
			assert.Contains(t, st.Details.Causes[0].Message, `"before-first-apply"`)
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"description":"d"}`), false))
			assert.True(t, owns(t, entryOf(t, p, store.BeforeFirstApplyManager, ""), "spec", "displayName"))
			assert.True(t, owns(t, entryOf(t, p, "alice", ""), "spec", "description"))
		}},
		{name: "map lists merge by key, sets by value", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", `{"apiVersion":"management.service/v1","kind":"Project",
				"metadata":{"name":"a","finalizers":["example.com/a"]},"spec":{"allowedClusters":[{"name":"c1"}]}}`, false))
			require.NoError(t, apply(h, p, "bob", `{"apiVersion":"management.service/v1","kind":"Project",
				"metadata":{"name":"a","finalizers":["example.com/b"]},"spec":{"allowedClusters":[{"name":"c2"}]}}`, false))
			assert.Equal(t, []resource.AllowedCluster{{Name: "c1"}, {Name: "c2"}}, p.Spec.AllowedClusters)
			assert.ElementsMatch(t, []string{"example.com/a", "example.com/b"}, p.Finalizers)
			assert.JSONEq(t, `{"f:metadata":{"f:finalizers":{"v:\"example.com/b\"":{}}},"f:spec":{"f:allowedClusters":{"k:{\"name\":\"c2\"}":{".":{},"f:name":{}}}}}`,
				fieldsOf(entryOf(t, p, "bob", "")))
			require.NoError(t, apply(h, p, "alice", projectConfig("a", ""), false))
			assert.Equal(t, []resource.AllowedCluster{{Name: "c2"}}, p.Spec.AllowedClusters)
			assert.Equal(t, []string{"example.com/b"}, p.Finalizers)
		}},
		{name: "without a map list type a list is atomic and replaced whole", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"allowedClusters":[{"name":"c1"}]}`), false))
			assert.True(t, owns(t, entryOf(t, p, "alice", ""), "spec", "allowedClusters"))
			assert.NotContains(t, fieldsOf(entryOf(t, p, "alice", "")), "k:", "no item is owned on its own")
			st := RequireReason(t, apply(h, Project("a"), "bob", projectConfig("a", `{"allowedClusters":[{"name":"c2"}]}`), false), resource.ReasonConflict)
			assert.Equal(t, ".spec.allowedClusters", st.Details.Causes[0].Field)
		}},
		{name: "apply to the status subresource records subresource status", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			v := Instance("p-a", "v")
			h.MustCreate(v)
			cfg := `{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance","metadata":{"name":"v","namespace":"p-a"},
				"spec":{"displayName":"ignored"},"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True"}]}}`
			got := Instance("p-a", "v")
			require.NoError(t, applyErr(h.S.Apply(h.Ctx, got, []byte(cfg), store.ApplyOptions{WriteOptions: as("ctl"), Subresource: "status"})))
			assert.Equal(t, resource.InstancePhaseReady, got.Status.Phase)
			assert.Empty(t, got.Spec.DisplayName, "a status apply changes only status")
			e := entryOf(t, got, "ctl", "status")
			require.NotNil(t, e)
			assert.Equal(t, resource.ManagedFieldsOperationApply, e.Operation)
			assert.JSONEq(t, `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}`, string(e.FieldsV1))
			// The main resource ignores status.
			require.NoError(t, applyErr(h.S.Apply(h.Ctx, got, []byte(`{"metadata":{"name":"v","namespace":"p-a"},"spec":{"displayName":"D"},"status":{"phase":"Failed"}}`),
				store.ApplyOptions{WriteOptions: as("main")})))
			assert.Equal(t, resource.InstancePhaseReady, got.Status.Phase)
			assert.Equal(t, "D", got.Spec.DisplayName)
			assert.True(t, owns(t, entryOf(t, got, "main", ""), "spec", "displayName"))
			assert.NotContains(t, fieldsOf(entryOf(t, got, "main", "")), "status")
			RequireReason(t, applyErr(h.S.Apply(h.Ctx, Instance("p-a", "missing"), []byte(`{"status":{"phase":"Ready"}}`), store.ApplyOptions{WriteOptions: as("ctl"), Subresource: "status"})), resource.ReasonNotFound)
		}},
		{name: "a uid in the configuration of a missing object is 409", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			st := RequireReason(t, apply(h, Project("a"), "alice", `{"metadata":{"name":"a","uid":"u-1"}}`, false), resource.ReasonConflict)
			assert.Contains(t, st.Message, "uid mismatch")
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "a dry-run apply stores nothing", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, applyErr(h.S.Apply(h.Ctx, p, []byte(projectConfig("a", `{"displayName":"A"}`)),
				store.ApplyOptions{WriteOptions: store.WriteOptions{FieldManager: "alice", DryRun: true}})))
			assert.Equal(t, "A", p.Spec.DisplayName)
			assert.False(t, h.Exists(Project(""), "", "a"))
		}},
		{name: "a resourceVersion in the configuration is a precondition", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"A"}`), false))
			first := p.ResourceVersion
			require.NoError(t, apply(h, p, "alice", projectConfig("a", `{"displayName":"B"}`), false))
			require.NotEqual(t, first, p.ResourceVersion)
			cfg := fmt.Sprintf(`{"metadata":{"name":"a","resourceVersion":%q},"spec":{"displayName":"C"}}`, first)
			RequireReason(t, apply(h, Project("a"), "alice", cfg, false), resource.ReasonConflict)
		}},
		{name: "the cap on Update entries never drops an Apply entry", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			p := Project("a")
			require.NoError(t, apply(h, p, "applier", projectConfig("a", `{"displayName":"A"}`), false))
			for i := 0; i < 14; i++ {
				h.Clock.Step(time.Second)
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels[fmt.Sprintf("l%d", i)] = "x"
				if i%2 == 0 {
					p.Finalizers = append(p.Finalizers, fmt.Sprintf("example.com/f%d", i)) // sets go the typed way
				}
				require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as(fmt.Sprintf("m%02d", i))}))
			}
			updates := 0
			for _, e := range p.ManagedFields {
				if e.Operation == resource.ManagedFieldsOperationUpdate {
					updates++
				}
			}
			assert.Equal(t, 10, updates)
			assert.True(t, owns(t, entryOf(t, p, "applier", ""), "spec", "displayName"))
			assert.NotNil(t, entryOf(t, p, "ancient-changes", ""))
			assert.Equal(t, resource.ManagedFieldsOperationApply, p.ManagedFields[0].Operation, "Apply entries sort first")
		}},
		{name: "finalizers are a set in FieldsV1", run: func(t *testing.T, h *Harness) {
			p := Project("a")
			p.Finalizers = []string{"example.com/f"}
			require.NoError(t, h.S.Create(h.Ctx, p, store.CreateOptions{WriteOptions: as("m")}))
			fv := fieldsOf(entryOf(t, p, "m", ""))
			assert.JSONEq(t, `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/f\"":{}}}}`, fv)
			p.Finalizers = nil
			p.Spec.DisplayName = "x"
			require.NoError(t, h.S.Update(h.Ctx, p, store.UpdateOptions{WriteOptions: as("m")}))
			assert.JSONEq(t, `{"f:spec":{".":{},"f:displayName":{}}}`, fieldsOf(entryOf(t, p, "m", "")))
		}},
		{name: "applying any valid configuration twice is a no-op", opts: withApplyTypes, run: func(t *testing.T, h *Harness) {
			for i, spec := range applySpecs() {
				name := fmt.Sprintf("p%d", i)
				cfg := projectConfig(name, spec)
				p := Project(name)
				require.NoError(t, apply(h, p, "alice", cfg, false), spec)
				rev := h.Revision()
				q := Project(name)
				require.NoError(t, apply(h, q, "alice", cfg, false), spec)
				assert.Equal(t, p.ResourceVersion, q.ResourceVersion, spec)
				assert.Equal(t, rev, h.Revision(), spec)
				b1, _ := json.Marshal(p)
				b2, _ := json.Marshal(q)
				assert.JSONEq(t, string(b1), string(b2), spec)
			}
		}},
	}
}

// applySpecs are generated Project specs: every combination of the fields, with
// list lengths 0 to 2.
func applySpecs() []string {
	var out []string
	for mask := 0; mask < 32; mask++ {
		var parts []string
		if mask&1 != 0 {
			parts = append(parts, `"displayName":"D"`)
		}
		if mask&2 != 0 {
			parts = append(parts, `"description":""`)
		}
		if mask&4 != 0 {
			parts = append(parts, `"owner":{"user":"u"}`)
		}
		if mask&8 != 0 {
			parts = append(parts, `"allowedClusters":[{"name":"c1"},{"name":"c2"}]`)
		}
		if mask&16 != 0 {
			parts = append(parts, `"allowedClusters":[]`)
		}
		out = append(out, "{"+strings.Join(parts, ",")+"}")
	}
	return out
}
