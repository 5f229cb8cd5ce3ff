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
// and that a path of one key finds that key's value.
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
				if k != "" && !containsAny(k, ".[]{}$ ") {
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
