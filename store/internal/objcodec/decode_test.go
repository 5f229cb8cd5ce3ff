package objcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// decodeTypes are the types the decoder tests and fuzzes: every builtin kind's Go
// type and encTest, which uses every form the decoder knows.
func decodeTypes() []reflect.Type {
	var out []reflect.Type
	for _, k := range resource.NewScheme().Kinds() {
		out = append(out, reflect.TypeOf(k.New()))
	}
	return append(out, reflect.TypeFor[*encTest]())
}

// decodeAndCompare decodes data into a zero t with Decode and, when it answers
// true, requires that json.Unmarshal into a zero t accepts data and gives the same
// object. It returns Decode's answer.
func decodeAndCompare(t testing.TB, typ reflect.Type, data []byte) bool {
	got := reflect.New(typ.Elem()).Interface().(resource.Object)
	if !Decode(data, got) {
		return false
	}
	want := reflect.New(typ.Elem()).Interface()
	require.NoError(t, json.Unmarshal(data, want), "Decode accepted what json.Unmarshal refuses: %q", data)
	require.Equal(t, want, got, "decoding %q", data)
	return true
}

func fullMeta() resource.ObjectMeta {
	yes, no := true, false
	grace := int64(30)
	ts := resource.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	return resource.ObjectMeta{
		Name: "web", GenerateName: "we", Namespace: "p-one", UID: "0b8e7c1a-1111-4222-8333-944455556666",
		ResourceVersion: "42", Generation: 7,
		CreationTimestamp:          resource.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		DeletionTimestamp:          &ts,
		DeletionGracePeriodSeconds: &grace,
		Labels:                     map[string]string{"app": "web", "tier": "x<y>&z", "é": "🙂"},
		Annotations:                map[string]string{"description": strings.Repeat("d", 300), "quote": "a \"b\"\n"},
		OwnerReferences: []resource.OwnerReference{
			{APIVersion: "management.service/v1", Kind: "Project", Name: "one", UID: "u1", Controller: &yes, BlockOwnerDeletion: &no},
			{APIVersion: "management.service/v1", Kind: "Project", Name: "two", UID: "u2"},
		},
		Finalizers: []string{"management.service/cleanup", "other"},
		ManagedFields: []resource.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: "Apply", APIVersion: "management.service/v1", Time: &ts, FieldsType: "FieldsV1",
				FieldsV1: json.RawMessage(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{".":{}}}`)},
			{Manager: "ctrl", Operation: "Update", Subresource: "status", FieldsType: "FieldsV1", FieldsV1: json.RawMessage(`{}`)},
		},
	}
}

// fullValue sets every field of v that is zero to something non-zero: pointers to
// new values, two elements in lists, two entries in maps.
func fullValue(v reflect.Value, n int) {
	switch v.Type() {
	case timeType:
		if v.IsZero() {
			v.Set(reflect.ValueOf(resource.NewTime(time.Date(2026, 5, 6, 7, 8, 9+n, 0, time.UTC))))
		}
		return
	case rawMessageType:
		if v.IsZero() {
			v.SetBytes([]byte(fmt.Sprintf(`{"f:x%d":{}}`, n)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fullValue(v.Elem(), n+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fullValue(v.Field(i), n+i)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			for i := 0; i < 2; i++ {
				fullValue(v.Index(i), n+i)
			}
		}
	case reflect.Map:
		if v.IsNil() {
			m := reflect.MakeMap(v.Type())
			for i := 0; i < 2; i++ {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(fmt.Sprintf("k%d", i))
				e := reflect.New(v.Type().Elem()).Elem()
				fullValue(e, n+i)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.String:
		if v.String() == "" {
			v.SetString(fmt.Sprintf("s%d", n))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() == 0 {
			v.SetInt(int64(-n - 1))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() == 0 {
			v.SetUint(uint64(n + 1))
		}
	}
}

// TestDecode_every_kind decodes every builtin kind as a full object (metadata with
// ownerReferences, managedFields, a deletion timestamp; spec and status with every
// field set), with metadata alone, with empty maps and lists, and as a zero
// object, and compares with json.Unmarshal.
func TestDecode_every_kind(t *testing.T) {
	for _, k := range resource.NewScheme().Kinds() {
		typ := reflect.TypeOf(k.New())
		full := k.New()
		*full.GetObjectMeta() = fullMeta()
		fullValue(reflect.ValueOf(full).Elem(), 0)
		tm := full.GetTypeMeta()
		tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()

		metaOnly := k.New()
		*metaOnly.GetObjectMeta() = fullMeta()

		empty := k.New()
		m := empty.GetObjectMeta()
		m.Labels, m.Annotations, m.Finalizers = map[string]string{}, nil, []string{}

		rows := []struct {
			name string
			obj  resource.Object
		}{
			{"full", full},
			{"metadata only", metaOnly},
			{"empty maps and lists", empty},
			{"zero", k.New()},
		}
		for _, row := range rows {
			t.Run(k.Kind+"/"+row.name, func(t *testing.T) {
				data, err := json.Marshal(row.obj)
				require.NoError(t, err)
				require.True(t, decodeAndCompare(t, typ, data), "%s", data)
				// The same with whitespace everywhere json allows it.
				var indented bytes.Buffer
				require.NoError(t, json.Indent(&indented, data, " ", "\t"))
				require.True(t, decodeAndCompare(t, typ, []byte(" \r\n"+indented.String()+"\n ")))
			})
		}
		t.Run(k.Kind+"/full has every field", func(t *testing.T) {
			// The fixture must cover what it claims: a zero field in the full object
			// would test nothing.
			got := k.New()
			data, err := json.Marshal(full)
			require.NoError(t, err)
			require.True(t, Decode(data, got))
			assert.Equal(t, full, got)
			assert.NotNil(t, got.GetObjectMeta().DeletionTimestamp)
			assert.Len(t, got.GetObjectMeta().ManagedFields, 2)
		})
	}
}

// TestDecode_edge_cases checks what Decode answers for JSON texts at the edges of
// what json.Unmarshal does, and that what it accepts decodes as json.Unmarshal
// decodes it.
func TestDecode_edge_cases(t *testing.T) {
	vci := reflect.TypeFor[*resource.VirtualClusterInstance]()
	enc := reflect.TypeFor[*encTest]()
	tests := []struct {
		name string
		typ  reflect.Type
		data string
		ok   bool
	}{
		{"empty object", vci, `{}`, true},
		{"whitespace around", vci, " \t\r\n{ } \n", true},
		{"empty labels", vci, `{"metadata":{"labels":{}}}`, true},
		{"null labels", vci, `{"metadata":{"labels":null}}`, true},
		{"empty finalizers", vci, `{"metadata":{"finalizers":[]}}`, true},
		{"null finalizers", vci, `{"metadata":{"finalizers":null}}`, true},
		{"empty ownerReferences", vci, `{"metadata":{"ownerReferences":[]}}`, true},
		{"null struct", vci, `{"spec":null,"metadata":null}`, true},
		{"null creationTimestamp", vci, `{"metadata":{"creationTimestamp":null}}`, true},
		{"empty creationTimestamp", vci, `{"metadata":{"creationTimestamp":""}}`, true},
		{"empty deletionTimestamp", vci, `{"metadata":{"deletionTimestamp":""}}`, true},
		{"null deletionTimestamp", vci, `{"metadata":{"deletionTimestamp":null}}`, true},
		{"time with offset and fraction", vci, `{"metadata":{"deletionTimestamp":"2026-01-02T03:04:05.999+01:00"}}`, true},
		{"time at year 0", vci, `{"metadata":{"creationTimestamp":"0000-01-01T00:00:00Z"}}`, true},
		{"time before year 0 in UTC", vci, `{"metadata":{"creationTimestamp":"0000-01-01T00:00:00+01:00"}}`, false},
		{"time not RFC 3339", vci, `{"metadata":{"creationTimestamp":"2026-01-02"}}`, false},
		{"time a number", vci, `{"metadata":{"creationTimestamp":5}}`, false},
		{"time with an escape", vci, `{"metadata":{"creationTimestamp":"2026-01-02T03:04:05\u005a"}}`, false},
		{"null label value", vci, `{"metadata":{"labels":{"a":null}}}`, true},
		{"duplicate label", vci, `{"metadata":{"labels":{"a":"1","a":"2"}}}`, true},
		{"escaped label key", vci, `{"metadata":{"labels":{"\u0061\n":"1"}}}`, true},
		{"null fieldsV1", vci, `{"metadata":{"managedFields":[{"fieldsV1":null}]}}`, true},
		{"fieldsV1 with whitespace", vci, `{"metadata":{"managedFields":[{"fieldsV1": { "f:a" : [1, -2.5e3, true, null, "\u00e9"] } }]}}`, true},
		{"null pointers", vci, `{"metadata":{"ownerReferences":[{"controller":null,"blockOwnerDeletion":true}],"deletionGracePeriodSeconds":null}}`, true},
		{"null elements", vci, `{"metadata":{"finalizers":["a",null],"ownerReferences":[null]}}`, true},
		{"generation -0", vci, `{"metadata":{"generation":-0}}`, true},
		{"generation min int64", vci, `{"metadata":{"generation":-9223372036854775808}}`, true},
		{"generation max int64", vci, `{"metadata":{"generation":9223372036854775807}}`, true},
		{"generation overflow", vci, `{"metadata":{"generation":9223372036854775808}}`, false},
		{"generation huge", vci, `{"metadata":{"generation":123456789012345678901234567890}}`, false},
		{"generation with a fraction", vci, `{"metadata":{"generation":1.0}}`, false},
		{"generation with an exponent", vci, `{"metadata":{"generation":1e3}}`, false},
		{"generation a string", vci, `{"metadata":{"generation":"1"}}`, false},
		{"generation leading zero", vci, `{"metadata":{"generation":01}}`, false},
		{"name a number", vci, `{"metadata":{"name":1}}`, false},
		{"key in another case", vci, `{"Metadata":{}}`, false},
		{"field key in another case", vci, `{"metadata":{"NAME":"x"}}`, false},
		{"non-ASCII key that folds to ASCII", vci, `{"ſpec":{}}`, false},
		{"key with Kelvin sign", vci, `{"metadata":{"\u212a":1}}`, false},
		{"non-ASCII unknown key", vci, `{"metadataé":{}}`, false},
		{"escaped field key", vci, `{"metadata":{"na\u006de":"x"}}`, false},
		{"duplicate field", vci, `{"metadata":{"name":"a","name":"b"}}`, false},
		{"duplicate struct", vci, `{"metadata":{"name":"a"},"metadata":{"uid":"b"}}`, false},
		{"unknown keys", vci, `{"unknown":{"a":[1,2,{"b":null}]},"kind":"X","more":-0.5E+2}`, true},
		{"invalid unknown value", vci, `{"unknown":[1,2,]}`, false},
		{"invalid number", vci, `{"unknown":1.}`, false},
		{"trailing garbage", vci, `{"metadata":{}} x`, false},
		{"trailing brace", vci, `{"metadata":{}}}`, false},
		{"two values", vci, `{}{}`, false},
		{"truncated", vci, `{"kind":"x"`, false},
		{"trailing comma", vci, `{"kind":"x",}`, false},
		{"missing colon", vci, `{"kind" "x"}`, false},
		{"null object", vci, `null`, false},
		{"array", vci, `[]`, false},
		{"empty input", vci, ``, false},
		{"escapes", vci, `{"kind":"a\u003cb\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, true},
		{"lone high surrogate", vci, `{"kind":"\ud83d"}`, false},
		{"lone low surrogate", vci, `{"kind":"\ude00x"}`, false},
		{"bad escape", vci, `{"kind":"\x"}`, false},
		{"invalid UTF-8", vci, "{\"kind\":\"\xff\"}", false},
		{"valid UTF-8", vci, `{"kind":"é🙂"}`, true},
		{"control character", vci, "{\"kind\":\"a\nb\"}", false},
		{"bad literal", vci, `{"metadata":{"ownerReferences":[{"controller":tru}]}}`, false},
		{"literal run on", vci, `{"metadata":{"ownerReferences":[{"controller":truex}]}}`, false},
		{"uint8 max", enc, `{"u":255}`, true},
		{"uint8 overflow", enc, `{"u":65536}`, false},
		{"uint16 -0", enc, `{"u":-0}`, false},
		{"int32 range", enc, `{"pi":-2147483648}`, true},
		{"int32 overflow", enc, `{"pi":2147483648}`, false},
		{"named map", enc, `{"namedMap":{"a":1,"b":null,"a":2}}`, true},
		{"named map overflow", enc, `{"namedMap":{"a":256}}`, false},
		{"counts", enc, `{"counts":{}}`, true},
		{"null raw", enc, `{"raw":null}`, true},
		{"named strings", enc, `{"names":["a","b"],"named":"c"}`, true},
		{"times", enc, `{"times":[null,"","2026-01-02T03:04:05Z"]}`, true},
		{"embedded and untagged", enc, `{"b":true,"Untagged":"x","with-tag!":3}`, true},
		{"untagged in lower case", enc, `{"untagged":"x"}`, false},
		{"deep unknown", vci, `{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, false},
		{"nested unknown", vci, `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, true},
		{"bytes for a struct", vci, `{"spec":"x"}`, false},
		{"object for a list", vci, `{"metadata":{"finalizers":{}}}`, false},
		{"list for a map", vci, `{"metadata":{"labels":[]}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, decodeAndCompare(t, tt.typ, []byte(tt.data)))
		})
	}
}

// TestDecode_random_objects decodes the encodings of random objects of every kind
// and of encTest, and compares with json.Unmarshal.
func TestDecode_random_objects(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	encoded, decoded := 0, 0
	for _, typ := range decodeTypes() {
		require.True(t, Decodable(typ), typ.String())
		for i := 0; i < 2000; i++ {
			obj := reflect.New(typ.Elem())
			objcodectest.Fill(r, obj.Elem(), 0)
			data, err := json.Marshal(obj.Interface())
			if err != nil {
				continue
			}
			encoded++
			if decodeAndCompare(t, typ, data) {
				decoded++
			}
		}
	}
	// What json.Marshal writes is always plain enough for the decoder.
	assert.Greater(t, encoded, 9000)
	assert.Equal(t, encoded, decoded, "every encoding decodes")
}

// TestDecode_refuses_what_it_does_not_cover: RawObject and types outside the
// encoder's coverage answer false, and leave the caller to json.Unmarshal.
// The decoded strings share a few arena chunks instead of an allocation each, and
// none of them refers to the input: overwriting it after Decode changes nothing.
func TestDecode_strings_share_chunks_and_not_the_input(t *testing.T) {
	labels := map[string]string{}
	for i := range 100 {
		labels[fmt.Sprintf("k%02d", i)] = fmt.Sprintf("v%02d", i)
	}
	long := strings.Repeat("long description ", 20) // over arenaMax: its own allocation
	want := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Name: "n", Namespace: "ns", Labels: labels, Annotations: map[string]string{"a": long, "esc": "tab\there \u00e9"}}}
	data, err := json.Marshal(want)
	require.NoError(t, err)

	got := &resource.VirtualClusterInstance{}
	require.True(t, Decode(data, got))
	for i := range data {
		data[i] = 'x'
	}
	want.TypeMeta = got.TypeMeta
	assert.Equal(t, want, got)

	data, err = json.Marshal(want)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		if !Decode(data, &resource.VirtualClusterInstance{}) {
			t.Fatal("Decode refused")
		}
	})
	// 200 label strings of 3 bytes fill 3 chunks; the map, the object, the long
	// string and the escaped one take a few more. One allocation per string would
	// be over 200.
	assert.Less(t, allocs, 30.0)
}

func TestDecode_refuses_what_it_does_not_cover(t *testing.T) {
	type withFloat struct {
		resource.TypeMeta
		Meta resource.ObjectMeta `json:"metadata"`
		F    float64             `json:"f"`
	}
	assert.False(t, Decodable(reflect.TypeFor[*resource.RawObject]()))
	assert.False(t, Decode([]byte(`{}`), &resource.RawObject{}))
	assert.False(t, Decodable(reflect.TypeFor[*withFloat]()))
	var nilObj *resource.Project
	assert.False(t, Decode([]byte(`{}`), nilObj))
}

// FuzzDecode mutates encodings of every kind and edge cases: whenever Decode
// answers true, json.Unmarshal must accept the input and give the same object.
func FuzzDecode(f *testing.F) {
	types := decodeTypes()
	r := rand.New(rand.NewSource(7))
	for i, typ := range types {
		for j := 0; j < 4; j++ {
			obj := reflect.New(typ.Elem())
			objcodectest.Fill(r, obj.Elem(), 0)
			if data, err := json.Marshal(obj.Interface()); err == nil {
				f.Add(uint8(i), data)
			}
		}
		full := reflect.New(typ.Elem())
		if o, ok := full.Interface().(resource.Object); ok {
			*o.GetObjectMeta() = fullMeta()
		}
		fullValue(full.Elem(), 0)
		if data, err := json.Marshal(full.Interface()); err == nil {
			f.Add(uint8(i), data)
		}
	}
	for _, s := range []string{
		`{"metadata":{"labels":{},"finalizers":[],"creationTimestamp":"","deletionTimestamp":""}}`,
		`{"metadata":{"generation":-9223372036854775808,"labels":{"a":null,"a":"b"}}}`,
		`{"metadata":{"managedFields":[{"fieldsV1": {"f:a" : [1, -2.5e3]} ,"time":null}]}}`,
		`{"kind":"a\u003cb\ud83d\ude00","unknown":[{"x":null}]}`,
		`{"u":255,"pi":-1,"namedMap":{"a":1},"raw":null,"times":[null,""],"names":["a"]}`,
	} {
		for i := range types {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		decodeAndCompare(t, types[int(which)%len(types)], data)
	})
}

// benchStored is the stored form of object i of examples/compare and
// store/bench_test.go, a ~1 KB VirtualClusterInstance with 5 labels, with the
// metadata the store adds.
func benchStored(tb testing.TB, i int) []byte {
	ts := resource.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	o := &resource.VirtualClusterInstance{
		TypeMeta: resource.TypeMeta{Kind: "VirtualClusterInstance", APIVersion: "management.service/v1"},
		ObjectMeta: resource.ObjectMeta{
			Namespace: fmt.Sprintf("p-bench-%d", i%100), Name: fmt.Sprintf("obj-%06d", i),
			UID:             fmt.Sprintf("0b8e7c1a-1111-4222-8333-%012d", i),
			ResourceVersion: fmt.Sprint(1000 + i), Generation: 1, CreationTimestamp: ts,
			Labels: map[string]string{"app": "bench", "tier": "backend", "team": fmt.Sprintf("team-%d", i%10),
				"one-in-hundred": fmt.Sprint(i%100 == 0), "management.service/project": "bench"},
			Annotations: map[string]string{"description": strings.Repeat("x", 400)},
			ManagedFields: []resource.ManagedFieldsEntry{{Manager: "bench", Operation: "Update",
				APIVersion: "management.service/v1", Time: &ts, FieldsType: "FieldsV1",
				FieldsV1: json.RawMessage(`{"f:metadata":{"f:annotations":{".":{},"f:description":{}},"f:labels":{".":{},"f:app":{},"f:management.service/project":{},"f:one-in-hundred":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:clusterRef":{".":{},"f:cluster":{},"f:namespace":{},"f:virtualCluster":{}},"f:description":{},"f:displayName":{},"f:owner":{".":{},"f:user":{}},"f:parameters":{},"f:templateRef":{".":{},"f:name":{},"f:version":{}}}}`)}},
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: fmt.Sprintf("Instance %d", i), Description: strings.Repeat("d", 200),
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"},
			TemplateRef: &resource.TemplateRef{Name: "default", Version: "1.0.0"},
			Parameters:  "replicas: 1\n",
		},
	}
	data, err := json.Marshal(o)
	require.NoError(tb, err)
	return data
}

// BenchmarkDecode compares Decode with json.Unmarshal on stored
// VirtualClusterInstances, 10,000 different ones in turn (names, uids and some
// labels differ, as in a list), and with a copy of the decoded object.
func BenchmarkDecode(b *testing.B) {
	objs := make([][]byte, 10000)
	for i := range objs {
		objs[i] = benchStored(b, i)
	}
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(objs[0])))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if !Decode(objs[i%len(objs)], &resource.VirtualClusterInstance{}) {
				require.Fail(b, "not decoded")
			}
			i++
		}
	})
	// What a list pays for an item the object cache holds instead: a copy of the
	// decoded object.
	b.Run("DeepCopy", func(b *testing.B) {
		decoded := make([]*resource.VirtualClusterInstance, len(objs))
		for i := range objs {
			decoded[i] = &resource.VirtualClusterInstance{}
			require.True(b, Decode(objs[i], decoded[i]))
		}
		b.SetBytes(int64(len(objs[0])))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			DeepCopyInto(&resource.VirtualClusterInstance{}, decoded[i%len(decoded)])
			i++
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(objs[0])))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := json.Unmarshal(objs[i%len(objs)], &resource.VirtualClusterInstance{}); err != nil {
				require.NoError(b, err)
			}
			i++
		}
	})
}

// parseUTCSeconds gives what time.Parse gives, in UTC, for the form it takes, and
// leaves everything else to time.Parse.
func TestParseUTCSeconds(t *testing.T) {
	for _, s := range []string{
		"2026-11-29T10:41:51Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-02-29T12:00:00Z",
		"2023-02-29T12:00:00Z", "2023-04-31T00:00:00Z", "2023-13-01T00:00:00Z", "2023-00-01T00:00:00Z",
		"2023-01-00T00:00:00Z", "2023-01-01T24:00:00Z", "2023-01-01T00:60:00Z", "2023-01-01T00:00:60Z",
		"2023-01-01T00:00:00z", "2023-01-01 00:00:00Z", "2023-01-01T00:00:00.5Z", "2023-01-01T00:00:00+01:00",
		"2023-1-01T00:00:00Z", "202a-01-01T00:00:00Z", "2023-01-01T00:00:0Z", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
	} {
		got, ok := parseUTCSeconds([]byte(s))
		want, err := time.Parse(time.RFC3339, s)
		if ok {
			require.NoError(t, err, s)
			assert.Equal(t, want.UTC(), got, s)
			assert.True(t, reflect.DeepEqual(want.UTC(), got), "%s: the same representation", s)
		} else if len(s) == 20 && s[19] == 'Z' && !strings.ContainsAny(s, " z.") && s != "2023-1-01T00:00:00Z" && s != "202a-01-01T00:00:00Z" && s != "2023-01-01T00:00:0Z" {
			assert.Error(t, err, "%s: refused by the fast path, so time.Parse must refuse it too", s)
		}
	}
}

func FuzzParseUTCSeconds(f *testing.F) {
	f.Add("2026-11-29T10:41:51Z")
	f.Add("2024-02-29T23:59:59Z")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseUTCSeconds([]byte(s))
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err, s)
		require.True(t, reflect.DeepEqual(want.UTC(), got), "%s: %v vs %v", s, want.UTC(), got)
	})
}
