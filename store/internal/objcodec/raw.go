package objcodec

import (
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
)

// The generic objects of kinds registered at run time ([resource.RawObject]) have
// JSON methods of their own, so the compiled normalizer and encoder do not cover
// them; their form is known all the same: TypeMeta, the metadata (which both cover)
// and members already held as JSON. copyRaw and encodeRaw handle them without a
// round trip through encoding/json.

var (
	objectMetaPtr = reflect.TypeFor[*resource.ObjectMeta]()
	rawObjectPtr  = reflect.TypeFor[*resource.RawObject]()
)

// copyRaw returns what a JSON round trip of r gives, or false when that takes the
// round trip itself (a member not as json.Marshal writes it, a string that is not
// valid UTF-8, metadata the normalizer does not fix). With shallow, an r whose
// metadata needs no normalizing is copied shallowly, as [Copy] says.
func copyRaw(r *resource.RawObject, shallow bool) (*resource.RawObject, bool) {
	if !rawMembersExact(r) {
		return nil, false
	}
	norm := normalizerFor(objectMetaPtr)
	if norm == nil {
		return nil, false
	}
	var out *resource.RawObject
	if shallow && norm(reflect.ValueOf(&r.ObjectMeta).Elem(), false) {
		cp := *r
		out = &cp
	} else {
		out = r.DeepCopyResource().(*resource.RawObject)
		if !norm(reflect.ValueOf(&out.ObjectMeta).Elem(), true) {
			return nil, false
		}
	}
	// A round trip leaves no empty status (omitempty) and no empty map of members.
	if len(out.Status) == 0 {
		out.Status = nil
	}
	if len(out.Fields) == 0 {
		out.Fields = nil
	}
	return out, true
}

// rawMembersExact reports whether r's own strings and members come back unchanged
// from a round trip: valid UTF-8, and every member value as json.Marshal writes it.
func rawMembersExact(r *resource.RawObject) bool {
	if !utf8.ValidString(r.APIVersion) || !utf8.ValidString(r.Kind) {
		return false
	}
	if len(r.Status) > 0 && !marshaledJSON(r.Status) {
		return false
	}
	for k, v := range r.Fields {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			return false // would be read back as something else
		}
		if len(v) == 0 || !utf8.ValidString(k) || !marshaledJSON(v) {
			return false
		}
	}
	return true
}

// encodeRaw returns json.Marshal's encoding of r, or false.
func encodeRaw(r *resource.RawObject) ([]byte, bool) {
	if !rawMembersExact(r) {
		return nil, false
	}
	e := encoderFor(objectMetaPtr)
	if e == nil {
		return nil, false
	}
	keys := make([]string, 0, len(r.Fields))
	size := len(r.Status) + int(e.last.Load()) + 96
	for k, v := range r.Fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	if r.APIVersion != "" {
		b = append(b, `"apiVersion":`...)
		b = jsonscan.AppendQuote(b, []byte(r.APIVersion))
		b = append(b, ',')
	}
	if r.Kind != "" {
		b = append(b, `"kind":`...)
		b = jsonscan.AppendQuote(b, []byte(r.Kind))
		b = append(b, ',')
	}
	b = append(b, `"metadata":`...)
	start := len(b)
	b, ok := e.enc(b, reflect.ValueOf(&r.ObjectMeta).Elem())
	if !ok {
		return nil, false
	}
	e.last.Store(int64(len(b) - start))
	for _, k := range keys {
		b = append(b, ',')
		b = jsonscan.AppendQuote(b, []byte(k))
		b = append(b, ':')
		b = append(b, r.Fields[k]...)
	}
	if len(r.Status) > 0 {
		b = append(b, `,"status":`...)
		b = append(b, r.Status...)
	}
	return append(b, '}'), true
}
