package resource_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// genericScheme registers two generic kinds beside the built-in ones.
func genericScheme(t testing.TB) *resource.Scheme {
	s := resource.NewScheme()
	require.NoError(t, s.Register(resource.RawKind(resource.KindInfo{
		Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespaced: true})))
	require.NoError(t, s.Register(resource.RawKind(resource.KindInfo{
		Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true,
		HasStatus: true, Schema: json.RawMessage(`{"type":"object"}`)})))
	return s
}

func TestRawObject_round_trip_keeps_every_member(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"spec and status", `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a","labels":{"x":"y"}},"status":{"ready": true},"spec":{"size": 3}}`,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","creationTimestamp":null,"labels":{"x":"y"}},"spec":{"size":3},"status":{"ready":true}}`},
		{"members in key order, null kept", `{"metadata":{},"data":{"b":"2"},"binaryData":null,"immutable":true}`,
			`{"metadata":{"creationTimestamp":null},"binaryData":null,"data":{"b":"2"},"immutable":true}`},
		{"white space compacted, escaped keys decoded, the last of a repeated key kept",
			"{ \"spec\" : { \"a\" : [1, \"x y\"] } ,\n \"a\\u0062\":2, \"x\":1, \"x\":2, \"status\": {\"s\" : \"\\\" \"}}",
			`{"metadata":{"creationTimestamp":null},"ab":2,"spec":{"a":[1,"x y"]},"x":2,"status":{"s":"\" "}}`},
		{"no status member stays without one", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o resource.RawObject
			require.NoError(t, json.Unmarshal([]byte(tt.in), &o))
			got, err := json.Marshal(&o)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			// A second round trip changes nothing: the encoding is a fixed point.
			var again resource.RawObject
			require.NoError(t, json.Unmarshal(got, &again))
			assert.Equal(t, o, again)
		})
	}
}

func TestRawObject_decode_errors(t *testing.T) {
	for name, in := range map[string]string{
		"not an object":       `[1]`,
		"null":                `null`,
		"kind not a string":   `{"kind":1}`,
		"apiVersion a number": `{"apiVersion":2}`,
		"bad metadata":        `{"metadata":{"name":3}}`,
		"broken":              `{"a":`,
	} {
		t.Run(name, func(t *testing.T) {
			var o resource.RawObject
			assert.Error(t, json.Unmarshal([]byte(in), &o))
		})
	}
}

func TestRawObject_decode_replaces_what_it_held(t *testing.T) {
	o := resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"},
		Status: json.RawMessage(`{"a":1}`), Fields: map[string]json.RawMessage{"old": json.RawMessage(`1`)}}
	o.Labels = map[string]string{"stale": "yes"}
	require.NoError(t, json.Unmarshal([]byte(`{"metadata":{"name":"n"},"spec":{}}`), &o))
	assert.Nil(t, o.Status)
	assert.Nil(t, o.Labels)
	assert.Equal(t, map[string]json.RawMessage{"spec": json.RawMessage(`{}`)}, o.Fields)
	assert.Equal(t, "Widget", o.Kind, "TypeMeta is kept where data names no kind")
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"Other"}`), &o))
	assert.Equal(t, resource.TypeMeta{Kind: "Other", APIVersion: "example.com/v1"}, o.TypeMeta)
}

func TestRawObject_DeepCopyResource_shares_nothing(t *testing.T) {
	var o resource.RawObject
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a","labels":{"x":"y"},"finalizers":["f"]},"spec":{"a":[1]},"status":{"b":2}}`), &o))
	want, err := json.Marshal(&o)
	require.NoError(t, err)
	c := o.DeepCopyResource().(*resource.RawObject)
	assert.Equal(t, &o, c)
	c.Labels["x"] = "changed"
	c.Finalizers[0] = "g"
	c.Fields["spec"][1] = 'X'
	c.Status[1] = 'X'
	c.Fields["new"] = json.RawMessage(`1`)
	after, err := json.Marshal(&o)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(after))

	into := &resource.RawObject{Fields: map[string]json.RawMessage{"other": nil}}
	o.DeepCopyResourceInto(into)
	assert.Equal(t, &o, into)
}

func TestScheme_generic_kinds_are_found_by_TypeMeta(t *testing.T) {
	s := genericScheme(t)
	tests := []struct {
		name    string
		obj     resource.Object
		want    string
		wantErr string
	}{
		{"core ConfigMap", &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}}, "ConfigMap", ""},
		{"CRD kind", &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}}, "Widget", ""},
		{"typed kind unchanged", &resource.Project{}, "Project", ""},
		{"no TypeMeta", &resource.RawObject{}, "", "needs apiVersion and kind"},
		{"unknown kind", &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Gadget", APIVersion: "example.com/v1"}}, "", "not registered"},
		{"kind with a Go type", &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Project", APIVersion: resource.GroupVersion}}, "", "Go type of its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := s.KindOf(tt.obj)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, k.Kind)
		})
	}

	k, ok := s.KindFor("example.com/v1", "Widget")
	require.True(t, ok)
	assert.True(t, k.Generic())
	assert.JSONEq(t, `{"type":"object"}`, string(k.Schema))
	obj := k.New()
	assert.Equal(t, resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, *obj.GetTypeMeta())
	got, err := s.KindOf(obj)
	require.NoError(t, err)
	assert.Same(t, k, got)

	list := k.NewList()
	assert.Equal(t, "WidgetList", list.GetTypeMeta().Kind)
	got, err = s.KindOfList(list)
	require.NoError(t, err)
	assert.Same(t, k, got)
	_, err = s.KindOfList(&resource.RawList{TypeMeta: resource.TypeMeta{Kind: "GadgetList", APIVersion: "example.com/v1"}})
	require.ErrorContains(t, err, "not registered")
	_, err = s.KindOfList(&resource.RawList{})
	require.ErrorContains(t, err, "needs apiVersion and kind")
	p, _ := s.KindFor(resource.GroupVersion, resource.KindProject)
	assert.False(t, p.Generic())
}

func TestScheme_Register_generic_kind_errors(t *testing.T) {
	s := genericScheme(t)
	// The same GVK again, and another kind with the ConfigMap list kind.
	require.ErrorContains(t, s.Register(resource.RawKind(resource.KindInfo{
		Version: "v1", Kind: "ConfigMap", Resource: "configmaps2"})), "already registered")
	require.ErrorContains(t, s.Register(resource.RawKind(resource.KindInfo{
		Version: "v1", Kind: "Other", ListKind: "ConfigMapList", Resource: "others"})), "list kind")
	// RawObject items with a typed list, or the other way round.
	mixed := resource.RawKind(resource.KindInfo{Version: "v1", Kind: "Mixed", Resource: "mixeds"})
	mixed.NewList = func() resource.ObjectList { return &resource.ProjectList{} }
	require.ErrorContains(t, s.Register(mixed), "RawList")
	// A second generic kind is fine: the Go types are shared.
	require.NoError(t, s.Register(resource.RawKind(resource.KindInfo{Version: "v1", Kind: "Secret", Resource: "secrets", Namespaced: true})))
}

func FuzzRawObject(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"},"spec":{"a":[1,2]},"status":{}}`,
		`{"metadata":{"labels":{"a":"b"}},"data":null}`,
		`{"a":"\u00e9","b":1e3,"c":[{}]}`,
		`{}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o resource.RawObject
		err := json.Unmarshal(data, &o)
		// The reference: encoding/json's own decoding of the members.
		var members map[string]json.RawMessage
		refErr := json.Unmarshal(data, &members)
		if refErr != nil || members == nil {
			require.Error(t, err, "decoded what encoding/json refuses as an object: %q", data)
			return
		}
		if err != nil {
			return // apiVersion, kind or metadata of the wrong type
		}
		for k, v := range members {
			switch k {
			case "apiVersion", "kind", "metadata":
				continue
			}
			var want bytes.Buffer
			require.NoError(t, json.Compact(&want, v))
			got := o.Fields[k]
			if k == "status" {
				got = o.Status
			}
			assert.Equal(t, want.String(), string(got), "member %q", k)
		}
		b, err := json.Marshal(&o)
		if err != nil {
			return // metadata that encoding refuses (a year past 9999, say)
		}
		var again resource.RawObject
		require.NoError(t, json.Unmarshal(b, &again), "%s", b)
		b2, err := json.Marshal(&again)
		require.NoError(t, err)
		assert.Equal(t, string(b), string(b2), "the encoding is not a fixed point")
	})
}

// A kind registered at run time, without a Go type of its own.
func ExampleRawKind() {
	s := resource.NewScheme()
	_ = s.Register(resource.RawKind(resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget",
		Resource: "widgets", Namespaced: true, HasStatus: true}))
	k, _ := s.KindFor("example.com/v1", "Widget")
	w := k.New().(*resource.RawObject)
	_ = json.Unmarshal([]byte(`{"metadata":{"name":"w"},"spec":{"size":3},"status":{"ready":true}}`), w)
	found, _ := s.KindOf(w) // by TypeMeta: every generic kind shares *RawObject
	b, _ := json.Marshal(w)
	fmt.Println(found.Resource, found.Generic())
	fmt.Println(string(b))
	// Output:
	// widgets true
	// {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","creationTimestamp":null},"spec":{"size":3},"status":{"ready":true}}
}
