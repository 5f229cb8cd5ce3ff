package crclient

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

var rawWidget = resource.RawKind(resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"})

// checkSplit checks that splitMembers, when it answers, fills a new generic object
// exactly as its UnmarshalJSON does.
func checkSplit(t *testing.T, data []byte) (split bool) {
	t.Helper()
	want := rawWidget.New().(*resource.RawObject)
	wantErr := want.UnmarshalJSON(data)
	got := rawWidget.New().(*resource.RawObject)
	if !splitMembers(got, data) {
		assert.Equal(t, rawWidget.New(), got, "splitMembers changed the object it refused")
		return false
	}
	require.NoError(t, wantErr)
	// splitMembers ignores apiVersion, kind and the empty metadata: toStore sets them.
	want.TypeMeta, want.ObjectMeta = got.TypeMeta, got.ObjectMeta
	assert.Equal(t, want, got)
	return true
}

func TestSplitMembers_agrees_with_UnmarshalJSON(t *testing.T) {
	tests := []struct {
		data  string
		split bool
	}{
		{`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":null},"spec":{"size":1},"status":{}}`, true},
		{`{"metadata":{},"spec":{"tags":{"a":"<b>"}},"data":[1,2],"status":null}`, true},
		{`{"sp\u0065c":1,"z":"x","a":true}`, true},
		{`{"spec":1,"spec":2}`, true},
		{`{}`, true},
		{`{"metadata":{"name":"x"},"spec":{}}`, false},
		{`{"kind":1,"spec":{}}`, false},
		{`{"apiVersion":null}`, false},
		{`[1]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			assert.Equal(t, tt.split, checkSplit(t, []byte(tt.data)))
		})
	}
}

func FuzzSplitMembers(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":null},"spec":{"size":1},"status":{}}`))
	f.Add([]byte(`{"a\"b":{"c":[1,{"d":"}"}]},"status":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// splitMembers is only given what json.Marshal writes.
		var v map[string]json.RawMessage
		if json.Unmarshal(data, &v) != nil {
			return
		}
		enc, err := json.Marshal(v)
		require.NoError(t, err)
		checkSplit(t, enc)
	})
}

// checkMembersJSON checks that membersJSON writes what MarshalJSON writes but the
// metadata.
func checkMembersJSON(t *testing.T, r *resource.RawObject) {
	t.Helper()
	full, err := r.MarshalJSON()
	require.NoError(t, err)
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(full, &want))
	delete(want, "metadata")
	got := membersJSON(r)
	require.True(t, json.Valid(got), string(got))
	var gotMembers map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got, &gotMembers))
	assert.Equal(t, want, gotMembers)
}

func TestMembersJSON_is_MarshalJSON_without_metadata(t *testing.T) {
	for _, r := range []*resource.RawObject{
		{},
		{TypeMeta: resource.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}},
		{Fields: map[string]json.RawMessage{"spec": json.RawMessage(`{"a":1}`), "a<b": json.RawMessage(`"x"`), "empty": nil}},
		{TypeMeta: resource.TypeMeta{Kind: `W"`}, Status: json.RawMessage(`{"ready":true}`), Fields: map[string]json.RawMessage{"z": json.RawMessage(`[]`)}},
	} {
		checkMembersJSON(t, r)
	}
}

func FuzzMembersJSON(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":1},"status":{"a":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &resource.RawObject{}
		if r.UnmarshalJSON(data) != nil {
			return
		}
		r.ObjectMeta = resource.ObjectMeta{}
		checkMembersJSON(t, r)
	})
}
