package crclient

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/resource"
)

type mapInner struct {
	Name  string            `json:"name"`
	Count int               `json:"count,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

type mapInner2 struct {
	Name  string            `json:"name,omitempty"`
	Count int64             `json:"count"`
	Tags  map[string]string `json:"tags"`
	Extra string            `json:"extra"`
}

// mapSrc and mapDst differ in every way the mapper takes.
type mapSrc struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	S                 string                `json:"s"`
	P                 *string               `json:"p,omitempty"`
	I                 int32                 // named by its Go name
	Narrow            int64                 `json:"narrow"`
	U                 uint16                `json:"u"`
	B                 bool                  `json:"b,omitempty"`
	L                 []string              `json:"l,omitempty"`
	LN                []string              `json:"ln"`
	M                 map[string]string     `json:"m,omitempty"`
	MP                map[string]*mapInner  `json:"mp"`
	T                 metav1.Time           `json:"t"`
	TP                *metav1.Time          `json:"tp,omitempty"`
	RT                resource.Time         `json:"rt"`
	In                mapInner              `json:"in"`
	InP               *mapInner             `json:"inp"`
	PV                *mapInner             `json:"pv"`
	LP                []*mapInner           `json:"lp"`
	Dropped           int                   `json:"dropped"`
	DroppedT          metav1.Time           `json:"droppedT"`
	Nested            map[string][]mapInner `json:"nested,omitempty"`
	unexported        string
}

type mapDst struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	S                   string  `json:"s"`
	P                   *string `json:"p"`
	I                   int64
	Narrow              int8                   `json:"narrow"`
	U                   uint32                 `json:"u"`
	B                   bool                   `json:"b"`
	L                   []string               `json:"l"`
	LN                  []string               `json:"ln"`
	M                   map[string]string      `json:"m"`
	MP                  map[string]mapInner2   `json:"mp"`
	T                   *resource.Time         `json:"t,omitempty"`
	TP                  metav1.Time            `json:"tp"`
	RT                  *metav1.Time           `json:"rt"`
	In                  mapInner2              `json:"in"`
	InP                 *mapInner2             `json:"inp"`
	PV                  mapInner2              `json:"pv"`
	LP                  []*mapInner2           `json:"lp"`
	Nested              map[string][]mapInner2 `json:"nested"`
	OnlyHere            string                 `json:"onlyHere"`
}

// mappedAsJSON maps src into a new value of dst's type and checks that, when the
// mapper answers, the result is exactly what decoding src's encoding gives.
func mappedAsJSON(t *testing.T, dst, src any) bool {
	t.Helper()
	want := reflect.New(reflect.TypeOf(dst).Elem()).Interface()
	data, encErr := json.Marshal(src)
	got := reflect.New(reflect.TypeOf(dst).Elem()).Interface()
	if !mapObject(got, src) {
		return false
	}
	require.NoError(t, encErr, "the mapper took a value json.Marshal refuses")
	require.NoError(t, json.Unmarshal(data, want), "the mapper took a value json.Unmarshal refuses")
	// The metadata is the caller's to convert.
	reflect.ValueOf(want).Elem().FieldByName("ObjectMeta").SetZero()
	reflect.ValueOf(want).Elem().FieldByName("TypeMeta").SetZero()
	assert.Equal(t, want, got)
	return true
}

func fullSrc() *mapSrc {
	p := "p"
	ts := time.Date(2024, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))
	return &mapSrc{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		S:          "s <&> \u2028", P: &p, I: -5, Narrow: 127, U: 65535, B: true,
		L: []string{"a"}, LN: []string{}, M: map[string]string{"k": "v"},
		MP: map[string]*mapInner{"a": {Name: "a", Count: 2, Tags: map[string]string{}}, "nil": nil},
		T:  metav1.NewTime(ts), TP: &metav1.Time{Time: ts.Add(time.Hour)}, RT: resource.Time{Time: ts},
		In: mapInner{Name: "in"}, InP: &mapInner{Tags: map[string]string{"x": ""}}, PV: &mapInner{Name: "pv"},
		LP: []*mapInner{nil, {Name: "e"}}, Dropped: 3, DroppedT: metav1.NewTime(ts),
		Nested: map[string][]mapInner{"e": {}, "n": nil, "x": {{Name: "y"}}},
	}
}

func TestMapObject_is_the_JSON_round_trip(t *testing.T) {
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		change func(*mapSrc)
		mapped bool
	}{
		{"every field", func(*mapSrc) {}, true},
		{"zero", func(s *mapSrc) { *s = mapSrc{} }, true},
		{"empty lists and maps", func(s *mapSrc) {
			s.L, s.M, s.MP, s.LP, s.Nested = []string{}, map[string]string{}, map[string]*mapInner{}, []*mapInner{}, map[string][]mapInner{}
		}, true},
		{"zero time behind a pointer", func(s *mapSrc) { s.TP = &metav1.Time{} }, true},
		{"time before 1970 with nanoseconds", func(s *mapSrc) {
			s.T = metav1.NewTime(time.Date(1, 1, 1, 0, 0, 0, 5, time.UTC))
			s.RT = resource.Time{Time: time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC)}
		}, true},
		{"invalid UTF-8 in a string", func(s *mapSrc) { s.S = "a\xffb" }, false},
		{"invalid UTF-8 in a map key", func(s *mapSrc) { s.M = map[string]string{"\xff": "v"} }, false},
		{"invalid UTF-8 deep down", func(s *mapSrc) { s.LP[1].Tags = map[string]string{"a": "\xc3"} }, false},
		{"out of the target's range", func(s *mapSrc) { s.Narrow = 128 }, false},
		{"resource.Time after 9999", func(s *mapSrc) { s.RT = resource.Time{Time: year10000} }, false},
		{"metav1.Time after 9999", func(s *mapSrc) { s.T = metav1.NewTime(year10000) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fullSrc()
			tt.change(src)
			assert.Equal(t, tt.mapped, mappedAsJSON(t, &mapDst{}, src))
		})
	}
}

func TestMapObject_both_ways_between_a_CRD_type_and_the_store_kind(t *testing.T) {
	ts := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	user := &userInstance{
		Spec: userInstanceSpec{DisplayName: "d", Owner: &userOwner{User: "alice"}, ClusterRef: userClusterRef{Cluster: "c"},
			TemplateRef: &userTemplateRef{Name: "t"}, Parameters: "p"},
		Status: userInstanceStatus{Phase: "Ready", Conditions: []metav1.Condition{
			{Type: "Ready", Status: "True", LastTransitionTime: ts, ObservedGeneration: 4, Reason: "R"},
			{Type: "Other"},
		}},
	}
	require.True(t, mappedAsJSON(t, &resource.VirtualClusterInstance{}, user))
	ours := &resource.VirtualClusterInstance{}
	require.True(t, mapObject(ours, user))
	require.True(t, mappedAsJSON(t, &userInstance{}, ours))
	require.True(t, mappedAsJSON(t, &userInstance{}, &resource.VirtualClusterInstance{}))
}

type userInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              userInstanceSpec   `json:"spec,omitempty"`
	Status            userInstanceStatus `json:"status,omitempty"`
}

type userInstanceSpec struct {
	DisplayName string           `json:"displayName,omitempty"`
	Description string           `json:"description,omitempty"`
	Owner       *userOwner       `json:"owner,omitempty"`
	ClusterRef  userClusterRef   `json:"clusterRef,omitempty"`
	TemplateRef *userTemplateRef `json:"templateRef,omitempty"`
	Parameters  string           `json:"parameters,omitempty"`
}

type userOwner struct {
	User string `json:"user,omitempty"`
	Team string `json:"team,omitempty"`
}

type userClusterRef struct {
	Cluster        string `json:"cluster,omitempty"`
	Namespace      string `json:"namespace,omitempty"`
	VirtualCluster string `json:"virtualCluster,omitempty"`
}

type userTemplateRef struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type userInstanceStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Reason     string             `json:"reason,omitempty"`
	Message    string             `json:"message,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

type floatField struct {
	F float64 `json:"f"`
}
type foldField struct {
	F string `json:"F"`
}
type lowerField struct {
	F string `json:"f"`
}
type quotedField struct {
	F int `json:"f,string"`
}
type bytesField struct {
	F []byte `json:"f"`
}
type recursive struct {
	Next *recursive `json:"next"`
}
type embedded struct {
	lowerField
}
type methodField struct {
	F json.RawMessage `json:"f"`
}
type droppedFloat struct {
	G float64 `json:"g"`
}
type stringInt struct {
	F string `json:"f"`
}
type intString struct {
	F int `json:"f"`
}

func TestMapperFor_refuses_what_it_cannot_prove(t *testing.T) {
	tests := []struct {
		name     string
		src, dst any
	}{
		{"floats", floatField{}, floatField{}},
		{"a name json.Unmarshal matches case-insensitively", foldField{}, lowerField{}},
		{"the string option", quotedField{}, quotedField{}},
		{"[]byte", bytesField{}, bytesField{}},
		{"a recursive type", recursive{}, recursive{}},
		{"an embedded struct", embedded{}, lowerField{}},
		{"JSON methods", methodField{}, methodField{}},
		{"a dropped field json.Marshal may refuse", droppedFloat{}, lowerField{}},
		{"a string into an int", stringInt{}, intString{}},
		{"an int into a string", intString{}, stringInt{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Nil(t, mapperFor(reflect.TypeOf(tt.src), reflect.TypeOf(tt.dst)))
		})
	}
	assert.NotNil(t, mapperFor(reflect.TypeOf(lowerField{}), reflect.TypeOf(lowerField{})))
}

func FuzzMapObject(f *testing.F) {
	f.Add("s", "k", int64(5), int64(1700000000), int64(123), true, 3)
	f.Add("\xff", "", int64(math.MaxInt64), int64(-62135596800), int64(0), false, 0)
	f.Add("<>", "\u2028", int64(-129), int64(253402300800), int64(999999999), true, -1)
	f.Fuzz(func(t *testing.T, s, k string, i, sec, nsec int64, b bool, n int) {
		tm := time.Unix(sec, nsec)
		src := fullSrc()
		src.S, src.B, src.Narrow, src.I = s, b, i, int32(i)
		src.M = map[string]string{k: s}
		src.T, src.RT = metav1.NewTime(tm), resource.Time{Time: tm.In(time.FixedZone("z", int(i%50000)))}
		if n >= 0 {
			src.L = make([]string, n%4)
		} else {
			src.L = nil
		}
		src.LP[1].Name = k
		mappedAsJSON(t, &mapDst{}, src)
		user := &userInstance{Spec: userInstanceSpec{DisplayName: s, Parameters: k},
			Status: userInstanceStatus{Conditions: []metav1.Condition{{Type: k, LastTransitionTime: metav1.NewTime(tm)}}}}
		mappedAsJSON(t, &resource.VirtualClusterInstance{}, user)
		ours := &resource.VirtualClusterInstance{Spec: resource.VirtualClusterInstanceSpec{Description: s},
			Status: resource.VirtualClusterInstanceStatus{Conditions: []resource.Condition{{Type: k, LastTransitionTime: &resource.Time{Time: tm}}}}}
		mappedAsJSON(t, &userInstance{}, ours)
	})
}

func (u *userInstance) DeepCopyObject() runtime.Object {
	out := *u
	u.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if u.Spec.Owner != nil {
		v := *u.Spec.Owner
		out.Spec.Owner = &v
	}
	if u.Spec.TemplateRef != nil {
		v := *u.Spec.TemplateRef
		out.Spec.TemplateRef = &v
	}
	if u.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(u.Status.Conditions))
		for i := range u.Status.Conditions {
			u.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return &out
}

type userInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []userInstance `json:"items"`
}

func (l *userInstanceList) DeepCopyObject() runtime.Object {
	out := &userInstanceList{}
	data, _ := json.Marshal(l)
	_ = json.Unmarshal(data, out)
	return out
}

// TestMapper_writes_answer_as_the_JSON_path runs the same writes and reads of a CRD
// type that mirrors a kind of the store's through the client with the mappers on
// and off: every answer is the same.
func TestMapper_writes_answer_as_the_JSON_path(t *testing.T) {
	run := func(off bool) []*userInstance {
		mappersOff.Store(off)
		defer mappersOff.Store(false)
		gv := schema.GroupVersion{Group: "management.service", Version: "v1"}
		s := runtime.NewScheme()
		s.AddKnownTypeWithName(gv.WithKind("VirtualClusterInstance"), &userInstance{})
		s.AddKnownTypeWithName(gv.WithKind("VirtualClusterInstanceList"), &userInstanceList{})
		metav1.AddToGroupVersion(s, gv)
		c, err := NewClientBuilder().WithScheme(s).WithStatusSubresource(&userInstance{}).BuildClient()
		require.NoError(t, err)
		defer c.Close()
		ctx := context.Background()
		var out []*userInstance
		ts := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 7200)))
		obj := &userInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"l": "v"}},
			Spec: userInstanceSpec{DisplayName: "d", Owner: &userOwner{User: "alice"}, ClusterRef: userClusterRef{Cluster: "c"},
				TemplateRef: &userTemplateRef{Name: "t"}},
			Status: userInstanceStatus{Phase: "Ready", Conditions: []metav1.Condition{{Type: "Ready", Status: "True", LastTransitionTime: ts, ObservedGeneration: 3}}}}
		require.NoError(t, c.Create(ctx, obj))
		out = append(out, obj.DeepCopyObject().(*userInstance))
		obj.Status = userInstanceStatus{Phase: "Ready", Conditions: []metav1.Condition{{Type: "Ready", Status: "True", LastTransitionTime: ts}}}
		require.NoError(t, c.Status().Update(ctx, obj))
		out = append(out, obj.DeepCopyObject().(*userInstance))
		obj.Spec.Description = "x"
		require.NoError(t, c.Update(ctx, obj))
		out = append(out, obj.DeepCopyObject().(*userInstance))
		got := &userInstance{}
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(obj), got))
		out = append(out, got)
		for _, o := range out {
			o.UID, o.CreationTimestamp = "", metav1.Time{}
			for i := range o.ManagedFields {
				o.ManagedFields[i].Time = nil
			}
		}
		return out
	}
	mapped, viaJSON := run(false), run(true)
	assert.Equal(t, viaJSON, mapped)
	assert.Equal(t, "x", mapped[3].Spec.Description)
	assert.Len(t, mapped[3].Status.Conditions, 1)
	assert.Empty(t, mapped[0].Status.Conditions, "the status subresource drops status on create")
}
