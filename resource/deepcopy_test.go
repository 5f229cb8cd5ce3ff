package resource_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// fill sets every field reachable from v to a non-zero value, so that a copy that
// forgets a field, or shares one, shows up.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type() == reflect.TypeOf(&resource.Time{}) {
			v.Set(reflect.ValueOf(resource.NewTimePtr(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC))))
			return
		}
		n := reflect.New(v.Type().Elem())
		fill(n.Elem(), depth+1)
		v.Set(n)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(resource.Time{}) {
			v.Set(reflect.ValueOf(resource.NewTime(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			v.SetBytes([]byte(`{"f:a":{}}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), depth+1)
		fill(s.Index(1), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
		v.Set(m)
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64, reflect.Int, reflect.Int32:
		v.SetInt(7)
	}
}

func TestDeepCopyResource_copies_every_field_and_shares_nothing(t *testing.T) {
	for _, k := range resource.NewScheme().Kinds() {
		t.Run(k.Kind, func(t *testing.T) {
			obj := k.New()
			fill(reflect.ValueOf(obj).Elem(), 0)
			want, err := json.Marshal(obj)
			require.NoError(t, err)
			c, ok := obj.(resource.DeepCopier)
			require.True(t, ok, "%s has no DeepCopyResource", k.Kind)
			cp := c.DeepCopyResource()
			got, err := json.Marshal(cp)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got), "the copy differs")
			// Changing the copy everywhere leaves the original as it was.
			fill(reflect.ValueOf(cp).Elem(), 0)
			mutate(reflect.ValueOf(cp).Elem())
			after, err := json.Marshal(obj)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(after), "the copy shares memory with the original")

			// DeepCopyResourceInto overwrites every field of an object that held
			// something else, and shares nothing either.
			ci, ok := obj.(resource.DeepCopierInto)
			require.True(t, ok, "%s has no DeepCopyResourceInto", k.Kind)
			into := k.New()
			fill(reflect.ValueOf(into).Elem(), 0)
			mutate(reflect.ValueOf(into).Elem())
			ci.DeepCopyResourceInto(into)
			assert.True(t, reflect.DeepEqual(c.DeepCopyResource(), into), "DeepCopyResourceInto differs from DeepCopyResource")
			mutate(reflect.ValueOf(into).Elem())
			after, err = json.Marshal(obj)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(after), "the copy into shares memory with the original")
		})
	}
}

func TestDeepCopy_keeps_nil_and_empty_apart(t *testing.T) {
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Labels: map[string]string{}, Finalizers: []string{},
		ManagedFields: []resource.ManagedFieldsEntry{{Manager: "a", FieldsV1: json.RawMessage{}}, {Manager: "b"}}}}
	c := p.DeepCopyResource().(*resource.Project)
	assert.NotNil(t, c.Labels)
	assert.NotNil(t, c.Finalizers)
	assert.NotNil(t, c.ManagedFields[0].FieldsV1)
	assert.Nil(t, c.ManagedFields[1].FieldsV1)
	assert.Nil(t, c.Annotations)
	assert.Nil(t, c.ManagedFields[0].Time)
}

// mutate changes every string, map entry and slice element reachable from v in place.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(resource.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				mutate(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			for i := 0; i < v.Len(); i++ {
				v.Index(i).SetUint(' ')
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			mutate(v.Index(i))
		}
	case reflect.Map:
		for _, key := range v.MapKeys() {
			v.SetMapIndex(key, reflect.ValueOf("changed"))
		}
	case reflect.String:
		v.SetString("changed")
	case reflect.Bool:
		v.SetBool(false)
	case reflect.Int64, reflect.Int, reflect.Int32:
		v.SetInt(99)
	}
}
