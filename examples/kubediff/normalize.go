package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Normalizer masks what legitimately differs between two servers that answer the
// same requests: uids, times, resourceVersion values, continue tokens and the random
// suffixes of generated names. uids and object resourceVersions are not blanked but
// numbered in the order first seen (<uid#1>, <rv#2>, ...), so that "the same uid as
// before" and "a new resourceVersion" stay visible. One Normalizer serves one case
// on one server.
type Normalizer struct {
	// Messages keeps the messages of Status errors; by default they are dropped,
	// since the two servers word them differently.
	Messages bool

	uids map[string]string
	rvs  map[string]string
}

// NewNormalizer returns a Normalizer with nothing seen yet.
func NewNormalizer(messages bool) *Normalizer {
	return &Normalizer{Messages: messages, uids: map[string]string{}, rvs: map[string]string{}}
}

func (n *Normalizer) ordinal(m map[string]string, prefix, v string) string {
	if v == "" {
		return ""
	}
	if o, ok := m[v]; ok {
		return o
	}
	o := fmt.Sprintf("<%s#%d>", prefix, len(m)+1)
	m[v] = o
	return o
}

// UID returns the masked form of a uid.
func (n *Normalizer) UID(v string) string { return n.ordinal(n.uids, "uid", v) }

// RV returns the masked form of an object's resourceVersion.
func (n *Normalizer) RV(v string) string { return n.ordinal(n.rvs, "rv", v) }

// View is what is compared of one response: status code, content type, Warning
// headers and the normalised body (or the watch events).
func (n *Normalizer) View(r *Response) map[string]any {
	v := map[string]any{"code": r.Code}
	if ct := mediaType(r.Header.Get("Content-Type")); ct != "" && len(r.Body) > 0 {
		v["contentType"] = ct
	}
	if w := warnings(r.Header); len(w) > 0 {
		v["warnings"] = w
	}
	if r.Events != nil {
		evs := make([]any, 0, len(r.Events))
		for _, e := range r.Events {
			obj := jsonBody(e.Object)
			if e.Type == "BOOKMARK" {
				obj = n.bookmark(obj)
			} else {
				obj = n.Value(obj)
			}
			evs = append(evs, map[string]any{"type": e.Type, "object": obj})
		}
		v["events"] = evs
	} else if len(r.Body) > 0 {
		if j := decodeBody(r.Header.Get("Content-Type"), r.Body); j != nil {
			v["body"] = n.Value(j)
		} else {
			v["body"] = fmt.Sprintf("<%d bytes of %s>", len(r.Body), firstLine(r.Body))
		}
	}
	return v
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return fmt.Sprintf("%q", s)
}

// mediaType returns a Content-Type without charset and spaces, parameters sorted.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ReplaceAll(ct, " ", "")
	}
	delete(params, "charset")
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(mt)
	for _, k := range keys {
		b.WriteString(";" + k + "=" + params[k])
	}
	return b.String()
}

// warnings returns the texts of the Warning headers ("299 - \"text\"" → text).
func warnings(h http.Header) []any {
	var out []any
	for _, w := range h.Values("Warning") {
		text := w
		if i := strings.Index(w, "\""); i >= 0 {
			var s string
			if err := json.Unmarshal([]byte(w[i:]), &s); err == nil {
				text = s
			}
		}
		out = append(out, text)
	}
	return out
}

// Value normalises any decoded JSON value: an object, a list, a Table, a Status.
func (n *Normalizer) Value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return n.object(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = n.Value(e)
		}
		return out
	}
	return v
}

func (n *Normalizer) object(m map[string]any) any {
	kind, _ := m["kind"].(string)
	if kind == "Status" && m["apiVersion"] == "v1" {
		return n.status(m)
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = e
	}
	_, hasItems := m["items"]
	isList := strings.HasSuffix(kind, "List") || hasItems
	if meta, ok := m["metadata"].(map[string]any); ok {
		if isList || kind == "Table" {
			out["metadata"] = n.listMeta(meta)
		} else {
			out["metadata"] = n.meta(meta)
		}
	}
	for k, e := range m {
		if k == "metadata" {
			continue
		}
		switch k {
		case "rows":
			if kind == "Table" {
				out[k] = n.rows(m, e)
				continue
			}
		case "status":
			if st, ok := e.(map[string]any); ok {
				out[k] = n.objectStatus(st)
				continue
			}
		}
		out[k] = n.Value(e)
	}
	return out
}

// objectStatus masks the server-set times of an object's status.
func (n *Normalizer) objectStatus(st map[string]any) any {
	out, ok := n.Value(st).(map[string]any)
	if !ok {
		return st
	}
	if _, ok := st["expirationTimestamp"]; ok && st["expirationTimestamp"] != nil {
		out["expirationTimestamp"] = "<time>"
	}
	if _, ok := st["token"]; ok {
		out["token"] = "<token>"
	}
	return out
}

func (n *Normalizer) listMeta(meta map[string]any) any {
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		switch k {
		case "resourceVersion":
			if s, _ := v.(string); s != "" {
				v = "<rv>"
			}
		case "continue":
			if s, _ := v.(string); s != "" {
				v = "<continue>"
			}
		}
		out[k] = v
	}
	return out
}

func (n *Normalizer) meta(meta map[string]any) any {
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		switch k {
		case "uid":
			if s, ok := v.(string); ok {
				v = n.UID(s)
			}
		case "resourceVersion":
			if s, ok := v.(string); ok {
				v = n.RV(s)
			}
		case "creationTimestamp", "deletionTimestamp":
			if v != nil {
				v = "<time>"
			}
		case "name":
			if s, ok := v.(string); ok {
				if g, _ := meta["generateName"].(string); g != "" && strings.HasPrefix(s, g) && len(s) > len(g) {
					v = g + "<suffix>"
				}
			}
		case "managedFields":
			v = n.managedFields(v)
		case "ownerReferences":
			v = n.ownerRefs(v)
		}
		out[k] = v
	}
	return out
}

// managedFields turns the list into a map keyed "manager|operation|subresource":
// the order of the entries means nothing, and an extra entry is then one
// difference, not a shift of all that follow. Entries with the same key keep their
// order under "#2", "#3".
func (n *Normalizer) managedFields(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			out[fmt.Sprintf("<entry %d>", len(out))] = e
			continue
		}
		c := make(map[string]any, len(m))
		for k, x := range m {
			if k == "time" && x != nil {
				x = "<time>"
			}
			c[k] = x
		}
		key := fmt.Sprintf("%v|%v|%v", str(m["manager"]), str(m["operation"]), str(m["subresource"]))
		k := key
		for i := 2; out[k] != nil; i++ {
			k = fmt.Sprintf("%s#%d", key, i)
		}
		out[k] = c
	}
	return out
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func (n *Normalizer) ownerRefs(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			out[i] = e
			continue
		}
		c := make(map[string]any, len(m))
		for k, x := range m {
			if s, ok := x.(string); ok && k == "uid" {
				x = n.UID(s)
			}
			c[k] = x
		}
		out[i] = c
	}
	return out
}

// rows masks the date cells of a Table (the ages) and normalises each row's object.
func (n *Normalizer) rows(table map[string]any, v any) any {
	rows, ok := v.([]any)
	if !ok {
		return v
	}
	dateCol := map[int]bool{}
	if cols, ok := table["columnDefinitions"].([]any); ok {
		for i, c := range cols {
			if cm, ok := c.(map[string]any); ok && cm["format"] == "date" {
				dateCol[i] = true
			}
		}
	}
	out := make([]any, len(rows))
	for i, r := range rows {
		rm, ok := r.(map[string]any)
		if !ok {
			out[i] = r
			continue
		}
		c := make(map[string]any, len(rm))
		for k, x := range rm {
			switch k {
			case "cells":
				if cells, ok := x.([]any); ok {
					cc := make([]any, len(cells))
					for j, cell := range cells {
						if dateCol[j] && cell != nil && cell != "" && cell != "<unknown>" {
							cell = "<age>"
						}
						cc[j] = cell
					}
					x = cc
				}
			case "object":
				x = n.Value(x)
			}
			c[k] = x
		}
		out[i] = c
	}
	return out
}

// status reduces a Status to what both servers must agree on: status, code, reason,
// details' name, group and kind, and the causes' reasons and fields (the messages
// only with Messages).
func (n *Normalizer) status(m map[string]any) any {
	out := map[string]any{"kind": "Status"}
	for _, k := range []string{"status", "code", "reason"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	if n.Messages {
		if v, ok := m["message"]; ok {
			out["message"] = v
		}
	}
	if d, ok := m["details"].(map[string]any); ok {
		dd := map[string]any{}
		for _, k := range []string{"name", "group", "kind", "retryAfterSeconds"} {
			if v, ok := d[k]; ok && v != "" {
				dd[k] = v
			}
		}
		if uid, ok := d["uid"].(string); ok && uid != "" {
			dd["uid"] = n.UID(uid)
		}
		if cs, ok := d["causes"].([]any); ok {
			var causes []any
			for _, c := range cs {
				cm, ok := c.(map[string]any)
				if !ok {
					continue
				}
				cc := map[string]any{}
				for _, k := range []string{"reason", "field"} {
					if v, ok := cm[k]; ok && v != "" {
						cc[k] = v
					}
				}
				if n.Messages {
					if v, ok := cm["message"]; ok {
						cc["message"] = v
					}
				}
				causes = append(causes, cc)
			}
			sort.SliceStable(causes, func(i, j int) bool {
				return fmt.Sprint(causes[i]) < fmt.Sprint(causes[j])
			})
			dd["causes"] = causes
		}
		if len(dd) > 0 {
			out["details"] = dd
		}
	}
	return out
}

// bookmark keeps of a BOOKMARK's object only its kind, apiVersion and annotations:
// its resourceVersion is any recent one.
func (n *Normalizer) bookmark(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, k := range []string{"kind", "apiVersion"} {
		if x, ok := m[k]; ok {
			out[k] = x
		}
	}
	meta := map[string]any{}
	if md, ok := m["metadata"].(map[string]any); ok {
		if s, _ := md["resourceVersion"].(string); s != "" {
			meta["resourceVersion"] = "<rv>"
		}
		if a, ok := md["annotations"]; ok {
			meta["annotations"] = a
		}
	}
	out["metadata"] = meta
	return out
}

// decodeBody decodes a JSON body, a YAML one (as JSON), or the type of a
// Kubernetes protobuf one ("k8s\x00" and a runtime.Unknown: only its apiVersion
// and kind are read); nil for anything else.
func decodeBody(contentType string, b []byte) any {
	if j := jsonBody(b); j != nil {
		return j
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/yaml":
		if j, err := yaml.YAMLToJSON(b); err == nil {
			return jsonBody(j)
		}
	case "application/vnd.kubernetes.protobuf":
		if tm, ok := protobufTypeMeta(b); ok {
			return map[string]any{"protobuf": true, "apiVersion": tm[0], "kind": tm[1]}
		}
	}
	return nil
}

// protobufTypeMeta reads apiVersion and kind out of a Kubernetes protobuf envelope:
// the magic "k8s\x00", then a runtime.Unknown whose field 1 is a TypeMeta with
// apiVersion (field 1) and kind (field 2).
func protobufTypeMeta(b []byte) ([2]string, bool) {
	var out [2]string
	rest, ok := bytes.CutPrefix(b, []byte("k8s\x00"))
	if !ok {
		return out, false
	}
	typeMeta, ok := protoField(rest, 1)
	if !ok {
		return out, false
	}
	for i := range out {
		if f, ok := protoField(typeMeta, i+1); ok {
			out[i] = string(f)
		}
	}
	return out, true
}

// protoField returns the first length-delimited field num of a protobuf message.
func protoField(b []byte, num int) ([]byte, bool) {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, false
		}
		b = b[n:]
		field, wire := int(key>>3), key&7
		switch wire {
		case 0:
			_, m := binary.Uvarint(b)
			if m <= 0 {
				return nil, false
			}
			b = b[m:]
		case 1:
			if len(b) < 8 {
				return nil, false
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return nil, false
			}
			b = b[4:]
		case 2:
			l, m := binary.Uvarint(b)
			if m <= 0 || uint64(len(b)-m) < l {
				return nil, false
			}
			val := b[m : m+int(l)]
			b = b[m+int(l):]
			if field == num {
				return val, true
			}
		default:
			return nil, false
		}
	}
	return nil, false
}
