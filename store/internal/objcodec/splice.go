package objcodec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/management-service/mgmt/resource"
)

// ManagedFieldsBound returns more than the encoding of mf can take.
func ManagedFieldsBound(mf []resource.ManagedFieldsEntry) int {
	n := 32
	for _, e := range mf {
		n += 200 + 6*(len(e.Manager)+len(e.Operation)+len(e.APIVersion)+len(e.FieldsType)+len(e.Subresource)+len(e.FieldsV1))
	}
	return n
}

// FindMember returns the value of the first member of the compact JSON object b whose
// key, as written, is key, as a subslice of b; false when there is none.
type FindMember func(b []byte, key string) (value []byte, ok bool)

// SpliceMeta rewrites an encoding without managedFields into one with them.
//
// data is json.Marshal's encoding of an object whose metadata has no managedFields
// and generation gen; the result is what json.Marshal writes for the object with
// generation newGen and managedFields mf, or false when SpliceMeta cannot write
// that. find locates the metadata and its generation in data (objcodec has no
// member scanner of its own).
func SpliceMeta(data []byte, gen, newGen int64, mf []resource.ManagedFieldsEntry, find FindMember) (out []byte, ok bool) {
	meta, ok := find(data, "metadata")
	if !ok || len(meta) < 3 || meta[0] != '{' {
		return nil, false // metadata always has creationTimestamp at least
	}
	metaStart := offset(data, meta)
	metaEnd := metaStart + len(meta) // after its '}'
	genStart, genEnd := -1, -1
	if newGen != gen {
		if newGen == 0 {
			return nil, false
		}
		g, ok := find(meta, "generation")
		if !ok {
			return nil, false
		}
		genStart = metaStart + offset(meta, g)
		genEnd = genStart + len(g)
	}
	size := len(data) + 48
	for _, e := range mf {
		size += 112 + len(e.Manager) + len(e.Operation) + len(e.APIVersion) + len(e.FieldsType) + len(e.Subresource) + len(e.FieldsV1)
	}
	out = make([]byte, 0, size)
	if genStart >= 0 {
		out = append(out, data[:genStart]...)
		out = strconv.AppendInt(out, newGen, 10)
		out = append(out, data[genEnd:metaEnd-1]...)
	} else {
		out = append(out, data[:metaEnd-1]...)
	}
	if len(mf) > 0 {
		out = append(out, `,"managedFields":`...)
		if out, ok = AppendManagedFields(out, mf); !ok {
			return nil, false
		}
	}
	return append(out, data[metaEnd-1:]...), true
}

// offset returns where sub, a subslice of b, starts in b.
func offset(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// AppendManagedFields appends mf to dst as json.Marshal writes it, or returns false
// when it cannot write some value exactly so.
func AppendManagedFields(dst []byte, mf []resource.ManagedFieldsEntry) ([]byte, bool) {
	dst = append(dst, '[')
	for i, e := range mf {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		first := true
		field := func(name string) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, '"')
			dst = append(dst, name...)
			dst = append(dst, '"', ':')
		}
		str := func(name, v string) bool {
			if v == "" {
				return true
			}
			field(name)
			var ok bool
			dst, ok = appendJSONString(dst, v)
			return ok
		}
		if !str("manager", e.Manager) || !str("operation", e.Operation) || !str("apiVersion", e.APIVersion) {
			return nil, false
		}
		if e.Time != nil {
			field("time")
			var ok bool
			if dst, ok = appendTime(dst, *e.Time); !ok {
				return nil, false
			}
		}
		if !str("fieldsType", e.FieldsType) {
			return nil, false
		}
		if len(e.FieldsV1) > 0 {
			if !marshaledJSON(e.FieldsV1) {
				return nil, false
			}
			field("fieldsV1")
			dst = append(dst, e.FieldsV1...)
		}
		if !str("subresource", e.Subresource) {
			return nil, false
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// appendJSONString appends s as json.Marshal writes a string: printable ASCII as it
// is, with '"', '\\', '\n', '\r', '\t', '<', '>' and '&' escaped, and valid UTF-8
// other than U+2028 and U+2029 as it is. Anything else (other control characters,
// invalid UTF-8, U+2028, U+2029) goes through json.Marshal.
func appendJSONString(dst []byte, s string) ([]byte, bool) {
	orig := dst
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '<':
			esc = `\u003c`
		case '>':
			esc = `\u003e`
		case '&':
			esc = `\u0026`
		default:
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[i:])
				if !(r == utf8.RuneError && size == 1) && r != '\u2028' && r != '\u2029' {
					i += size
					continue
				}
			}
			b, err := json.Marshal(s)
			if err != nil {
				return nil, false
			}
			return append(orig, b...), true
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), true
}

// plain8 reports whether the 8 bytes of s are all jsonPlain, a word at a time: none
// is below 0x20 or from 0x80 on, and none is '"', '\\', '<', '>' or '&'.
func plain8(s string) bool {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// zero marks a word with a zero byte (exactly: a false mark only ever follows a
	// true one).
	zero := func(x uint64) uint64 { return (x - lsb) &^ x & msb }
	bad := w&msb | (w-lsb*0x20)&^w&msb |
		zero(w^(lsb*'"')) | zero(w^(lsb*'\\')) | zero(w^(lsb*'<')) | zero(w^(lsb*'>')) | zero(w^(lsb*'&'))
	return bad == 0
}

// jsonPlain marks the bytes json.Marshal writes in a string as they are: ASCII from
// space on, except '"', '\\', '<', '>' and '&'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Spliceable reports whether SpliceMeta applies to the encodings of t.
//
// t, a pointer to a struct, must encode as a plain struct whose "metadata" is a
// resource.ObjectMeta with managedFields last; or be *resource.RawObject, whose
// encoding (its MarshalJSON, or Encode's) writes apiVersion, kind, then "metadata"
// as json.Marshal writes a resource.ObjectMeta, before any other member.
func Spliceable(t reflect.Type) bool {
	if v, ok := spliceableTypes.Load(t); ok {
		return v.(bool)
	}
	var ok bool
	if t == rawObjectPtr {
		ok = spliceLayoutKnown && normalizerFor(objectMetaPtr) != nil
	} else {
		ok = spliceLayoutKnown && normalizerFor(t) != nil && hasMetadataField(t.Elem())
	}
	spliceableTypes.Store(t, ok)
	return ok
}

var spliceableTypes sync.Map // reflect.Type → bool

func hasMetadataField(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("json") == "metadata" && f.Type == reflect.TypeFor[resource.ObjectMeta]() {
			return true
		}
	}
	return false
}

// spliceLayoutKnown checks that ObjectMeta and ManagedFieldsEntry are laid out as
// SpliceMeta and AppendManagedFields write them; a change to either turns the splice
// off rather than writing something else than json.Marshal.
var spliceLayoutKnown = func() bool {
	tags := func(t reflect.Type) []string {
		var out []string
		for i := 0; i < t.NumField(); i++ {
			out = append(out, t.Field(i).Name+" "+t.Field(i).Type.String()+" "+t.Field(i).Tag.Get("json"))
		}
		return out
	}
	meta := tags(reflect.TypeFor[resource.ObjectMeta]())
	entry := tags(reflect.TypeFor[resource.ManagedFieldsEntry]())
	wantEntry := []string{
		"Manager string manager,omitempty",
		"Operation string operation,omitempty",
		"APIVersion string apiVersion,omitempty",
		"Time *resource.Time time,omitempty",
		"FieldsType string fieldsType,omitempty",
		"FieldsV1 json.RawMessage fieldsV1,omitempty",
		"Subresource string subresource,omitempty",
	}
	hasGen := false
	for _, m := range meta {
		hasGen = hasGen || m == "Generation int64 generation,omitempty"
	}
	return hasGen && len(meta) > 0 && meta[len(meta)-1] == "ManagedFields []resource.ManagedFieldsEntry managedFields,omitempty" &&
		fmt.Sprint(entry) == fmt.Sprint(wantEntry)
}()
