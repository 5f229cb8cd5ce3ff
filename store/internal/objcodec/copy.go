package objcodec

import (
	"reflect"
	"sync"

	"github.com/management-service/mgmt/resource"
)

// copiers holds a compiled deep-copy function per type.
var copiers sync.Map // reflect.Type → CopyFunc

// CopyFunc makes dst, a settable value, a deep copy of src (of the same type).
type CopyFunc func(dst, src reflect.Value)

// DeepCopy returns a copy of obj that shares no mutable memory with it.
//
// It uses obj's own DeepCopyResource when it has one, else a copier compiled per type.
func DeepCopy(obj resource.Object) resource.Object {
	if c, ok := obj.(resource.DeepCopier); ok {
		return c.DeepCopyResource()
	}
	v := reflect.ValueOf(obj)
	out := reflect.New(v.Type().Elem())
	CopierFor(v.Type().Elem())(out.Elem(), v.Elem())
	return out.Interface().(resource.Object)
}

// DeepCopyInto makes dst, of the same pointer type as src, a deep copy of src.
func DeepCopyInto(dst, src resource.Object) {
	if c, ok := src.(resource.DeepCopierInto); ok {
		c.DeepCopyResourceInto(dst)
		return
	}
	if c, ok := src.(resource.DeepCopier); ok {
		reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(c.DeepCopyResource()).Elem())
		return
	}
	d, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	CopierFor(d.Type())(d, sv)
}

// CopierFor returns the deep-copy function of t, compiled once.
//
// Structs with unexported fields are copied as values (time.Time is immutable,
// which is the case that matters here).
func CopierFor(t reflect.Type) CopyFunc {
	if f, ok := copiers.Load(t); ok {
		return f.(CopyFunc)
	}
	// A placeholder breaks recursion for self-referencing types, and stands for the
	// copier while it is built: a caller on another goroutine that finds it waits
	// until the copier is there (it used to call a nil function). Building never
	// calls a placeholder, so two types built at once cannot wait for each other.
	var f CopyFunc
	ready := make(chan struct{})
	var self CopyFunc = func(d, s reflect.Value) { <-ready; f(d, s) }
	if other, loaded := copiers.LoadOrStore(t, self); loaded {
		return other.(CopyFunc)
	}
	f = buildCopier(t)
	close(ready)
	copiers.Store(t, f)
	return f
}

func assign(d, s reflect.Value) { d.Set(s) }

func buildCopier(t reflect.Type) CopyFunc {
	if !hasRefs(t, map[reflect.Type]bool{}) {
		return assign
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.New(elem)
			CopierFor(elem)(n.Elem(), s.Elem())
			d.Set(n)
		}
	case reflect.Slice:
		elem := t.Elem()
		plain := !hasRefs(elem, map[reflect.Type]bool{})
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.MakeSlice(t, s.Len(), s.Len())
			if plain {
				reflect.Copy(n, s)
			} else {
				c := CopierFor(elem)
				for i := 0; i < s.Len(); i++ {
					c(n.Index(i), s.Index(i))
				}
			}
			d.Set(n)
		}
	case reflect.Map:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			if s.IsNil() {
				d.SetZero()
				return
			}
			n := reflect.MakeMapWithSize(t, s.Len())
			c := CopierFor(elem)
			it := s.MapRange()
			for it.Next() {
				v := reflect.New(elem).Elem()
				c(v, it.Value())
				n.SetMapIndex(it.Key(), v)
			}
			d.Set(n)
		}
	case reflect.Struct:
		return structCopier(t)
	case reflect.Array:
		elem := t.Elem()
		return func(d, s reflect.Value) {
			c := CopierFor(elem)
			for i := 0; i < s.Len(); i++ {
				c(d.Index(i), s.Index(i))
			}
		}
	}
	return assign // interfaces, channels, funcs: shared (the kinds have none)
}

// structCopier copies a struct field by field, each with its own copier; a struct
// with an unexported field is assigned whole.
func structCopier(t reflect.Type) CopyFunc {
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			return assign
		}
	}
	type field struct {
		i int
		c CopyFunc
	}
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		fields = append(fields, field{i, CopierFor(t.Field(i).Type)})
	}
	return func(d, s reflect.Value) {
		for _, f := range fields {
			f.c(d.Field(f.i), s.Field(f.i))
		}
	}
}

// hasRefs reports whether values of t can share memory when assigned.
func hasRefs(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return hasRefs(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasRefs(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
