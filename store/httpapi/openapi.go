package httpapi

import (
	"bytes"
	"crypto/sha512"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
)

// commonSchema is a copy of the schema package's schemas/common.json: the definitions
// the kinds' schemas refer to. The schema package exports each kind's document
// (Validator.Source) but not this one; a test checks that the copy is identical.
//
//go:embed common.json
var commonSchema []byte

const metaPrefix = "io.k8s.apimachinery.pkg.apis.meta.v1."

// schemaPrefix is the prefix of a group version's schema names, the group reversed
// as Kubernetes names them ("service.management.v1." for management.service/v1).
func schemaPrefix(group, version string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "."
}

// buildOpenAPI generates the OpenAPI 3.0 document of the group from the kinds' JSON
// Schemas (draft 2020-12, converted to the OpenAPI 3.0 schema dialect), with the
// operations and query parameters kubectl looks for: x-kubernetes-group-version-kind
// on each operation and each kind's schema (kubectl explain), and the fieldValidation
// parameter on PATCH (kubectl then leaves validation to the server).
func buildOpenAPI(reg *schema.Registry, g *servedGroup, base, title string) (*document, error) {
	schemaPrefix := schemaPrefix(g.name, g.version)
	commonPrefix := schemaPrefix + "common."
	var common map[string]any
	if err := unmarshalNumbers(commonSchema, &common); err != nil {
		return nil, fmt.Errorf("httpapi: common schema: %w", err)
	}
	defs, _ := common["$defs"].(map[string]any)
	conv := newConverter(defs, commonPrefix)
	schemas := map[string]any{}
	for name := range defs {
		conv.def(name)
	}
	for name, comp := range conv.names {
		if comp != "" {
			schemas[comp] = conv.done[name]
		}
	}
	for name, v := range metaSchemas() {
		schemas[metaPrefix+name] = v
	}

	paths := map[string]any{}
	root := "/apis/" + g.groupVersion()
	addKind := func(k *resource.KindInfo) error {
		v, ok := reg.Validator(k.GVK())
		if !ok {
			return fmt.Errorf("httpapi: no JSON Schema for %s", k.Kind)
		}
		var doc map[string]any
		if err := unmarshalNumbers(v.Source(), &doc); err != nil {
			return fmt.Errorf("httpapi: schema of %s: %w", k.Kind, err)
		}
		s := conv.convert(doc).(map[string]any)
		// The kind's description is the document's, not its title.
		delete(s, "description")
		if d, ok := doc["description"].(string); ok {
			s["description"] = d
		} else if t, ok := doc["title"].(string); ok {
			s["description"] = t
		}
		s["x-kubernetes-group-version-kind"] = []any{gvkExt(k, k.Kind)}
		schemas[schemaPrefix+k.Kind] = s
		schemas[schemaPrefix+k.ListKind] = map[string]any{
			"description": k.ListKind + " is a list of " + k.Kind + ".",
			"type":        "object",
			"required":    []any{"items"},
			"properties": map[string]any{
				"apiVersion": map[string]any{"type": "string", "description": "APIVersion of the list."},
				"kind":       map[string]any{"type": "string", "description": "Kind of the list."},
				"metadata":   ref(metaPrefix + "ListMeta"),
				"items":      map[string]any{"type": "array", "items": ref(schemaPrefix + k.Kind)},
			},
			"x-kubernetes-group-version-kind": []any{gvkExt(k, k.ListKind)},
		}
		return nil
	}
	for _, sr := range g.resources {
		k := sr.kind
		if err := addKind(k); err != nil {
			return nil, err
		}
		has := func(v string) bool {
			for _, x := range sr.verbs {
				if x == v {
					return true
				}
			}
			return false
		}
		coll, item := root+"/"+k.Resource, root+"/"+k.Resource+"/{name}"
		nsParam := []any{}
		if k.Namespaced {
			// The list across all namespaces.
			paths[coll] = map[string]any{"get": listOp(k, true)}
			coll = root + "/namespaces/{namespace}/" + k.Resource
			item = root + "/namespaces/{namespace}/" + k.Resource + "/{name}"
			nsParam = []any{pathParam("namespace", "object name and auth scope, such as for teams and projects")}
		}
		cp := map[string]any{"parameters": nsParam}
		if has("list") {
			cp["get"] = listOp(k, false)
		}
		if has("create") {
			cp["post"] = writeOp(k, "post", "create")
		}
		if has("deletecollection") {
			cp["delete"] = deleteCollectionOp(k)
		}
		paths[coll] = cp
		ip := map[string]any{"parameters": append(append([]any{}, nsParam...), pathParam("name", "name of the "+k.Kind))}
		if has("get") {
			ip["get"] = getOp(k, "")
		}
		if has("update") {
			ip["put"] = writeOp(k, "put", "update")
		}
		if has("delete") {
			ip["delete"] = deleteOp(k)
		}
		if has("patch") {
			ip["patch"] = patchOp(k, "")
		} else {
			// kubectl decides whether the server validates fields (fieldValidation) by
			// looking for the PATCH operation of the kind. A kind without patch is listed
			// with an operation that answers 405, so that "kubectl create -f" of it works.
			op := patchOp(k, "")
			op["description"] = "not supported: answers 405 MethodNotAllowed. Listed so that clients find the " +
				"query parameters of the kind (fieldValidation)."
			op["operationId"] = "unsupportedPatch" + k.Kind
			ip["patch"] = op
		}
		paths[item] = ip
		if len(sr.statusVerbs) > 0 {
			sp := map[string]any{"parameters": ip["parameters"]}
			for _, v := range sr.statusVerbs {
				switch v {
				case "get":
					sp["get"] = getOp(k, "status")
				case "update":
					sp["put"] = withSub(writeOp(k, "put", "update"), "status")
				case "patch":
					sp["patch"] = patchOp(k, "Status")
				}
			}
			paths[item+"/status"] = sp
		}
		for _, sub := range sr.subList {
			if err := addKind(sub.kind); err != nil {
				return nil, err
			}
			op := writeOp(sub.kind, "post", "create")
			op["operationId"] = "create" + k.Kind + upperFirst(sub.Name)
			if sub.Description != "" {
				op["description"] = sub.Description
			}
			paths[item+"/"+sub.Name] = map[string]any{
				"parameters": ip["parameters"],
				"post":       op,
			}
		}
	}

	if title == "" {
		title = g.name
	}
	doc := map[string]any{
		"openapi": "3.0.0",
		"info": map[string]any{"title": title, "version": g.version,
			"description": "Generated from the JSON Schemas of the served kinds."},
		"servers": []any{map[string]any{"url": base}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"BearerToken": map[string]any{"type": "apiKey", "in": "header", "name": "authorization",
					"description": "Bearer access key: \"Bearer <key>\""},
			},
		},
		"security": []any{map[string]any{"BearerToken": []any{}}},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	sum := sha512.Sum512(buf.Bytes())
	return &document{body: bytes.TrimSpace(buf.Bytes()), hash: strings.ToUpper(hex.EncodeToString(sum[:]))}, nil
}

func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func gvkExt(k *resource.KindInfo, kind string) map[string]any {
	return map[string]any{"group": k.Group, "version": k.Version, "kind": kind}
}

func isEmptySchema(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for key := range m {
		if key != "description" {
			return false
		}
	}
	return true
}

// converter turns a draft 2020-12 JSON Schema into the OpenAPI 3.0 schema dialect:
// const becomes a one-value enum, a type list with "null" becomes nullable, $ref to
// common.json#/$defs/x becomes #/components/schemas/<common>x (wrapped in allOf when it
// has siblings, which 3.0 would ignore), and keywords 3.0 does not have (if/then,
// propertyNames, $comment, ...) are left out. Validation stays with the server, which
// checks the full schema on every write; the document is for clients (explain, field
// discovery).
//
// A reference to a definition of common.json becomes a reference to a named schema
// when the definition is an object with properties, named in UpperCamelCase (kubectl
// explain prints the name as the field's type, "<Owner>"), or meta.k8s.io's name for
// the object metadata and its parts; any other definition (a string rule, a map, an
// enum) is written in place, so that explain prints its type ("<string>",
// "<map[string]string>"). A definition that converts to nothing (an if/then rule) is
// left out with the references to it.
type converter struct {
	commonPrefix string         // the schema name prefix of common.json's definitions
	defs         map[string]any // common.json's definitions, as written
	done         map[string]any // converted definitions
	busy         map[string]bool
	names        map[string]string // definition → its schema name; "" when written in place
}

// metaNames are the definitions that are meta.k8s.io's types.
var metaNames = map[string]string{
	"objectMeta": "ObjectMeta", "clusterObjectMeta": "ObjectMeta",
	"ownerReference": "OwnerReference", "managedFieldsEntry": "ManagedFieldsEntry",
}

func newConverter(defs map[string]any, commonPrefix string) *converter {
	return &converter{commonPrefix: commonPrefix, defs: defs, done: map[string]any{}, busy: map[string]bool{},
		names: map[string]string{}}
}

// def converts a definition once and decides its name.
func (c *converter) def(name string) {
	if _, ok := c.done[name]; ok || c.busy[name] {
		return
	}
	d, ok := c.defs[name]
	if !ok {
		return
	}
	c.busy[name] = true
	if meta, ok := metaNames[name]; ok {
		// Named before converting, so that references from inside it resolve.
		c.names[name] = metaPrefix + meta
	}
	conv := c.convert(d)
	if name == "clusterObjectMeta" {
		// The metadata of every kind is ObjectMeta, as in Kubernetes; the server
		// checks what differs for cluster-scoped kinds.
		c.def("objectMeta")
		conv = c.done["objectMeta"]
	}
	delete(c.busy, name)
	c.done[name] = conv
	if _, named := c.names[name]; named {
		return
	}
	switch m, _ := conv.(map[string]any); {
	case isEmptySchema(conv):
		c.names[name] = ""
	case m != nil && m["properties"] != nil || c.refersTo(conv, name):
		c.names[name] = c.commonPrefix + upperFirst(name)
	default:
		c.names[name] = ""
	}
}

// refersTo reports whether a converted schema refers to the named definition (a
// recursive one must be named).
func (c *converter) refersTo(v any, name string) bool {
	switch t := v.(type) {
	case map[string]any:
		if r, ok := t["$ref"].(string); ok && strings.HasSuffix(r, "/"+c.commonPrefix+upperFirst(name)) {
			return true
		}
		for _, x := range t {
			if c.refersTo(x, name) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if c.refersTo(x, name) {
				return true
			}
		}
	}
	return false
}

// refTo is what a reference to a definition becomes: a $ref, the definition in place,
// or nil (nothing).
func (c *converter) refTo(name string) any {
	if c.busy[name] {
		// A definition that refers to itself: named.
		if _, ok := c.names[name]; !ok {
			c.names[name] = c.commonPrefix + upperFirst(name)
		}
		return map[string]any{"$ref": "#/components/schemas/" + c.names[name]}
	}
	c.def(name)
	comp, ok := c.names[name]
	switch {
	case !ok:
		return nil
	case comp != "":
		return map[string]any{"$ref": "#/components/schemas/" + comp}
	case isEmptySchema(c.done[name]):
		return nil
	}
	return deepCopyJSON(c.done[name])
}

func deepCopyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopyJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopyJSON(x)
		}
		return out
	}
	return v
}

var keptKeywords = map[string]bool{
	"type": true, "format": true, "description": true, "enum": true, "default": true, "pattern": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true, "maxProperties": true,
	"required": true, "readOnly": true, "writeOnly": true, "example": true, "nullable": true,
	// how lists merge (kubectl, server-side apply and strategic merge patch read them)
	"x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true,
	"x-kubernetes-patch-merge-key": true, "x-kubernetes-patch-strategy": true,
}

func (c *converter) convert(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for key, val := range m {
		switch {
		case keptKeywords[key]:
			out[key] = val
		case key == "const":
			out["enum"] = []any{val}
		case key == "properties":
			props := map[string]any{}
			if pm, ok := val.(map[string]any); ok {
				for name, ps := range pm {
					props[name] = c.convert(ps)
				}
			}
			out["properties"] = props
		case key == "items" || key == "not":
			out[key] = c.convert(val)
		case key == "additionalProperties":
			if b, ok := val.(bool); ok {
				out[key] = b
			} else {
				out[key] = c.convert(val)
			}
		case key == "allOf" || key == "anyOf" || key == "oneOf":
			var list []any
			if l, ok := val.([]any); ok {
				for _, e := range l {
					if ce := c.convert(e); !isEmptySchema(ce) {
						list = append(list, ce)
					}
				}
			}
			if len(list) > 0 {
				out[key] = list
			}
		case key == "exclusiveMinimum":
			out["minimum"], out["exclusiveMinimum"] = val, true
		case key == "exclusiveMaximum":
			out["maximum"], out["exclusiveMaximum"] = val, true
		case strings.HasPrefix(key, "x-kubernetes-"):
			out[key] = val
		}
	}
	if t, ok := out["type"].([]any); ok {
		var types []string
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" {
				types = append(types, s)
			} else if s == "null" {
				out["nullable"] = true
			}
		}
		delete(out, "type")
		if len(types) == 1 {
			out["type"] = types[0]
		}
	}
	inferType(out)
	// A field's doc is its title where its description is the rule its validation
	// explains itself with; both are shown.
	if t, ok := m["title"].(string); ok && t != "" {
		if d, ok := out["description"].(string); ok && d != "" && d != t {
			out["description"] = t + "\n\n" + d
		} else {
			out["description"] = t
		}
	}
	if r, ok := m["$ref"].(string); ok {
		name := r[strings.LastIndex(r, "/")+1:]
		target := c.refTo(name)
		tm, _ := target.(map[string]any)
		switch {
		case tm == nil:
		case len(out) == 0:
			return tm
		case tm["$ref"] == nil:
			// In place: the definition's keywords, the field's own on top.
			for k, v := range tm {
				if _, has := out[k]; !has {
					out[k] = v
				}
			}
		default:
			all, _ := out["allOf"].([]any)
			out["allOf"] = append([]any{tm}, all...)
		}
	}
	if all, ok := out["allOf"].([]any); ok && len(all) == 1 && out["type"] == nil && out["properties"] == nil {
		// allOf of one schema in place: its keywords, unless it is a reference (kept
		// as allOf, where a description sits beside it, as Kubernetes writes it).
		if am, ok := all[0].(map[string]any); ok && am["$ref"] == nil {
			delete(out, "allOf")
			for k, v := range am {
				if _, has := out[k]; !has {
					out[k] = v
				}
			}
		}
	}
	return out
}

// inferType gives a schema without a type the type of its enum's values (a const
// becomes an enum of one), so that clients print "<string>" rather than "<Object>".
func inferType(out map[string]any) {
	if _, ok := out["type"]; ok {
		return
	}
	enum, ok := out["enum"].([]any)
	if !ok || len(enum) == 0 {
		return
	}
	typ := ""
	for _, e := range enum {
		t := ""
		switch v := e.(type) {
		case string:
			t = "string"
		case bool:
			t = "boolean"
		case json.Number:
			t = "number"
			if _, err := v.Int64(); err == nil {
				t = "integer"
			}
		default:
			return
		}
		if typ != "" && typ != t {
			return
		}
		typ = t
	}
	out["type"] = typ
}

// Operation helpers. The parameter names and the x-kubernetes-action values follow
// kube-apiserver's documents.

func queryParam(name, typ, desc string) map[string]any {
	return map[string]any{"name": name, "in": "query", "description": desc, "schema": map[string]any{"type": typ},
		"uniqueItems": true}
}

func pathParam(name, desc string) map[string]any {
	return map[string]any{"name": name, "in": "path", "required": true, "description": desc,
		"schema": map[string]any{"type": "string"}, "uniqueItems": true}
}

var (
	pDryRun = queryParam("dryRun", "string", "When present, indicates that modifications should not be persisted. "+
		"The only valid value is All: all dry run stages are processed.")
	pFieldManager = queryParam("fieldManager", "string", "fieldManager is a name associated with the actor or "+
		"entity that is making these changes; at most 128 printable characters. Defaults to the product "+
		"token of the User-Agent.")
	pFieldValidation = queryParam("fieldValidation", "string", "What unknown and duplicate fields of the body "+
		"get: Ignore (dropped), Warn (dropped, with a Warning header each; the default) or Strict (refused).")
	pPretty = queryParam("pretty", "string", "Accepted and ignored.")
)

func listParams(watch bool) []any {
	ps := []any{
		queryParam("allowWatchBookmarks", "boolean", "Ask a watch for BOOKMARK events."),
		queryParam("continue", "string", "The continue token of the previous page of a list."),
		queryParam("fieldSelector", "string", "Select objects by metadata.name and metadata.namespace."),
		queryParam("labelSelector", "string", "Select objects by their labels."),
		queryParam("limit", "integer", "The most items to return; metadata.continue is set when more remain."),
		queryParam("resourceVersion", "string", "The resourceVersion the list is served at, or a watch starts after."),
		queryParam("resourceVersionMatch", "string", "NotOlderThan (the default) or Exact."),
		queryParam("sendInitialEvents", "boolean", "End the initial ADDED events of a watch with a bookmark."),
		queryParam("timeoutSeconds", "integer", "Timeout of a watch."),
		queryParam("watch", "boolean", "Watch for changes instead of listing."),
		pPretty,
	}
	return ps
}

func content(schemaName string) map[string]any {
	s := ref(schemaName)
	return map[string]any{
		"application/json": map[string]any{"schema": s},
		"application/yaml": map[string]any{"schema": s},
	}
}

func responses(code, schemaName string) map[string]any {
	return map[string]any{
		code:  map[string]any{"description": "OK", "content": content(schemaName)},
		"401": map[string]any{"description": "Unauthorized", "content": content(metaPrefix + "Status")},
	}
}

func tag(k *resource.KindInfo) []any { return []any{"management.service_v1_" + k.Kind} }

func listOp(k *resource.KindInfo, allNamespaces bool) map[string]any {
	id := "list" + k.Kind
	if allNamespaces {
		id += "ForAllNamespaces"
	}
	return map[string]any{
		"operationId":                     id,
		"description":                     "list or watch objects of kind " + k.Kind,
		"tags":                            tag(k),
		"parameters":                      listParams(true),
		"responses":                       responses("200", schemaName(k, k.ListKind)),
		"x-kubernetes-action":             "list",
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
}

func getOp(k *resource.KindInfo, sub string) map[string]any {
	op := map[string]any{
		"operationId":                     "read" + k.Kind + upperFirst(sub),
		"description":                     "read the specified " + k.Kind,
		"tags":                            tag(k),
		"parameters":                      []any{pPretty, queryParam("resourceVersion", "string", "Read a state not older than this resourceVersion.")},
		"responses":                       responses("200", schemaName(k, k.Kind)),
		"x-kubernetes-action":             "get",
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
	return op
}

func withSub(op map[string]any, sub string) map[string]any {
	op["operationId"] = op["operationId"].(string) + upperFirst(sub)
	return op
}

func writeOp(k *resource.KindInfo, method, action string) map[string]any {
	verb := map[string]string{"post": "create", "put": "replace"}[method]
	code := map[string]string{"post": "201", "put": "200"}[method]
	return map[string]any{
		"operationId": verb + k.Kind,
		"description": verb + " a " + k.Kind,
		"tags":        tag(k),
		"parameters":  []any{pDryRun, pFieldManager, pFieldValidation, pPretty},
		"requestBody": map[string]any{"required": true, "content": map[string]any{
			"*/*": map[string]any{"schema": ref(schemaName(k, k.Kind))}}},
		"responses":                       responses(code, schemaName(k, k.Kind)),
		"x-kubernetes-action":             map[string]string{"post": "post", "put": "put"}[method],
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
}

func patchOp(k *resource.KindInfo, sub string) map[string]any {
	p := map[string]any{"schema": ref(metaPrefix + "Patch")}
	return map[string]any{
		"operationId": "patch" + k.Kind + sub,
		"description": "partially update the specified " + k.Kind + " (JSON merge patch, JSON patch or " +
			"server-side apply)",
		"tags": tag(k),
		"parameters": []any{pDryRun, pFieldManager, pFieldValidation, pPretty,
			queryParam("force", "boolean", "Server-side apply only: take over the fields that conflict.")},
		"requestBody": map[string]any{"required": true, "content": map[string]any{
			"application/json-patch+json":  p,
			"application/merge-patch+json": p,
			"application/apply-patch+yaml": p,
		}},
		"responses":                       responses("200", schemaName(k, k.Kind)),
		"x-kubernetes-action":             "patch",
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
}

func deleteParams() []any {
	return []any{pDryRun, pPretty,
		queryParam("gracePeriodSeconds", "integer", "The grace period of the deletion, in seconds."),
		queryParam("propagationPolicy", "string", "Background (the default), Foreground or Orphan."),
	}
}

func deleteOp(k *resource.KindInfo) map[string]any {
	return map[string]any{
		"operationId": "delete" + k.Kind,
		"description": "delete a " + k.Kind + ": a Status when it is gone, the object when it is only marked " +
			"for deletion (finalizers, grace period)",
		"tags":       tag(k),
		"parameters": deleteParams(),
		"requestBody": map[string]any{"content": map[string]any{
			"*/*": map[string]any{"schema": ref(metaPrefix + "DeleteOptions")}}},
		"responses": map[string]any{
			"200": map[string]any{"description": "OK", "content": content(schemaName(k, k.Kind))},
			"202": map[string]any{"description": "Accepted", "content": content(schemaName(k, k.Kind))},
			"401": map[string]any{"description": "Unauthorized"},
		},
		"x-kubernetes-action":             "delete",
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
}

func deleteCollectionOp(k *resource.KindInfo) map[string]any {
	return map[string]any{
		"operationId": "deletecollection" + k.Kind,
		"description": "delete a collection of " + k.Kind,
		"tags":        tag(k),
		"parameters":  append(deleteParams(), listParams(false)...),
		"requestBody": map[string]any{"content": map[string]any{
			"*/*": map[string]any{"schema": ref(metaPrefix + "DeleteOptions")}}},
		"responses":                       responses("200", schemaName(k, k.ListKind)),
		"x-kubernetes-action":             "deletecollection",
		"x-kubernetes-group-version-kind": gvkExt(k, k.Kind),
	}
}

// metaSchemas are the meta.k8s.io/v1 types the operations use.
func metaSchemas() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	i64 := func(d string) map[string]any {
		return map[string]any{"type": "integer", "format": "int64", "description": d}
	}
	return map[string]any{
		"ListMeta": map[string]any{"type": "object", "description": "metadata of a list", "properties": map[string]any{
			"resourceVersion":    str("the revision the list was read at"),
			"continue":           str("the token of the next page, when more items remain"),
			"remainingItemCount": i64("the number of items after this page, when known"),
		}},
		"Patch": map[string]any{"type": "object",
			"description": "a JSON merge patch (RFC 7386) or a JSON patch (RFC 6902)"},
		"Preconditions": map[string]any{"type": "object", "properties": map[string]any{
			"uid": str("the object's uid must be this"), "resourceVersion": str("the object's resourceVersion must be this"),
		}},
		"DeleteOptions": map[string]any{"type": "object", "description": "options of a delete", "properties": map[string]any{
			"apiVersion":         str("v1 or meta.k8s.io/v1"),
			"kind":               str("DeleteOptions"),
			"dryRun":             map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"gracePeriodSeconds": i64("the grace period of the deletion"),
			"orphanDependents":   map[string]any{"type": "boolean", "description": "deprecated: use propagationPolicy"},
			"preconditions":      ref(metaPrefix + "Preconditions"),
			"propagationPolicy":  str("Background, Foreground or Orphan"),
		}, "x-kubernetes-group-version-kind": []any{
			map[string]any{"group": "", "kind": "DeleteOptions", "version": "v1"},
			map[string]any{"group": "meta.k8s.io", "kind": "DeleteOptions", "version": "v1"},
		}},
		"Status": map[string]any{"type": "object", "description": "the body of a failure, and of a removal",
			"properties": map[string]any{
				"apiVersion": str("v1"), "kind": str("Status"), "status": str("Success or Failure"),
				"message": str("a human-readable description"), "reason": str("the machine-readable reason"),
				"code":     map[string]any{"type": "integer", "format": "int32"},
				"details":  map[string]any{"type": "object"},
				"metadata": ref(metaPrefix + "ListMeta"),
			},
			"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "kind": "Status", "version": "v1"}},
		},
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// schemaName is the name of a schema of k's group version in the document.
func schemaName(k *resource.KindInfo, kind string) string {
	return schemaPrefix(k.Group, k.Version) + kind
}
