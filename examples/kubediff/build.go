package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Paths and content types the cases use.
const (
	apiV1    = "/apis/" + Group + "/" + Version
	projects = apiV1 + "/projects"
	vcis     = apiV1 + "/namespaces/{ns}/virtualclusterinstances"
	allVCIs  = apiV1 + "/virtualclusterinstances"

	ctMerge = "application/merge-patch+json"
	ctJSONP = "application/json-patch+json"
	ctSMP   = "application/strategic-merge-patch+json"
	ctApply = "application/apply-patch+yaml"
	ctYAML  = "application/yaml"

	acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io"
	acceptPOM   = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
	acceptPOML  = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
)

// projectLabel is the label every VirtualClusterInstance carries (decisions §1);
// the cases send it, so that kube-apiserver stores what ours sets.
const projectLabel = "management.service/project"

func vci(name string) string { return vcis + "/" + name }

func project(name string) string { return projects + "/" + name }

// mergeJSON applies a JSON merge patch (RFC 7386) to base; both are JSON texts.
func mergeJSON(base, patch string) string {
	var b, p any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		panic(fmt.Sprintf("mergeJSON base: %v", err))
	}
	if patch != "" {
		if err := json.Unmarshal([]byte(patch), &p); err != nil {
			panic(fmt.Sprintf("mergeJSON patch %s: %v", patch, err))
		}
		b = mergeValue(b, p)
	}
	out, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func mergeValue(b, p any) any {
	pm, ok := p.(map[string]any)
	if !ok {
		return p
	}
	bm, ok := b.(map[string]any)
	if !ok {
		bm = map[string]any{}
	}
	out := make(map[string]any, len(bm))
	for k, v := range bm {
		out[k] = v
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergeValue(out[k], v)
	}
	return out
}

// vciBody is a VirtualClusterInstance named name in the case's namespace, with
// patch merged in.
func vciBody(name, patch string) string {
	base := `{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance",
	"metadata":{"name":"` + name + `","namespace":"{ns}","labels":{"` + projectLabel + `":"{p}"}},
	"spec":{"displayName":"Instance","clusterRef":{"cluster":"c1","namespace":"vc","virtualCluster":"vc1"}}}`
	return mergeJSON(base, patch)
}

// projectBody is a Project named name, labelled kd={p} so that a case lists only
// its own projects, with patch merged in.
func projectBody(name, patch string) string {
	base := `{"apiVersion":"management.service/v1","kind":"Project",
	"metadata":{"name":"` + name + `","labels":{"kd":"{p}"}},"spec":{"displayName":"Project"}}`
	return mergeJSON(base, patch)
}

// Step constructors.

func setupProject() Step {
	return Step{Label: "setup-project", Method: "POST", Path: projects, Body: projectBody("{p}", ""), Setup: true}
}

func setupVCI(label, name, patch string) Step {
	return Step{Label: label, Method: "POST", Path: vcis, Body: vciBody(name, patch), Setup: true}
}

func post(label, path, body string) Step {
	return Step{Label: label, Method: "POST", Path: path, Body: body}
}

func get(label, path string) Step { return Step{Label: label, Path: path} }

func put(label, path, body string) Step {
	return Step{Label: label, Method: "PUT", Path: path, Body: body}
}

func patch(label, path, ct, body string) Step {
	return Step{Label: label, Method: "PATCH", Path: path, Body: body, Header: map[string]string{"Content-Type": ct}}
}

func del(label, path, query string) Step {
	return Step{Label: label, Method: "DELETE", Path: path, Query: query}
}

func withQuery(s Step, q string) Step { s.Query = q; return s }

func withHeader(s Step, k, v string) Step {
	h := map[string]string{}
	for a, b := range s.Header {
		h[a] = b
	}
	h[k] = v
	s.Header = h
	return s
}

func setup(s Step) Step { s.Setup = true; return s }

func after(d time.Duration, s Step) Step { s.Wait = d; return s }

// watch opens a watch on path with query (watch=1 added) while then runs, and
// collects n events.
func watch(label, path, query string, n int, then ...Step) Step {
	q := "watch=1"
	if query != "" {
		q += "&" + query
	}
	return Step{Label: label, Path: path, Query: q, Watch: &WatchSpec{Then: then, Events: n}}
}

// sel is a query parameter, escaped.
// The braces of placeholders stay unescaped, so that they are expanded.
func sel(key, value string) string {
	return key + "=" + strings.NewReplacer("%7B", "{", "%7D", "}").Replace(url.QueryEscape(value))
}

// pickResource returns a Pick that keeps one resource of an APIResourceList.
func pickResource(name string) func(any) any {
	return func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		list, _ := m["resources"].([]any)
		for _, r := range list {
			if rm, ok := r.(map[string]any); ok && rm["name"] == name {
				out := map[string]any{}
				for k, x := range rm {
					switch k {
					case "storageVersionHash":
						x = "<hash>"
					case "verbs":
						x = sortedStrings(x)
					}
					out[k] = x
				}
				return out
			}
		}
		return map[string]any{"missing": name}
	}
}

// pickKeys keeps the named keys of an object.
func pickKeys(keys ...string) func(any) any {
	return func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for _, k := range keys {
			if x, ok := m[k]; ok {
				out[k] = x
			}
		}
		return out
	}
}

// sortedStrings sorts a list of strings (discovery's verbs are a set).
func sortedStrings(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	ss := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return v
		}
		ss = append(ss, s)
	}
	sort.Strings(ss)
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// jsonUnmarshal decodes s into v.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
