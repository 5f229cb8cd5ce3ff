package resource

import (
	"reflect"
	"sync"
)

// A *Time that points at the zero time (decoded from "" or "0001-01-01T00:00:00Z") is
// written as null, which decodes to no pointer at all: the decoder makes it nil at
// once, so that a decoded object is what encoding and decoding it again gives.

var timeType = reflect.TypeFor[Time]()

// hasTimePointers caches, per type nilZeroTimes was called on, whether a value of it
// can hold a *Time.
var hasTimePointers sync.Map // reflect.Type → bool

// nilZeroTimes sets every *Time in v that points at the zero time to nil. v must be
// addressable; values inside maps are left as they are.
func nilZeroTimes(v reflect.Value) {
	t := v.Type()
	has, ok := hasTimePointers.Load(t)
	if !ok {
		has = holdsTimePointer(t, map[reflect.Type]bool{})
		hasTimePointers.Store(t, has)
	}
	if !has.(bool) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type().Elem() == timeType {
			if v.Interface().(*Time).IsZero() {
				v.SetZero()
			}
			return
		}
		nilZeroTimes(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				nilZeroTimes(f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			nilZeroTimes(v.Index(i))
		}
	}
}

// holdsTimePointer reports whether a value of type t can hold a *Time outside a map.
func holdsTimePointer(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: answered where it started
	}
	seen[t] = true
	has := false
	switch t.Kind() {
	case reflect.Pointer:
		has = t.Elem() == timeType || holdsTimePointer(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField() && !has; i++ {
			has = t.Field(i).IsExported() && holdsTimePointer(t.Field(i).Type, seen)
		}
	case reflect.Slice, reflect.Array:
		has = holdsTimePointer(t.Elem(), seen)
	}
	return has
}
