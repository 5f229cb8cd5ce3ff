package store

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// statusFields caches, per Go type, the index of the field encoded as "status".
var statusFields sync.Map // reflect.Type → []int (nil: none)

// statusIndex returns the index of the top-level struct field whose JSON name is
// "status", or nil. A kind with a status subresource must have one.
func statusIndex(t reflect.Type) []int {
	if v, ok := statusFields.Load(t); ok {
		return v.([]int)
	}
	var idx []int
	st := t.Elem()
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "status" && !f.Anonymous {
			idx = f.Index
			break
		}
	}
	statusFields.Store(t, idx)
	return idx
}

// copyStatus sets dst's status to src's (to the zero value when src is nil). It
// copies the field shallowly: src must not be used afterwards.
func copyStatus(dst, src resource.Object) {
	idx := statusIndex(reflect.TypeOf(dst))
	if idx == nil {
		return
	}
	d := reflect.ValueOf(dst).Elem().FieldByIndex(idx)
	if src == nil {
		d.SetZero()
		return
	}
	d.Set(reflect.ValueOf(src).Elem().FieldByIndex(idx))
}

// copyStatusDeep sets dst's status to a copy of src's that shares nothing with it.
func copyStatusDeep(dst, src resource.Object) {
	idx := statusIndex(reflect.TypeOf(dst))
	if idx == nil {
		return
	}
	d := reflect.ValueOf(dst).Elem().FieldByIndex(idx)
	objcodec.CopierFor(d.Type())(d, reflect.ValueOf(src).Elem().FieldByIndex(idx))
}

// moveInto makes dst hold src's value (a shallow copy of the struct); src must not be
// used afterwards. Both must be pointers to the same struct type.
func moveInto(dst, src resource.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// specChanged reports whether two encodings of objects of one kind differ anywhere
// but in apiVersion, kind, metadata and status. Both come from encoding/json, so
// they are valid and compact. Members are compared by key (a repeated key counts once, with its
// last value).
func specChanged(a, b []byte) bool {
	var bufA, bufB [16]member
	ma, okA := members(a, bufA[:0])
	mb, okB := members(b, bufB[:0])
	if !okA || !okB {
		return !bytes.Equal(a, b)
	}
	ma, mb = specMembers(ma), specMembers(mb)
	if len(ma) != len(mb) {
		return true
	}
	for _, x := range ma {
		y, ok := findMember(mb, x.key)
		if !ok || !bytes.Equal(x.value, y.value) {
			return true
		}
	}
	return false
}

// member is one member of a JSON object: its key as written (without the quotes)
// and its value.
type member struct {
	key, value []byte
}

// specMembers drops the members outside the spec, and all but the last of a
// repeated key, in place.
func specMembers(ms []member) []member {
	out := ms[:0]
	for i, m := range ms {
		switch string(m.key) {
		case "metadata", "status", "kind", "apiVersion":
			continue
		}
		if _, later := findMember(ms[i+1:], m.key); later {
			continue
		}
		out = append(out, m)
	}
	return out
}

func findMember(ms []member, key []byte) (member, bool) {
	for _, m := range ms {
		if bytes.Equal(m.key, key) {
			return m, true
		}
	}
	return member{}, false
}

// members appends the members of the JSON object b to dst; false when b is not one.
func members(b []byte, dst []member) ([]member, bool) {
	ok := jsonscan.EachMember(b, func(key, value []byte) bool {
		dst = append(dst, member{key: key, value: value})
		return true
	})
	return dst, ok
}

// memberNamed returns the first member of the JSON object b with the key (as
// written) name.
func memberNamed(b []byte, name string) (found member, ok bool) {
	jsonscan.EachMember(b, func(key, value []byte) bool {
		if string(key) == name {
			found, ok = member{key: key, value: value}, true
			return false
		}
		return true
	})
	return found, ok
}
