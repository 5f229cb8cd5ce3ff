package store

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"github.com/management-service/mgmt/resource"
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

// moveInto makes dst hold src's value (a shallow copy of the struct); src must not be
// used afterwards. Both must be pointers to the same struct type.
func moveInto(dst, src resource.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// specChanged reports whether two encodings of objects of one kind differ anywhere
// but in apiVersion, kind, metadata and status. Both come from encoding/json, so
// they are compact and their members in a fixed order.
func specChanged(a, b []byte) bool {
	fa, fb := topMembers(a), topMembers(b)
	if fa == nil || fb == nil {
		return !bytes.Equal(a, b)
	}
	skip := func(k string) bool {
		return k == "metadata" || k == "status" || k == "kind" || k == "apiVersion"
	}
	n := 0
	for k, va := range fa {
		if skip(k) {
			continue
		}
		n++
		if vb, ok := fb[k]; !ok || !bytes.Equal(va, vb) {
			return true
		}
	}
	for k := range fb {
		if !skip(k) {
			n--
		}
	}
	return n != 0
}

// topMembers splits a compact JSON object into its members' raw values; nil when it
// is not one.
func topMembers(b []byte) map[string][]byte {
	if len(b) < 2 || b[0] != '{' {
		return nil
	}
	out := map[string][]byte{}
	i := 1
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i++
		}
		if i >= len(b) || b[i] != '"' {
			return nil
		}
		end := skipString(b, i)
		if end < 0 || end >= len(b) || b[end] != ':' {
			return nil
		}
		key := string(b[i+1 : end-1])
		vs := end + 1
		ve := skipValue(b, vs)
		if ve < 0 {
			return nil
		}
		out[key] = b[vs:ve]
		i = ve
	}
	return out
}

// skipString returns the index after the string starting at b[i] ('"'), or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = skipString(b, j) - 1
			if j < 0 {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(b)
	}
	return -1
}
