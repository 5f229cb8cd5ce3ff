package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Group and Version are those of the example server, which the CRDs copy.
const (
	Group   = "management.service"
	Version = "v1"
)

// KindSpec is how a kind is served: its names, short name and scope, as the
// example server serves it (decisions §1), and the printer columns of issue 21.
type KindSpec struct {
	Kind, Plural, Schema, ShortName string
	Namespaced                      bool
	Columns                         []map[string]any
}

// crdKinds are the kinds a CRD mirrors. ProjectMigrateVirtualClusterInstance is a
// subresource of Project, which a CRD cannot have, so it has none.
var crdKinds = []KindSpec{
	{Kind: "Project", Plural: "projects", Schema: "project.json", ShortName: "proj", Columns: []map[string]any{
		{"name": "Display Name", "type": "string", "jsonPath": ".spec.displayName"},
		{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
	}},
	{Kind: "VirtualClusterInstance", Plural: "virtualclusterinstances", Schema: "virtualclusterinstance.json", ShortName: "vci", Namespaced: true, Columns: []map[string]any{
		{"name": "Project", "type": "string", "jsonPath": ".metadata.labels.management\\.service/project"},
		{"name": "Cluster", "type": "string", "jsonPath": ".spec.clusterRef.cluster"},
		{"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
		{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
	}},
	{Kind: "AccessKey", Plural: "accesskeys", Schema: "accesskey.json", ShortName: "ak", Columns: []map[string]any{
		{"name": "Subject", "type": "string", "jsonPath": ".spec.subject"},
		{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
	}},
	{Kind: "DirectClusterEndpointToken", Plural: "directclusterendpointtokens", Schema: "directclusterendpointtoken.json", ShortName: "dcet", Columns: []map[string]any{
		{"name": "Expires", "type": "date", "jsonPath": ".status.expirationTimestamp"},
		{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
	}},
}

// schemaSet is the schema documents by file name, decoded.
type schemaSet map[string]map[string]any

// loadSchemas reads every *.json of dir.
func loadSchemas(dir string) (schemaSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.json in %s", dir)
	}
	set := schemaSet{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		set[filepath.Base(f)] = m
	}
	return set, nil
}

// CRDs returns one CustomResourceDefinition (apiextensions.k8s.io/v1, as JSON-ready
// maps) per kind of crdKinds, its schema converted from the JSON Schema documents.
func (s schemaSet) CRDs() ([]map[string]any, error) {
	var out []map[string]any
	for _, k := range crdKinds {
		doc, ok := s[k.Schema]
		if !ok {
			return nil, fmt.Errorf("no schema %s", k.Schema)
		}
		// A CRD's schema may say nothing of metadata beyond name and generateName
		// (and ours is recursive, in managedFields' FieldsV1): it is replaced
		// before the conversion.
		doc = withPlainMetadata(doc)
		sch, err := s.structural(k.Schema, doc, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Schema, err)
		}
		root := sch.(map[string]any)
		delete(root, "required")
		props, _ := root["properties"].(map[string]any)
		// apiVersion and kind are plain strings.
		if props != nil {
			props["apiVersion"] = map[string]any{"type": "string"}
			props["kind"] = map[string]any{"type": "string"}
		}
		version := map[string]any{
			"name": Version, "served": true, "storage": true,
			"schema":                   map[string]any{"openAPIV3Schema": root},
			"additionalPrinterColumns": k.Columns,
		}
		if _, hasStatus := props["status"]; hasStatus {
			version["subresources"] = map[string]any{"status": map[string]any{}}
		}
		scope := "Cluster"
		if k.Namespaced {
			scope = "Namespaced"
		}
		out = append(out, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": k.Plural + "." + Group},
			"spec": map[string]any{
				"group": Group,
				"names": map[string]any{
					"plural": k.Plural, "singular": strings.ToLower(k.Kind), "kind": k.Kind, "listKind": k.Kind + "List",
					// The names kubectl knows ours by (their discovery), so that
					// discovery compares what matters.
					"shortNames": []string{k.ShortName}, "categories": []string{"management"},
				},
				"scope":    scope,
				"versions": []any{version},
			},
		})
	}
	return out, nil
}

// withPlainMetadata returns a copy of a kind's document whose metadata property is
// a plain object.
func withPlainMetadata(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if props, ok := doc["properties"].(map[string]any); ok {
		np := make(map[string]any, len(props))
		for k, v := range props {
			np[k] = v
		}
		if _, ok := np["metadata"]; ok {
			np["metadata"] = map[string]any{"type": "object"}
		}
		out["properties"] = np
	}
	return out
}

// dropped are the JSON Schema keywords a structural schema has no use for or does
// not allow; they only narrow validation, which the comparison does not need
// beyond what remains (types, enums, patterns, lengths, required, bounds).
var dropped = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$defs": true, "title": true,
	"additionalProperties": true, "propertyNames": true, "if": true, "then": true, "else": true,
	"not": true, "allOf": true, "anyOf": true, "oneOf": true, "contains": true, "minContains": true,
	"maxContains": true, "dependentRequired": true, "uniqueItems": true, "writeOnly": true,
	"deprecated": true, "const": true, "examples": true,
}

const maxExactFloat = 1 << 53

// structural converts one JSON Schema node of document doc into a structural
// OpenAPI v3 schema: $refs resolved and merged, allOf merged, const as a one-value
// enum, a type on every node, ["T","null"] as nullable, schema-valued
// additionalProperties kept (a map).
func (s schemaSet) structural(doc string, node map[string]any, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("$ref nesting deeper than 64")
	}
	merged, err := s.flatten(doc, node, depth)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range merged.node {
		if dropped[k] || strings.HasPrefix(k, "$") {
			continue
		}
		switch k {
		case "type":
			if list, ok := v.([]any); ok {
				var types []string
				for _, t := range list {
					if t == "null" {
						out["nullable"] = true
						continue
					}
					types = append(types, fmt.Sprint(t))
				}
				if len(types) != 1 {
					return nil, fmt.Errorf("type %v: a structural schema has one type", list)
				}
				v = types[0]
			}
			out[k] = v
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				pm, ok := p.(map[string]any)
				if !ok {
					continue
				}
				c, err := s.structural(merged.doc[name], pm, depth+1)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				props[name] = c
			}
			out[k] = props
		case "items":
			im, ok := v.(map[string]any)
			if !ok {
				continue
			}
			c, err := s.structural(merged.itemsDoc, im, depth+1)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			out[k] = c
		case "minimum", "maximum":
			if f, ok := v.(float64); ok && math.Abs(f) >= maxExactFloat {
				continue
			}
			out[k] = v
		default:
			out[k] = v
		}
	}
	if ap, ok := merged.node["additionalProperties"].(map[string]any); ok {
		c, err := s.structural(merged.apDoc, ap, depth+1)
		if err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
		out["additionalProperties"] = c
	}
	if c, ok := merged.node["const"]; ok {
		out["enum"] = []any{c}
	}
	if _, ok := out["type"]; !ok {
		t, err := inferType(out)
		if err != nil {
			return nil, err
		}
		out["type"] = t
	}
	return out, nil
}

// flat is a node with its $refs and allOfs merged in, and, for each child schema,
// the document its $refs are relative to.
type flat struct {
	node            map[string]any
	doc             map[string]string // property name → document
	itemsDoc, apDoc string
}

// flatten merges a node's $ref and allOf members into one node. The node's own
// keywords win over the referenced ones; properties are merged key by key.
func (s schemaSet) flatten(doc string, node map[string]any, depth int) (*flat, error) {
	f := &flat{node: map[string]any{}, doc: map[string]string{}, itemsDoc: doc, apDoc: doc}
	if ref, ok := node["$ref"].(string); ok {
		target, tdoc, err := s.resolve(doc, ref)
		if err != nil {
			return nil, err
		}
		sub, err := s.flatten(tdoc, target, depth+1)
		if err != nil {
			return nil, err
		}
		f.mergeFrom(sub)
	}
	if all, ok := node["allOf"].([]any); ok {
		for _, a := range all {
			am, ok := a.(map[string]any)
			if !ok {
				continue
			}
			sub, err := s.flatten(doc, am, depth+1)
			if err != nil {
				return nil, err
			}
			// allOf members only narrow validation (nameRequired): keep their
			// structure, not their conditionals.
			f.mergeFrom(sub)
		}
	}
	own := &flat{node: map[string]any{}, doc: map[string]string{}, itemsDoc: doc, apDoc: doc}
	for k, v := range node {
		if k == "$ref" || k == "allOf" {
			continue
		}
		own.node[k] = v
		if k == "properties" {
			for name := range v.(map[string]any) {
				own.doc[name] = doc
			}
		}
	}
	_, hasItems := node["items"]
	_, hasAP := node["additionalProperties"].(map[string]any)
	f.mergeFrom(own)
	if hasItems {
		f.itemsDoc = doc
	}
	if hasAP {
		f.apDoc = doc
	}
	return f, nil
}

func (f *flat) mergeFrom(o *flat) {
	for k, v := range o.node {
		if k == "properties" {
			props, _ := f.node["properties"].(map[string]any)
			merged := map[string]any{}
			for n, p := range props {
				merged[n] = p
			}
			for n, p := range v.(map[string]any) {
				if old, ok := merged[n].(map[string]any); ok {
					if pm, ok := p.(map[string]any); ok {
						// Both say something of the property: keep both, the newer as
						// an allOf member of the older so that flatten merges them.
						merged[n] = map[string]any{"allOf": []any{old, pm}}
						continue
					}
				}
				merged[n] = p
				f.doc[n] = o.doc[n]
			}
			f.node[k] = merged
			continue
		}
		f.node[k] = v
	}
	if _, ok := o.node["items"]; ok {
		f.itemsDoc = o.itemsDoc
	}
	if _, ok := o.node["additionalProperties"].(map[string]any); ok {
		f.apDoc = o.apDoc
	}
}

// resolve finds a $ref: "#/$defs/x" in doc, or "other.json#/$defs/x".
func (s schemaSet) resolve(doc, ref string) (map[string]any, string, error) {
	file, frag, _ := strings.Cut(ref, "#")
	if file == "" {
		file = doc
	}
	d, ok := s[file]
	if !ok {
		return nil, "", fmt.Errorf("$ref %q: no document %s", ref, file)
	}
	var cur any = d
	for _, part := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if part == "" {
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("$ref %q: %s is not an object", ref, part)
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("$ref %q: not found", ref)
	}
	return m, file, nil
}

// inferType gives a node without a type the one its enum or structure implies.
func inferType(n map[string]any) (string, error) {
	if e, ok := n["enum"].([]any); ok && len(e) > 0 {
		kinds := map[string]bool{}
		for _, v := range e {
			switch v.(type) {
			case string:
				kinds["string"] = true
			case bool:
				kinds["boolean"] = true
			case float64:
				kinds["number"] = true
			}
		}
		if len(kinds) == 1 {
			for k := range kinds {
				return k, nil
			}
		}
		keys := make([]string, 0, len(kinds))
		for k := range kinds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("enum of several types %v", keys)
	}
	if _, ok := n["properties"]; ok {
		return "object", nil
	}
	if _, ok := n["additionalProperties"]; ok {
		return "object", nil
	}
	if _, ok := n["items"]; ok {
		return "array", nil
	}
	return "", fmt.Errorf("no type in %s", render(n))
}
