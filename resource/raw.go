package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	member := func(key string, value []byte) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		b.Write(value)
	}
	if o.APIVersion != "" {
		v, _ := json.Marshal(o.APIVersion)
		member("apiVersion", v)
	}
	if o.Kind != "" {
		v, _ := json.Marshal(o.Kind)
		member("kind", v)
	}
	member("metadata", meta)
	keys := make([]string, 0, len(o.Fields))
	for k := range o.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := o.Fields[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		member(k, v)
	}
	if len(o.Status) > 0 {
		member("status", o.Status)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object into o, replacing everything o held. A member
// named apiVersion or kind must be a string and metadata an object metadata.
func (o *RawObject) UnmarshalJSON(data []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	if members == nil {
		return fmt.Errorf("resource: a RawObject must be a JSON object, not null")
	}
	*o = RawObject{}
	for key, v := range members {
		switch key {
		case "apiVersion":
			if err := json.Unmarshal(v, &o.APIVersion); err != nil {
				return fmt.Errorf("resource: apiVersion: %w", err)
			}
		case "kind":
			if err := json.Unmarshal(v, &o.Kind); err != nil {
				return fmt.Errorf("resource: kind: %w", err)
			}
		case "metadata":
			if err := json.Unmarshal(v, &o.ObjectMeta); err != nil {
				return fmt.Errorf("resource: metadata: %w", err)
			}
		case "status":
			o.Status = compactRaw(v)
		default:
			if o.Fields == nil {
				o.Fields = make(map[string]json.RawMessage, len(members))
			}
			o.Fields[key] = compactRaw(v)
		}
	}
	return nil
}

// compactRaw returns v without insignificant white space, in a buffer of its own.
func compactRaw(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return copyRaw(v) // json.Unmarshal checked it already; keep it as it came
	}
	return b.Bytes()
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
