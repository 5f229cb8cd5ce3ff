package objcodec

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

var rawKind = resource.RawKind(resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"})

// checkRaw checks that Copy gives exactly a JSON round trip of r and that Encode,
// when it answers, gives exactly json.Marshal's bytes.
func checkRaw(t *testing.T, r *resource.RawObject) {
	t.Helper()
	want, wantErr := jsonCopy(&rawKind, r)
	got, err := Copy(&rawKind, r, false)
	if wantErr != nil {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got, "Copy differs from the round trip")
	before := r.DeepCopyResource()
	shallow, err := Copy(&rawKind, r, true)
	require.NoError(t, err)
	assert.Equal(t, want, shallow, "a shallow Copy differs from the round trip")
	assert.Equal(t, before, r, "a shallow Copy changed its source")
	for _, o := range []resource.Object{r, got} {
		b, ok := Encode(o)
		if !ok {
			continue
		}
		jb, err := json.Marshal(o)
		require.NoError(t, err)
		assert.Equal(t, string(jb), string(b))
	}
}

func TestRawObject_Copy_and_Encode_agree_with_encoding_json(t *testing.T) {
	tests := map[string]string{
		"plain":           `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"a":"b"}},"spec":{"size":1},"status":{"ok":true}}`,
		"html characters": `{"metadata":{"annotations":{"a":"<&>"}},"spec":{"s":"<b>&amp;</b>"}}`,
		"escaped key":     `{"metadata":{},"a\u003cb":1,"\u00e9":2}`,
		"null member":     `{"metadata":{},"spec":null,"data":{}}`,
		"white space":     `{ "metadata" : { "name" : "x" } , "spec" : { "a" : [ 1 , 2 ] } }`,
		"times":           `{"metadata":{"creationTimestamp":"2026-01-02T03:04:05.678+02:00"}}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			r := &resource.RawObject{}
			require.NoError(t, json.Unmarshal([]byte(in), r))
			checkRaw(t, r)
		})
	}
	t.Run("values set by hand", func(t *testing.T) {
		for _, fields := range []map[string]json.RawMessage{
			{"spec": json.RawMessage(`{ "a" : 1 }`)},
			{"spec": json.RawMessage(`"<"`)},
			{"spec": nil},
			{"spec": json.RawMessage(`{`)},
			{"status": json.RawMessage(`1`)},
			{"\xff": json.RawMessage(`1`)},
			{},
		} {
			checkRaw(t, &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, Fields: fields})
		}
		checkRaw(t, &resource.RawObject{TypeMeta: resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, Status: json.RawMessage{}})
	})
	t.Run("random metadata", func(t *testing.T) {
		rnd := rand.New(rand.NewSource(23))
		for range 500 {
			r := &resource.RawObject{Fields: map[string]json.RawMessage{"spec": json.RawMessage(`{"a":"b"}`)}}
			objcodectest.Fill(rnd, reflect.ValueOf(&r.ObjectMeta).Elem(), 0)
			checkRaw(t, r)
		}
	})
}

func FuzzRawObjectCopy(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"a":"b"}},"data":{"k":"<v>"}}`))
	f.Add([]byte(`{"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z","managedFields":[{"fieldsV1":{"f:a":{}}}]},"spec":[1,2.50,"\u2028"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &resource.RawObject{}
		if json.Unmarshal(data, r) != nil {
			return
		}
		checkRaw(t, r)
	})
}
