package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizerMasksWhatDiffersLegitimately(t *testing.T) {
	obj := `{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance",
	"metadata":{"name":"gen-x7k2p","generateName":"gen-","uid":"u-1","resourceVersion":"812",
	"creationTimestamp":"2026-11-29T02:00:00Z","generation":1,
	"ownerReferences":[{"apiVersion":"v1","kind":"A","name":"a","uid":"u-1"}],
	"managedFields":[{"manager":"z","operation":"Update","time":"2026-11-29T02:00:00Z"},{"manager":"a","operation":"Update","time":"2026-11-29T02:00:00Z"}]},
	"status":{"expirationTimestamp":"2026-11-30T00:00:00Z","token":"a.b.c"}}`
	n := NewNormalizer(false)
	got := n.View(&Response{Code: 201, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(obj)})
	body := got["body"].(map[string]any)
	meta := body["metadata"].(map[string]any)
	assert.Equal(t, 201, got["code"])
	assert.Equal(t, "application/json", got["contentType"])
	assert.Equal(t, "gen-<suffix>", meta["name"])
	assert.Equal(t, "<uid#1>", meta["uid"])
	assert.Equal(t, "<rv#1>", meta["resourceVersion"])
	assert.Equal(t, "<time>", meta["creationTimestamp"])
	assert.Equal(t, "<uid#1>", meta["ownerReferences"].([]any)[0].(map[string]any)["uid"], "the same uid keeps its number")
	mf := meta["managedFields"].(map[string]any)
	assert.Equal(t, "a", mf["a|Update|"].(map[string]any)["manager"], "managedFields are keyed by manager, operation, subresource")
	assert.Equal(t, "<time>", mf["z|Update|"].(map[string]any)["time"])
	st := body["status"].(map[string]any)
	assert.Equal(t, "<time>", st["expirationTimestamp"])
	assert.Equal(t, "<token>", st["token"])

	again := n.View(&Response{Code: 200, Body: []byte(`{"kind":"X","metadata":{"uid":"u-2","resourceVersion":"812"}}`)})
	meta = again["body"].(map[string]any)["metadata"].(map[string]any)
	assert.Equal(t, "<uid#2>", meta["uid"], "a new uid gets a new number")
	assert.Equal(t, "<rv#1>", meta["resourceVersion"], "a resourceVersion seen before keeps its number")
}

func TestNormalizerListsStatusesTablesEvents(t *testing.T) {
	tests := []struct {
		name string
		resp *Response
		want map[string]any
	}{
		{
			name: "list metadata",
			resp: &Response{Code: 200, Body: []byte(`{"kind":"XList","metadata":{"resourceVersion":"9","continue":"abc","remainingItemCount":2},"items":[]}`)},
			want: map[string]any{"code": 200, "body": map[string]any{"kind": "XList", "items": []any{},
				"metadata": map[string]any{"resourceVersion": "<rv>", "continue": "<continue>", "remainingItemCount": jsonNum("2")}}},
		},
		{
			name: "status keeps reasons and causes, not messages",
			resp: &Response{Code: 422, Header: http.Header{"Warning": {`299 - "unknown field \"spec.foo\""`}},
				Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"Invalid","code":422,
				"details":{"name":"n","kind":"K","causes":[{"reason":"FieldValueInvalid","field":"spec.b","message":"x"},{"reason":"FieldValueRequired","field":"spec.a"}]}}`)},
			want: map[string]any{"code": 422, "warnings": []any{`unknown field "spec.foo"`}, "body": map[string]any{
				"kind": "Status", "status": "Failure", "reason": "Invalid", "code": jsonNum("422"),
				"details": map[string]any{"name": "n", "kind": "K", "causes": []any{
					// Sorted: the order of causes means nothing.
					map[string]any{"reason": "FieldValueRequired", "field": "spec.a"},
					map[string]any{"reason": "FieldValueInvalid", "field": "spec.b"},
				}}}},
		},
		{
			name: "table ages",
			resp: &Response{Code: 200, Body: []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"3"},
				"columnDefinitions":[{"name":"Name","format":"name"},{"name":"Age","format":"date"}],"rows":[{"cells":["a","5s"]}]}`)},
			want: map[string]any{"code": 200, "body": map[string]any{"kind": "Table", "apiVersion": "meta.k8s.io/v1",
				"metadata":          map[string]any{"resourceVersion": "<rv>"},
				"columnDefinitions": []any{map[string]any{"name": "Name", "format": "name"}, map[string]any{"name": "Age", "format": "date"}},
				"rows":              []any{map[string]any{"cells": []any{"a", "<age>"}}}}},
		},
		{
			name: "watch events and a bookmark",
			resp: &Response{Code: 200, Events: []Event{
				{Type: "ADDED", Object: []byte(`{"kind":"X","metadata":{"uid":"u","resourceVersion":"4"}}`)},
				{Type: "BOOKMARK", Object: []byte(`{"kind":"X","metadata":{"resourceVersion":"77","annotations":{"k8s.io/initial-events-end":"true"}}}`)},
			}},
			want: map[string]any{"code": 200, "events": []any{
				map[string]any{"type": "ADDED", "object": map[string]any{"kind": "X", "metadata": map[string]any{"uid": "<uid#1>", "resourceVersion": "<rv#1>"}}},
				map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": "X", "metadata": map[string]any{"resourceVersion": "<rv>",
					"annotations": map[string]any{"k8s.io/initial-events-end": "true"}}}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.resp.Header == nil {
				tt.resp.Header = http.Header{}
			}
			got := NewNormalizer(false).View(tt.resp)
			assert.Equal(t, render(tt.want), render(got))
		})
	}
}

func jsonNum(s string) any { return jsonBody([]byte(s)) }

func TestDecodeBodyYAMLAndProtobuf(t *testing.T) {
	y := decodeBody("application/yaml", []byte("kind: X\nspec:\n  a: 1\n"))
	assert.Equal(t, `{"kind":"X","spec":{"a":1}}`, render(y))

	// "k8s\0", then field 1 (TypeMeta) holding field 1 "v1" and field 2 "Kind".
	pb := append([]byte("k8s\x00"), 0x0a, 10, 0x0a, 2, 'v', '1', 0x12, 4, 'K', 'i', 'n', 'd', 0x12, 0)
	got := decodeBody("application/vnd.kubernetes.protobuf", pb)
	assert.Equal(t, `{"apiVersion":"v1","kind":"Kind","protobuf":true}`, render(got))

	assert.Nil(t, decodeBody("application/vnd.kubernetes.protobuf", []byte("k8s\x00\x0a\x7f")), "a truncated message is not decoded")
	assert.Nil(t, decodeBody("text/plain", []byte("404 page not found")))
}

func TestDiffAndCompare(t *testing.T) {
	kube := []StepResult{{Label: "get", View: map[string]any{"code": 200, "body": map[string]any{"a": 1, "l": []any{"x", "y"}}}},
		{Label: "put", View: map[string]any{"code": 201, "body": map[string]any{"kind": "K"}}}}
	ours := []StepResult{{Label: "get", View: map[string]any{"code": 200, "body": map[string]any{"a": 2, "b": true, "l": []any{"x"}}}},
		{Label: "put", View: map[string]any{"code": 400, "body": map[string]any{"kind": "Status", "reason": "BadRequest"}}}}
	ds := Compare(kube, ours)
	require.Len(t, ds, 4)
	assert.Equal(t, Difference{Path: "get.body.a", Kube: "1", Ours: "2"}, ds[0])
	assert.Equal(t, Difference{Path: "get.body.b", Kube: Absent, Ours: "true"}, ds[1])
	assert.Equal(t, Difference{Path: "get.body.l", Kube: `["x","y"]`, Ours: `["x"]`}, ds[2])
	assert.Equal(t, Difference{Path: "put.code", Kube: "201 K", Ours: "400 BadRequest"}, ds[3], "different codes are one difference")

	assert.Empty(t, Compare(kube, kube))
	missing := Compare(kube, ours[:1])
	assert.Equal(t, "put", missing[len(missing)-1].Path)
	assert.Equal(t, Absent, missing[len(missing)-1].Ours)
}

func TestClassify(t *testing.T) {
	ds := []Difference{
		{Path: "list.body.metadata.continue", Kube: `""`, Ours: Absent},
		{Path: "list.body.metadata.continue", Kube: `"<continue>"`, Ours: Absent},
		{Path: "create.body.metadata.finalizers", Kube: Absent, Ours: `["management.service/project-instances"]`},
		{Path: "watch.code", Kube: "500 <nil>", Ours: "400 BadRequest"},
	}
	Classify("core/list", ds)
	assert.Equal(t, VerdictReference, ds[0].Verdict)
	assert.Equal(t, "cr-list-empty-continue", ds[0].Exception)
	assert.Equal(t, VerdictBug, ds[1].Verdict, "a missing token is a bug")
	assert.Equal(t, VerdictJustified, ds[2].Verdict)
	assert.Equal(t, VerdictReference, ds[3].Verdict)

	for _, e := range exceptions {
		assert.NotEmpty(t, e.ID)
		assert.NotEmpty(t, e.Reason, e.ID)
		assert.NotEmpty(t, e.Source, e.ID)
		assert.Contains(t, []string{VerdictJustified, VerdictReference}, e.Verdict, e.ID)
	}
}

func TestCRDsFromTheSchemas(t *testing.T) {
	set, err := loadSchemas(filepath.Join("..", "..", "schema", "schemas"))
	require.NoError(t, err)
	crds, err := set.CRDs()
	require.NoError(t, err)
	require.Len(t, crds, len(crdKinds))
	byName := map[string]map[string]any{}
	for _, c := range crds {
		byName[c["metadata"].(map[string]any)["name"].(string)] = c
	}
	vci := byName["virtualclusterinstances.management.service"]
	require.NotNil(t, vci)
	spec := vci["spec"].(map[string]any)
	assert.Equal(t, "Namespaced", spec["scope"])
	version := spec["versions"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"status": map[string]any{}}, version["subresources"])
	root := version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	props := root["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "object"}, props["metadata"])
	phase := props["status"].(map[string]any)["properties"].(map[string]any)["phase"].(map[string]any)
	assert.Equal(t, "string", phase["type"], "an enum without a type gets one")
	cluster := props["spec"].(map[string]any)["properties"].(map[string]any)["clusterRef"].(map[string]any)["properties"].(map[string]any)["cluster"].(map[string]any)
	assert.Equal(t, "string", cluster["type"], "a $ref into common.json is resolved")
	assert.NotEmpty(t, cluster["pattern"])

	ak := byName["accesskeys.management.service"]["spec"].(map[string]any)
	assert.Equal(t, "Cluster", ak["scope"])
	assert.NotContains(t, ak["versions"].([]any)[0].(map[string]any), "subresources", "AccessKey has no status")

	// Every node of every schema is structural: it has a type, and no keyword a CRD
	// refuses.
	for name, c := range byName {
		v := c["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		checkStructural(t, name, v["schema"].(map[string]any)["openAPIV3Schema"])
	}
}

func checkStructural(t *testing.T, path string, v any) {
	m, ok := v.(map[string]any)
	require.True(t, ok, path)
	assert.NotEmpty(t, m["type"], path)
	for k := range m {
		assert.False(t, dropped[k] && k != "additionalProperties", "%s has %s", path, k)
		assert.False(t, strings.HasPrefix(k, "$"), "%s has %s", path, k)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k, p := range props {
			checkStructural(t, path+"."+k, p)
		}
	}
	if items, ok := m["items"]; ok {
		checkStructural(t, path+"[]", items)
	}
	if ap, ok := m["additionalProperties"]; ok {
		checkStructural(t, path+"{}", ap)
	}
}

func TestStructuralRefusesWhatItCannotConvert(t *testing.T) {
	tests := []struct {
		name, schema, err string
	}{
		{"two types", `{"type":["string","integer"]}`, "one type"},
		{"missing ref", `{"$ref":"#/$defs/none"}`, "not found"},
		{"missing document", `{"$ref":"other.json#/$defs/x"}`, "no document"},
		{"untyped", `{"description":"x"}`, "no type"},
		{"mixed enum", `{"enum":["a",1]}`, "several types"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := schemaSet{"x.json": jsonBody([]byte(`{"$defs":{}}`)).(map[string]any)}
			node := map[string]any{}
			require.NoError(t, jsonUnmarshal(tt.schema, &node))
			_, err := set.structural("x.json", node, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestPlaceholdersAndSelection(t *testing.T) {
	c := &captured{rv: map[string]string{"mk": "41"}, uid: map[string]string{"mk": "u-9"}, cont: map[string]string{"p1": "tok"}}
	n := namesFor(7)
	assert.Equal(t, "/ns/p-kd-7/o-7?rv=41&uid=u-9&c=tok&p=kd-7", c.expand("/ns/{ns}/{n}?rv={rv:mk}&uid={uid:mk}&c={continue:p1}&p={p}", n))
	assert.Equal(t, "labelSelector=a+in+%28{p}%29", sel("labelSelector", "a in ({p})"), "braces stay for expansion")

	all := Cases()
	assert.GreaterOrEqual(t, len(all), 100)
	names := map[string]bool{}
	for _, cs := range all {
		assert.False(t, names[cs.Name], "duplicate case %s", cs.Name)
		names[cs.Name] = true
		labels := map[string]bool{}
		for _, s := range cs.Steps {
			assert.False(t, labels[s.Label], "%s: duplicate step label %s", cs.Name, s.Label)
			labels[s.Label] = true
		}
	}
	for _, area := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "smp", "discovery", "review", "apply", "core"} {
		found := false
		for _, cs := range all {
			found = found || cs.Area == area
		}
		assert.True(t, found, "area %s has no case", area)
	}

	one, err := selectCases(all, "1-status/merge-patch", false)
	require.NoError(t, err)
	require.Len(t, one, 1)
	slow, err := selectCases(all, "^4-bookmark/", false)
	require.NoError(t, err)
	for _, cs := range slow {
		assert.False(t, cs.Slow, "slow cases need -slow")
	}
	_, err = selectCases(all, "no-such-case", false)
	require.Error(t, err)
}

func TestMergeJSON(t *testing.T) {
	assert.Equal(t, `{"a":{"c":2},"d":[1]}`, mergeJSON(`{"a":{"b":1,"c":1},"e":1}`, `{"a":{"b":null,"c":2},"d":[1],"e":null}`))
	assert.Contains(t, vciBody("x", `{"spec":{"displayName":"Y"}}`), `"displayName":"Y"`)
}

func FuzzNormalize(f *testing.F) {
	f.Add([]byte(`{"kind":"Table","metadata":{"resourceVersion":"1"},"columnDefinitions":[{"format":"date"}],"rows":[{"cells":["1s"],"object":{"metadata":{"uid":"u"}}}]}`), "application/json")
	f.Add([]byte(`{"kind":"Status","apiVersion":"v1","details":{"causes":[{"field":"a"},7]}}`), "application/json")
	f.Add([]byte("kind: X\nmetadata:\n  managedFields: [{time: 1}, 3]\n"), "application/yaml")
	f.Add([]byte("k8s\x00\x0a\x04\x0a\x02v1"), "application/vnd.kubernetes.protobuf")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		r := &Response{Code: 200, Header: http.Header{"Content-Type": {ct}}, Body: body}
		a := NewNormalizer(false).View(r)
		b := NewNormalizer(false).View(r)
		assert.Empty(t, Diff("", a, b), "normalising is deterministic and a value equals itself")
	})
}

func TestReport(t *testing.T) {
	rs := []CaseResult{
		{Name: "a/same", Area: "1", Same: true},
		{Name: "a/bug", Area: "1", Differences: []Difference{
			{Path: "get.body.x[0]", Kube: "1", Ours: "2", Verdict: VerdictBug},
			{Path: "list.body.x[3]", Kube: "1", Ours: "2", Verdict: VerdictBug},
		}},
		{Name: "b/justified", Area: "2", Differences: []Difference{{Path: "p", Kube: "1", Ours: "2", Verdict: VerdictJustified, Exception: "e"}}},
		{Name: "b/error", Area: "2", Error: "boom"},
	}
	s := Summarize(rs)
	assert.Equal(t, 4, s.Cases)
	assert.Equal(t, 1, s.Same)
	assert.Equal(t, 3, s.Different)
	assert.Equal(t, 2, s.WithBugs, "an error counts as a bug")
	assert.Equal(t, 1, s.Justified)
	assert.Equal(t, [2]int{2, 1}, s.Areas["1"])
	assert.Equal(t, 2, s.Differences[VerdictBug])

	var b strings.Builder
	PrintText(&b, rs)
	out := b.String()
	assert.Contains(t, out, "4 cases, 1 same, 3 different (2 with a bug, 1 only with accepted exceptions)")
	assert.Contains(t, out, "1 distinct unjustified differences:")
	assert.Contains(t, out, "body.x[]")
	assert.Contains(t, out, "in 1 case(s): a/bug")
	assert.Contains(t, out, "justified [e] p")
	assert.NotContains(t, out, "DIFF a/same")

	b.Reset()
	require.NoError(t, PrintJSON(&b, rs))
	assert.Contains(t, b.String(), `"withBugs": 2`)
	assert.Contains(t, b.String(), `"id": "project-finalizer"`)
}
