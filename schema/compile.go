package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// MaxSchemaSize is the largest schema document, in bytes, that [Registry.Register]
// accepts.
const MaxSchemaSize = 1 << 20

// maxSchemaDepth caps the nesting of a schema document before it is parsed.
const maxSchemaDepth = 2 * MaxDepth

// maxLintProblems is how many problems a refused schema reports at most.
const maxLintProblems = 10

// ErrInvalidSchema is matched (errors.Is) by every error of [Registry.Register] that
// refuses a schema document: malformed JSON, too large or too deep, an unknown or
// misplaced keyword, an unknown format, a reference outside the in-memory documents,
// or a document the draft 2020-12 metaschema rejects.
var ErrInvalidSchema = errors.New("schema: invalid schema")

// ErrExternalRef is matched (errors.Is) by the error of a schema that refers to a
// document that is not one of the in-memory documents: file://, http(s)://, or any
// other URL. Nothing is ever loaded from the file system or the network.
var ErrExternalRef = errors.New("schema: reference outside the in-memory schema documents")

// ErrAlreadyRegistered is matched (errors.Is) by the error of [Registry.Register] for a
// kind that already has a schema.
var ErrAlreadyRegistered = errors.New("schema: kind already has a schema")

// refuseLoad replaces the compiler's loader: every URL that is not an in-memory
// document fails, whatever its scheme.
func refuseLoad(u string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("%w: %q (only schemas added through the API are available)", ErrExternalRef, u)
}

// draft 2020-12 keywords, by vocabulary. Anything else is refused.
var keywords = map[string]bool{
	// core
	"$schema": true, "$id": true, "$ref": true, "$anchor": true, "$dynamicRef": true,
	"$dynamicAnchor": true, "$vocabulary": true, "$comment": true, "$defs": true,
	// applicator
	"prefixItems": true, "items": true, "contains": true, "additionalProperties": true,
	"properties": true, "patternProperties": true, "dependentSchemas": true,
	"propertyNames": true, "if": true, "then": true, "else": true, "allOf": true,
	"anyOf": true, "oneOf": true, "not": true,
	// unevaluated
	"unevaluatedItems": true, "unevaluatedProperties": true,
	// validation
	"type": true, "const": true, "enum": true, "multipleOf": true, "maximum": true,
	"exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true, "maxLength": true,
	"minLength": true, "pattern": true, "maxItems": true, "minItems": true,
	"uniqueItems": true, "maxContains": true, "minContains": true, "maxProperties": true,
	"minProperties": true, "required": true, "dependentRequired": true,
	// meta-data
	"title": true, "description": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "examples": true,
	// format-annotation (asserted by this package)
	"format": true,
	// content
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
	// Kubernetes' annotations of lists, which validation ignores: how server-side apply
	// and strategic merge patch merge a list (see ListInfo, and Registry.FieldType).
	"x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true,
	"x-kubernetes-patch-merge-key": true, "x-kubernetes-patch-strategy": true,
	MapTypeKeyword: true,
}

// Keywords whose value is one subschema, a map of subschemas or a list of them.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "propertyNames": true, "contains": true, "items": true,
		"not": true, "if": true, "then": true, "else": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true,
	}
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "dependentSchemas": true, "$defs": true,
	}
	schemaListKeywords = map[string]bool{
		"prefixItems": true, "allOf": true, "anyOf": true, "oneOf": true,
	}
)

// parseDocument checks the size and nesting of raw, decodes it and lints it. builtin
// allows a root "$id" equal to u (the embedded documents name themselves); known is
// the set of in-memory document URLs a reference may point to.
func parseDocument(u string, raw []byte, builtin bool, known map[string]bool) (*document, error) {
	if len(raw) > MaxSchemaSize {
		return nil, fmt.Errorf("%d bytes, more than the limit of %d", len(raw), MaxSchemaSize)
	}
	if depthExceeds(raw, maxSchemaDepth) {
		return nil, fmt.Errorf("nesting depth exceeds the limit of %d", maxSchemaDepth)
	}
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("a schema must be a JSON object or a boolean")
	}
	l := linter{base: u, builtin: builtin, known: known}
	l.schema(doc, nil)
	if len(l.problems) > 0 {
		probs := l.problems
		if len(probs) > maxLintProblems {
			probs = append(probs[:maxLintProblems:maxLintProblems], fmt.Sprintf("and %d more", len(l.problems)-maxLintProblems))
		}
		err := errors.New(strings.Join(probs, "; "))
		if l.external {
			err = fmt.Errorf("%w (%w)", err, ErrExternalRef)
		}
		return nil, err
	}
	return &document{url: u, raw: raw, doc: doc}, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

// linter walks a schema document and collects every keyword draft 2020-12 does not
// define, every misplaced core keyword, every format this package cannot assert and
// every reference outside the in-memory documents. The library ignores unknown
// keywords silently, so a typo such as "maxLenght" would otherwise disable a rule.
type linter struct {
	base     string
	builtin  bool
	known    map[string]bool
	problems []string
	external bool
}

func (l *linter) problem(ptr []string, format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...)+" at "+pointer(ptr))
}

func pointer(toks []string) string {
	if len(toks) == 0 {
		return "#"
	}
	var b strings.Builder
	b.WriteByte('#')
	for _, t := range toks {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

func child(ptr []string, toks ...string) []string {
	out := make([]string, 0, len(ptr)+len(toks))
	return append(append(out, ptr...), toks...)
}

func (l *linter) schema(v any, ptr []string) {
	m, ok := v.(map[string]any)
	if !ok {
		return // booleans are schemas; anything else is left to the metaschema
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := m[k]
		if !keywords[k] {
			l.problem(ptr, "unknown keyword %q", k)
			continue
		}
		switch k {
		case "$schema":
			s, _ := val.(string)
			if len(ptr) != 0 {
				l.problem(ptr, "%q is allowed only at the root", k)
			} else if strings.TrimSuffix(s, "#") != DraftURL {
				l.problem(ptr, "unsupported $schema %q: only %s is accepted", s, DraftURL)
			}
		case "$id":
			s, _ := val.(string)
			if !l.builtin || len(ptr) != 0 || s != l.base {
				l.problem(ptr, "%q is not allowed in a registered schema", k)
			}
		case "$vocabulary":
			l.problem(ptr, "%q is not allowed: only the draft 2020-12 vocabularies are supported", k)
		case "$ref", "$dynamicRef":
			if s, ok := val.(string); ok {
				l.ref(ptr, k, s)
			}
		case "format":
			if s, ok := val.(string); ok {
				if _, known := jsonschema.Formats[s]; !known {
					l.problem(ptr, "unknown format %q", s)
				}
			}
		}
		switch {
		case schemaKeywords[k]:
			l.schema(val, child(ptr, k))
		case schemaMapKeywords[k]:
			if sub, ok := val.(map[string]any); ok {
				names := make([]string, 0, len(sub))
				for n := range sub {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					l.schema(sub[n], child(ptr, k, n))
				}
			}
		case schemaListKeywords[k]:
			if sub, ok := val.([]any); ok {
				for i, s := range sub {
					l.schema(s, child(ptr, k, strconv.Itoa(i)))
				}
			}
		}
	}
}

// ref refuses a reference that does not resolve to an in-memory document, whether or
// not the compiler would ever follow it.
func (l *linter) ref(ptr []string, k, ref string) {
	base, err := url.Parse(l.base)
	if err != nil {
		l.problem(ptr, "invalid base URL %q", l.base)
		return
	}
	r, err := url.Parse(ref)
	if err != nil {
		l.problem(ptr, "invalid %s %q", k, ref)
		return
	}
	abs := base.ResolveReference(r)
	abs.Fragment, abs.RawFragment = "", ""
	if !l.known[abs.String()] {
		l.external = true
		l.problem(ptr, "%s %q is not an in-memory schema document", k, ref)
	}
}

// compile compiles the document at target with only docs available: format
// assertion on, the loader replaced so that nothing outside docs can be loaded. An
// error that comes from the loader matches ErrExternalRef.
func compile(docs []*document, target string) (s *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("compiler panic: %v", r)
		}
	}()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.AssertContent = false
	c.ExtractAnnotations = false
	c.LoadURL = refuseLoad
	for _, d := range docs {
		if err := c.AddResource(d.url, bytes.NewReader(d.raw)); err != nil {
			return nil, err
		}
	}
	s, err = c.Compile(target)
	if err != nil {
		var ve *jsonschema.ValidationError
		if !errors.Is(err, ErrExternalRef) && errors.As(err, &ve) {
			return nil, fmt.Errorf("the draft 2020-12 metaschema rejects it: %s", metaschemaMessage(ve))
		}
		return nil, err
	}
	return s, nil
}

// metaschemaMessage lists the leaf errors of a metaschema validation failure.
func metaschemaMessage(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			leaves = append(leaves, "#"+loc+": "+e.Message)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	leaves = dedupStrings(leaves)
	if len(leaves) > maxLintProblems {
		leaves = append(leaves[:maxLintProblems:maxLintProblems], fmt.Sprintf("and %d more", len(leaves)-maxLintProblems))
	}
	return strings.Join(leaves, "; ")
}

func dedupStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
