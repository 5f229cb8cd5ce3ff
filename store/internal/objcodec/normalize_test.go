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

// reflectCopy copies obj field by field, keeping nil and empty apart.
func reflectCopy(obj resource.Object) resource.Object {
	v := reflect.ValueOf(obj)
	out := reflect.New(v.Type().Elem())
	CopierFor(v.Type().Elem())(out.Elem(), v.Elem())
	return out.Interface().(resource.Object)
}

// TestCopyObject_is_the_JSON_round_trip checks, for every built-in kind and many
// random objects, that Copy gives exactly what the JSON round trip gives (the
// same object, or the same error) and leaves its input alone.
func TestCopyObject_is_the_JSON_round_trip(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, k := range resource.NewScheme().Kinds() {
		t.Run(k.Kind, func(t *testing.T) {
			require.NotNil(t, normalizerFor(reflect.TypeOf(k.New())), "the normalizer covers %s", k.Kind)
			fast := 0
			for i := 0; i < 3000; i++ {
				obj := k.New()
				objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
				before := reflectCopy(obj)
				want, wantErr := jsonCopy(k, obj)
				shallow := i%2 == 0
				got, err := Copy(k, obj, shallow)
				if wantErr != nil {
					require.Error(t, err)
					assert.Equal(t, wantErr.Error(), err.Error())
					assert.Equal(t, resource.StatusOf(wantErr), resource.StatusOf(err))
				} else {
					require.NoError(t, err)
					require.True(t, reflect.DeepEqual(want, got), "copy differs from the round trip\nwant %#v\ngot  %#v", want, got)
				}
				require.True(t, reflect.DeepEqual(before, obj), "Copy changed its input")
				if norm := normalizerFor(reflect.TypeOf(obj)); norm(reflect.ValueOf(DeepCopy(obj)).Elem(), true) {
					fast++
					// Checking agrees with fixing: only what fixing leaves as it is passes.
					fixed := reflectCopy(obj)
					norm(reflect.ValueOf(fixed).Elem(), true)
					assert.Equal(t, reflect.DeepEqual(fixed, obj), norm(reflect.ValueOf(obj).Elem(), false))
				}
				// Normalize (after admission hooks) agrees with the round trip too.
				if wantErr == nil {
					n := Normalize(k, DeepCopy(obj))
					require.True(t, reflect.DeepEqual(want, n), "Normalize differs from the round trip")
				}
			}
			assert.Greater(t, fast, 300, "objects take the fast path")
		})
	}
}

// odd kinds the normalizer must leave to the JSON round trip.
type withFloat struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	F                   float64 `json:"f"`
}

func (o *withFloat) DeepCopyResource() resource.Object { c := *o; return &c }

type withHidden struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Hidden              string `json:"-"`
}

func (o *withHidden) DeepCopyResource() resource.Object { c := *o; return &c }

type withClash struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Kind                string `json:"kind"`
}

func (o *withClash) DeepCopyResource() resource.Object { c := *o; return &c }

type withNullableRaw struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Raw                 json.RawMessage `json:"raw"`
	Tags                []string        `json:"tags"`
	Notes               map[string]int  `json:"notes,omitempty"`
}

func (o *withNullableRaw) DeepCopyResource() resource.Object {
	c := *o
	c.ObjectMeta = resource.ObjectMeta{}
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Raw = append(json.RawMessage(nil), o.Raw...)
	if o.Raw == nil {
		c.Raw = nil
	}
	if o.Tags != nil {
		c.Tags = append([]string{}, o.Tags...)
	}
	if o.Notes != nil {
		c.Notes = map[string]int{}
		for k, v := range o.Notes {
			c.Notes[k] = v
		}
	}
	return &c
}

// plainHostKind is a kind of a host program, without DeepCopyResource.
type plainHostKind struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                struct {
		Items []string          `json:"items"`
		Ref   *resource.Owner   `json:"ref"`
		When  *resource.Time    `json:"when,omitempty"`
		Tags  map[string]string `json:"tags"`
		Conds []resource.Condition
		N     int32 `json:"n,omitempty"`
	} `json:"spec"`
}

func TestCopyObject_leaves_what_it_does_not_know_to_JSON(t *testing.T) {
	assert.Nil(t, normalizerFor(reflect.TypeOf(&withFloat{})))
	assert.Nil(t, normalizerFor(reflect.TypeOf(&withHidden{})))
	assert.Nil(t, normalizerFor(reflect.TypeOf(&withClash{})))
	require.NotNil(t, normalizerFor(reflect.TypeOf(&withNullableRaw{})))

	k := &resource.KindInfo{Kind: "WithHidden", New: func() resource.Object { return &withHidden{} }}
	got, err := Copy(k, &withHidden{Hidden: "x"}, true)
	require.NoError(t, err)
	assert.Equal(t, "", got.(*withHidden).Hidden, "a field JSON leaves out is lost, as before")

	k = &resource.KindInfo{Kind: "WithNullableRaw", New: func() resource.Object { return &withNullableRaw{} }}
	// A kind without DeepCopyResource is copied by reflection, just as exactly.
	hk := &resource.KindInfo{Kind: "PlainHostKind", New: func() resource.Object { return &plainHostKind{} }}
	require.NotNil(t, normalizerFor(reflect.TypeOf(&plainHostKind{})))
	assert.Nil(t, normalizerFor(reflect.TypeOf(&hostKind{})), "map values of []byte are not covered")
	r := rand.New(rand.NewSource(17))
	for i := 0; i < 2000; i++ {
		in := &plainHostKind{}
		objcodectest.Fill(r, reflect.ValueOf(in).Elem(), 0)
		want, wantErr := jsonCopy(hk, in)
		got, err := Copy(hk, in, i%2 == 0)
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		require.True(t, reflect.DeepEqual(want, got), "want %#v\ngot  %#v", want, got)
	}
	for _, in := range []*withNullableRaw{
		{},
		{Raw: json.RawMessage(`{"a":1}`), Tags: []string{}, Notes: map[string]int{}},
		{Raw: json.RawMessage{}},
		{Raw: json.RawMessage(`[1, 2]`), Notes: map[string]int{"a": 1}},
	} {
		want, wantErr := jsonCopy(k, in)
		got, err := Copy(k, in, false)
		if wantErr != nil {
			assert.Equal(t, wantErr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		assert.True(t, reflect.DeepEqual(want, got), "want %#v\ngot  %#v", want, got)
	}
}

// FuzzMarshaledJSON checks that what marshaledJSON accepts is valid JSON that
// json.Marshal writes unchanged, which is what lets Copy keep a
// json.RawMessage as it is.
func FuzzMarshaledJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"f:a":{},"f:b":{".":{},"k:{\"x\":1}":{}}}`, `{ "a" : 1 }`, `{"a":"<"}`,
		`{"a":"\u003c"}`, "\"\xe2\x80\xa8\"", `[1,-0.5e+10,true,false,null,"\ud800"]`, `01`, `1.`, `"\x"`, `{"a":1,}`,
		"\"\xff\"", `[[[[]]]]`, `"a\/b\"c\\d\n"`, `-`, `1e`, `{"a"}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !marshaledJSON(b) {
			return
		}
		require.True(t, json.Valid(b), "accepted invalid JSON %q", b)
		out, err := json.Marshal(json.RawMessage(b))
		require.NoError(t, err)
		require.Equal(t, string(b), string(out), "accepted JSON that json.Marshal changes")
	})
}

func TestMarshaledJSON_accepts_what_json_Marshal_writes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 2000; i++ {
		p := &resource.Project{}
		objcodectest.Fill(r, reflect.ValueOf(p).Elem(), 0)
		b, err := json.Marshal(p.ObjectMeta.Labels)
		if err != nil {
			continue
		}
		for _, v := range []any{p.Labels, p.Spec, p.ObjectMeta.OwnerReferences, []any{1.5, -3, "x<y", nil, true}} {
			if b, err = json.Marshal(v); err == nil {
				assert.True(t, marshaledJSON(b), "%s", b)
			}
		}
	}
	for _, s := range []string{`{ "a" : 1 }`, `{"a":"<"}`, "\"\xe2\x80\xa9\"", `01`, `{"a":1,}`, ``, `[`, `1.`} {
		assert.False(t, marshaledJSON([]byte(s)), "%s", s)
	}
}
