package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// RawObject is the generic representation of an object of a kind registered at run
// time without a Go type of its own (see [RawKind]): its kind and apiVersion, its
// metadata as an [ObjectMeta], its status and every other top-level member as raw
// JSON. One Go type serves every generic kind; the [Scheme] tells them apart by
// TypeMeta, which must therefore be set.
//
// Encoding writes apiVersion, kind, metadata, the other members in key order, then
// status; decoding keeps every member it does not know in Fields, compacted, so a
// round trip keeps the object exactly.
type RawObject struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the object's metadata.
	ObjectMeta `json:"metadata"`
	// Status is the "status" member as raw JSON, nil when there is none. For a kind
	// with a status subresource the store keeps it on main-resource writes and
	// changes it only through the status path.
	Status json.RawMessage `json:"status,omitempty"`
	// Fields holds every other top-level member (spec, data, ...) by key, as compact
	// raw JSON.
	Fields map[string]json.RawMessage `json:"-"`
}

// MarshalJSON writes the object as one JSON object (see [RawObject]).
func (o *RawObject) MarshalJSON() ([]byte, error) {
	meta, err := json.Marshal(&o.ObjectMeta)
	if err != nil {
		return nil, err
	}
	size := len(meta) + len(o.Status) + len(o.APIVersion) + len(o.Kind) + 64
	keys := make([]string, 0, len(o.Fields))
	for k, v := range o.Fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	if o.APIVersion != "" {
		b = append(b, `"apiVersion":`...)
		b = jsonscan.AppendQuote(b, []byte(o.APIVersion))
		b = append(b, ',')
	}
	if o.Kind != "" {
		b = append(b, `"kind":`...)
		b = jsonscan.AppendQuote(b, []byte(o.Kind))
		b = append(b, ',')
	}
	b = append(b, `"metadata":`...)
	b = append(b, meta...)
	for _, k := range keys {
		v := o.Fields[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		b = append(b, ',')
		b = jsonscan.AppendQuote(b, []byte(k))
		b = append(b, ':')
		b = append(b, v...)
	}
	if len(o.Status) > 0 {
		b = append(b, `,"status":`...)
		b = append(b, o.Status...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a JSON object into o, replacing everything o held except the
// TypeMeta, which keeps what it held where data has no apiVersion or kind (so that
// an object of [KindInfo.New] keeps naming its kind). A member named apiVersion or
// kind must be a string and metadata an object metadata; of a key given twice the
// last value counts, as encoding/json decodes it.
func (o *RawObject) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		var v any
		return json.Unmarshal(data, &v) // the same syntax error encoding/json reports
	}
	// One copy holds every value kept: data belongs to the caller.
	buf := append([]byte(nil), data...)
	*o = RawObject{TypeMeta: o.TypeMeta}
	var err error
	isObject := jsonscan.EachMember(buf, func(rawKey, v []byte) bool {
		key := string(jsonscan.Unquote(rawKey))
		switch key {
		case "apiVersion":
			o.APIVersion = ""
			if err = json.Unmarshal(v, &o.APIVersion); err != nil {
				err = fmt.Errorf("resource: apiVersion: %w", err)
			}
		case "kind":
			o.Kind = ""
			if err = json.Unmarshal(v, &o.Kind); err != nil {
				err = fmt.Errorf("resource: kind: %w", err)
			}
		case "metadata":
			o.ObjectMeta = ObjectMeta{}
			if err = json.Unmarshal(v, &o.ObjectMeta); err != nil {
				err = fmt.Errorf("resource: metadata: %w", err)
			}
		case "status":
			o.Status = compactRaw(v)
		default:
			if o.Fields == nil {
				o.Fields = make(map[string]json.RawMessage, 4)
			}
			o.Fields[key] = compactRaw(v)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if !isObject {
		return fmt.Errorf("resource: a RawObject must be a JSON object")
	}
	return nil
}

// compactRaw returns the valid JSON value v without insignificant white space: v
// itself (its capacity cut to its length) when it has none.
func compactRaw(v []byte) json.RawMessage {
	if isCompact(v) {
		return v[:len(v):len(v)]
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return copyRaw(v) // v was checked as valid; keep it as it came
	}
	return b.Bytes()
}

// isCompact reports whether the valid JSON value v has no white space outside its
// strings.
func isCompact(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *RawObject) DeepCopyInto(out *RawObject) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status = copyRaw(o.Status)
	if o.Fields != nil {
		out.Fields = make(map[string]json.RawMessage, len(o.Fields))
		for k, v := range o.Fields {
			out.Fields[k] = copyRaw(v)
		}
	}
}

// DeepCopyResource returns a deep copy.
func (o *RawObject) DeepCopyResource() Object {
	out := new(RawObject)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *RawObject, a deep copy of o.
func (o *RawObject) DeepCopyResourceInto(out Object) { o.DeepCopyInto(out.(*RawObject)) }

// RawList is the list type of every generic kind: a list of [RawObject]. Its TypeMeta
// names the list kind (KindInfo.ListKind) and is how the [Scheme] finds the kind.
type RawList = List[RawObject, *RawObject]

// RawKind returns k with New and NewList set to make [RawObject] and [RawList] values
// with their TypeMeta filled in, ready for [Scheme.Register]. Kind, Version and, for
// a list kind other than Kind+"List", ListKind must be set first.
func RawKind(k KindInfo) KindInfo {
	if k.ListKind == "" {
		k.ListKind = k.Kind + "List"
	}
	tm := TypeMeta{Kind: k.Kind, APIVersion: k.GVK().APIVersion()}
	ltm := TypeMeta{Kind: k.ListKind, APIVersion: tm.APIVersion}
	k.New = func() Object { return &RawObject{TypeMeta: tm} }
	k.NewList = func() ObjectList { return &RawList{TypeMeta: ltm} }
	return k
}
