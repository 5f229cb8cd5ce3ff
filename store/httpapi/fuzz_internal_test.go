package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// FuzzNegotiate checks that any Accept header negotiates without panicking, to JSON
// or YAML only, with a known conversion only, and that JSON is chosen whenever the
// header names plain application/json with the highest q.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "*/*", "*", "application/json", "application/yaml;q=0.9, application/json;q=0.1",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
		"text/html;q=abc", "application/json;q=0, application/yaml", ";;,,=;", "a/b/c;q=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		tg, ok := negotiateTarget(accept, true)
		if !ok {
			return
		}
		require.Contains(t, []string{resource.MediaTypeJSON, resource.MediaTypeYAML}, tg.mediaType)
		require.Contains(t, []string{"", asTable, asPartial, asPartialList}, tg.as)
		plain, ok := negotiateTarget(accept, false)
		if ok {
			require.Empty(t, plain.as)
		}
	})
}

// FuzzLookupPath checks that any path on any JSON document returns without panicking,
// and that a path of one key finds that key's value (any key without the path's
// punctuation or the spaces kube's JSONPath skips: " ", tab, CR, LF).
func FuzzLookupPath(f *testing.F) {
	f.Add(`{"a":{"b":[1,{"c":"x"}]}}`, ".a.b[1].c")
	f.Add(`{"a":1}`, "{.a}")
	f.Add(`[1,2]`, "[5]")
	f.Add(`{"a":null}`, ".a.b")
	f.Fuzz(func(t *testing.T, doc, path string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		_ = lookupPath(v, path)
		if m, ok := v.(map[string]any); ok {
			for k, want := range m {
				if k != "" && !containsAny(k, ".[]{}$ \t\r\n") {
					require.Equal(t, want, lookupPath(v, "."+k))
				}
			}
		}
	})
}

func containsAny(s, chars string) bool {
	for _, c := range s {
		for _, d := range chars {
			if c == d {
				return true
			}
		}
	}
	return false
}

// protoMsg encodes length-delimited fields (number, bytes) as protobuf, for tests.
func protoMsg(fields ...any) []byte {
	var b []byte
	for i := 0; i+1 < len(fields); i += 2 {
		num, data := fields[i].(int), fields[i+1]
		var d []byte
		switch v := data.(type) {
		case string:
			d = []byte(v)
		case []byte:
			d = v
		}
		b = append(b, byte(num<<3|2))
		for l := len(d); ; l >>= 7 {
			if l < 0x80 {
				b = append(b, byte(l))
				break
			}
			b = append(b, byte(l&0x7f|0x80))
		}
		b = append(b, d...)
	}
	return b
}

// TestDecodeAccessReviewProtobuf decodes a SelfSubjectAccessReview as kubectl sends
// it, in protobuf, and refuses malformed ones.
func TestDecodeAccessReviewProtobuf(t *testing.T) {
	ra := protoMsg(1, "ns", 2, "get", 3, "example.com", 5, "widgets", 7, "w1")
	spec := protoMsg(1, ra)
	obj := append(protoMsg(1, protoMsg(), 2, spec), 0x18, 0x01) // a varint field 3, skipped
	body := append(append([]byte{}, protobufMagic...), protoMsg(1, protoMsg(1, "authorization.k8s.io/v1", 2, "SelfSubjectAccessReview"), 2, obj)...)

	av, kind, raw, err := decodeProtobufEnvelope(body)
	require.NoError(t, err)
	require.Equal(t, "authorization.k8s.io/v1", av)
	require.Equal(t, "SelfSubjectAccessReview", kind)
	var got selfSubjectAccessReview
	require.NoError(t, decodeAccessReviewSpec(raw, &got))
	require.Equal(t, &resourceAttributes{Namespace: "ns", Verb: "get", Group: "example.com", Resource: "widgets", Name: "w1"},
		got.Spec.ResourceAttributes)
	require.Nil(t, got.Spec.NonResourceAttributes)

	var nr selfSubjectAccessReview
	require.NoError(t, decodeAccessReviewSpec(protoMsg(2, protoMsg(2, protoMsg(1, "/version", 2, "get"))), &nr))
	require.Equal(t, &nonResourceAttributes{Path: "/version", Verb: "get"}, nr.Spec.NonResourceAttributes)

	for name, bad := range map[string][]byte{
		"no magic":            protoMsg(1, protoMsg()),
		"truncated length":    append(append([]byte{}, protobufMagic...), 0x0a, 0x05, 'a'),
		"field number 0":      append(append([]byte{}, protobufMagic...), 0x02, 0x00),
		"a group":             append(append([]byte{}, protobufMagic...), 0x0b),
		"truncated varint":    append(append([]byte{}, protobufMagic...), 0x08, 0x80),
		"bad inner type meta": append(append([]byte{}, protobufMagic...), protoMsg(1, []byte{0x0a, 0x09})...),
	} {
		_, _, _, err := decodeProtobufEnvelope(bad)
		require.Error(t, err, name)
	}
}

// FuzzProtobufReview checks that any body decodes as a review envelope and spec
// without panicking.
func FuzzProtobufReview(f *testing.F) {
	f.Add(append(append([]byte{}, protobufMagic...), protoMsg(1, protoMsg(1, "v", 2, "k"), 2, protoMsg(2, protoMsg(1, protoMsg(2, "get"))))...))
	f.Add([]byte("k8s\x00\x0a\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, raw, err := decodeProtobufEnvelope(body)
		if err != nil {
			return
		}
		var out selfSubjectAccessReview
		_ = decodeAccessReviewSpec(raw, &out)
	})
}
