package resource

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// Media types the codec reads and writes.
const (
	// MediaTypeJSON is the JSON media type.
	MediaTypeJSON = "application/json"
	// MediaTypeYAML is the YAML media type; text/yaml and application/x-yaml are read
	// as well.
	MediaTypeYAML = "application/yaml"
)

// Codec defaults.
const (
	// DefaultMaxBytes is the default body limit: 3 MiB, as kube-apiserver has it.
	DefaultMaxBytes int64 = 3 << 20
	// DefaultMaxDepth is the default nesting limit of a body: objects and arrays
	// inside each other, the top-level object counting as 1.
	DefaultMaxDepth = 100
	// MaxDepthLimit is the highest MaxDepth a codec accepts; higher values are
	// lowered to it. It is the YAML parser's own limit.
	MaxDepthLimit = 10000
)

// maxStrictErrors caps how many duplicate and unknown fields one error lists.
const maxStrictErrors = 20

// CodecOptions are the limits of a [Codec]. Zero values select the defaults.
type CodecOptions struct {
	// MaxBytes is the largest body accepted, in bytes; 0 means [DefaultMaxBytes]. A YAML
	// body must also fit in it once converted to JSON.
	MaxBytes int64
	// MaxDepth is how deeply objects and arrays may nest; 0 means [DefaultMaxDepth].
	MaxDepth int
}

// Codec decodes request bodies into typed objects and encodes objects for responses.
// It is safe for concurrent use.
type Codec struct {
	scheme   *Scheme
	maxBytes int64
	maxDepth int
}

// NewCodec returns a codec for the kinds of s (a nil s means [NewScheme]) with the
// given limits.
func NewCodec(s *Scheme, opts CodecOptions) *Codec {
	if s == nil {
		s = NewScheme()
	}
	c := &Codec{scheme: s, maxBytes: opts.MaxBytes, maxDepth: opts.MaxDepth}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.maxDepth <= 0 {
		c.maxDepth = DefaultMaxDepth
	}
	if c.maxDepth > MaxDepthLimit {
		c.maxDepth = MaxDepthLimit
	}
	return c
}

// Scheme returns the scheme the codec resolves kinds with.
func (c *Codec) Scheme() *Scheme { return c.scheme }

// MaxBytes returns the body limit in force.
func (c *Codec) MaxBytes() int64 { return c.maxBytes }

// MaxDepth returns the nesting limit in force.
func (c *Codec) MaxDepth() int { return c.maxDepth }

func (c *Codec) tooLarge() *StatusError {
	return NewRequestEntityTooLarge(fmt.Sprintf("the request body is too large: limit is %d bytes", c.maxBytes))
}

// ReadBody reads a request body, at most MaxBytes+1 bytes of it: a longer body is 413
// RequestEntityTooLarge (so is an [http.MaxBytesError] from the reader), any other
// read error is 400 BadRequest.
func (c *Codec) ReadBody(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	limit := c.maxBytes
	if limit < math.MaxInt64 {
		limit++
	}
	b, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, c.tooLarge().WithCause(err)
		}
		return nil, NewBadRequest("reading the request body: " + err.Error()).WithCause(err)
	}
	if int64(len(b)) > c.maxBytes {
		return nil, c.tooLarge()
	}
	return b, nil
}

type bodyFormat int

const (
	formatJSON bodyFormat = iota
	formatYAML
)

// parseMediaType maps a content type to a format. ok is false for any other type, a
// malformed one, or a charset other than UTF-8.
func parseMediaType(ct string) (bodyFormat, bool) {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return 0, false
	}
	switch mt {
	case MediaTypeJSON:
		return formatJSON, true
	case MediaTypeYAML, "text/yaml", "application/x-yaml":
		return formatYAML, true
	}
	return 0, false
}

// sniff picks JSON when the first byte that is not white space is '{', else YAML.
func sniff(data []byte) bodyFormat {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return formatJSON
	}
	return formatYAML
}

// Decode reads one object from data. contentType is application/json or
// application/yaml (also text/yaml and application/x-yaml), with optional parameters
// such as "; charset=utf-8"; an empty content type is sniffed (JSON when the body
// starts with '{', else YAML); any other is 415 UnsupportedMediaType.
//
// Decoding is strict: unknown fields (matched case-sensitively) and duplicate keys are
// 400 BadRequest naming the fields; so are malformed or truncated input, invalid UTF-8,
// nesting deeper than MaxDepth, a YAML body with more than one document, YAML map keys
// that are not strings, YAML tags other than the core ones, and values of the wrong
// type. A body over MaxBytes is 413 RequestEntityTooLarge.
//
// The kind comes from the body's apiVersion and kind. When expected is given, a missing
// apiVersion or kind is taken from it, and one that differs from it is 400; when it is
// nil, both must be in the body and registered in the scheme, else 400. The result is
// the registered Go type (a pointer) with its TypeMeta set.
func (c *Codec) Decode(data []byte, contentType string, expected *KindInfo) (Object, error) {
	if int64(len(data)) > c.maxBytes {
		return nil, c.tooLarge()
	}
	var f bodyFormat
	if strings.TrimSpace(contentType) == "" {
		f = sniff(data)
	} else {
		var ok bool
		if f, ok = parseMediaType(contentType); !ok {
			return nil, NewUnsupportedMediaType(contentType)
		}
	}
	if !utf8.Valid(data) {
		return nil, NewBadRequest("the request body is not valid UTF-8")
	}
	js := data
	if f == formatYAML {
		var err error
		if js, err = c.yamlToJSON(data); err != nil {
			return nil, err
		}
	}
	obj, _, err := c.decodeJSON(js, expected, f == formatYAML, false)
	return obj, err
}

// DecodeLenient is [Codec.Decode] without the refusal of unknown fields and duplicate
// keys, as kube-apiserver decodes with fieldValidation Warn or Ignore: unknown fields
// are dropped, the last of duplicate JSON keys wins, and each such field is reported in
// unknown, in kube-apiserver's words (`unknown field "spec.foo"`, `duplicate field
// "metadata.name"`), at most 20 of them. Every other rule of Decode holds (a YAML body
// with a duplicate key is still 400).
func (c *Codec) DecodeLenient(data []byte, contentType string, expected *KindInfo) (obj Object, unknown []string, err error) {
	if int64(len(data)) > c.maxBytes {
		return nil, nil, c.tooLarge()
	}
	var f bodyFormat
	if strings.TrimSpace(contentType) == "" {
		f = sniff(data)
	} else {
		var ok bool
		if f, ok = parseMediaType(contentType); !ok {
			return nil, nil, NewUnsupportedMediaType(contentType)
		}
	}
	if !utf8.Valid(data) {
		return nil, nil, NewBadRequest("the request body is not valid UTF-8")
	}
	js := data
	if f == formatYAML {
		if js, err = c.yamlToJSON(data); err != nil {
			return nil, nil, err
		}
	}
	return c.decodeJSON(js, expected, f == formatYAML, true)
}

// DecodeInto is [Codec.Decode] into an existing object, whose Go type names the
// expected kind. into is overwritten only when decoding succeeds. A Go type the scheme
// does not know is 500 InternalError (a programming error).
func (c *Codec) DecodeInto(data []byte, contentType string, into Object) error {
	if into == nil {
		return NewInternalError(errors.New("resource: DecodeInto needs an object"))
	}
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return NewInternalError(fmt.Errorf("resource: DecodeInto needs a non-nil pointer, got %T", into))
	}
	k, err := c.scheme.KindOf(into)
	if err != nil {
		return NewInternalError(err)
	}
	obj, err := c.Decode(data, contentType, k)
	if err != nil {
		return err
	}
	ov := reflect.ValueOf(obj)
	if ov.Type() != rv.Type() {
		return NewInternalError(fmt.Errorf("resource: kind %s makes %T, not %T", k.Kind, obj, into))
	}
	rv.Elem().Set(ov.Elem())
	return nil
}

// Encode writes v as compact JSON (media type application/json, or empty) or as YAML
// (application/yaml, text/yaml, application/x-yaml), without HTML escaping. It writes
// v as it is: an object's TypeMeta is not filled in. Any other media type is 406
// NotAcceptable; a value that cannot be encoded is 500 InternalError.
func (c *Codec) Encode(v any, mediaType string) ([]byte, error) {
	f := formatJSON
	if strings.TrimSpace(mediaType) != "" {
		var ok bool
		if f, ok = parseMediaType(mediaType); !ok {
			return nil, NewNotAcceptable(mediaType)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, NewInternalError(fmt.Errorf("encoding %T: %w", v, err))
	}
	js := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if f == formatJSON {
		return js, nil
	}
	y, err := yaml.JSONToYAML(escapeYAMLUnprintable(js))
	if err != nil {
		return nil, NewInternalError(fmt.Errorf("encoding %T as YAML: %w", v, err))
	}
	return y, nil
}

// ---------------------------------------------------------------------------------
// YAML

// yamlUnprintable reports whether r must be escaped for YAML to read it back inside a
// string: DEL, the C1 controls (NEL is a line break to YAML) and U+FFFE/U+FFFF. JSON
// writes these raw; control characters below 0x20, U+2028 and U+2029 it escapes.
func yamlUnprintable(r rune) bool {
	return r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff
}

// escapeYAMLUnprintable rewrites the characters YAML cannot read raw as \uXXXX escapes.
// In JSON text they can only occur inside strings, where the escape means the same.
func escapeYAMLUnprintable(js []byte) []byte {
	if !bytes.ContainsFunc(js, yamlUnprintable) {
		return js
	}
	out := make([]byte, 0, len(js)+16)
	for len(js) > 0 {
		r, n := utf8.DecodeRune(js)
		if yamlUnprintable(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, js[:n]...)
		}
		js = js[n:]
	}
	return out
}

// yamlToJSON turns a single-document YAML body into JSON, rejecting what JSON cannot
// say or what the strict decoder must refuse.
func (c *Codec) yamlToJSON(data []byte) ([]byte, error) {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	dec.SetStrict(true)
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, NewBadRequest("the request body is empty")
		}
		return nil, NewBadRequest("the request body is not valid YAML: " + err.Error()).WithCause(err)
	}
	var extra any
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err == nil:
		return nil, NewBadRequest("the request body holds more than one YAML document; send exactly one")
	default:
		return nil, NewBadRequest("the request body holds more than one YAML document (the second is not valid: " +
			err.Error() + "); send exactly one").WithCause(err)
	}
	// A tag needs a '!'; most bodies have none and skip the second parse.
	if bytes.IndexByte(data, '!') >= 0 {
		if err := yamlv2.Unmarshal(data, &yamlTagProbe{}); err != nil {
			var te *yamlTagError
			if errors.As(err, &te) {
				return nil, NewBadRequest("the request body is not valid: " + te.Error()).WithCause(err)
			}
			return nil, NewBadRequest("the request body is not valid YAML: " + err.Error()).WithCause(err)
		}
	}
	if _, ok := doc.(map[any]any); !ok {
		return nil, NewBadRequest("the request body must be an object, got " + yamlKindName(doc))
	}
	budget := c.maxBytes
	tree, err := c.jsonable(doc, Path{}, 0, &budget)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(tree)
	if err != nil {
		return nil, NewBadRequest("the request body cannot be converted to JSON: " + err.Error()).WithCause(err)
	}
	return js, nil
}

func yamlKindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a sequence"
	case map[any]any:
		return "a mapping"
	}
	return fmt.Sprintf("a %T", v)
}

func pathOrRoot(p Path) string {
	if p.String() == "" {
		return "<root>"
	}
	return p.String()
}

// jsonable converts a decoded YAML value to a JSON-able one with string keys, checking
// depth, key types and the size its JSON form will have against the byte limit (alias
// expansion can make a small YAML body large).
func (c *Codec) jsonable(v any, p Path, depth int, budget *int64) (any, error) {
	spend := func(n int64) error {
		*budget -= n
		if *budget < 0 {
			return NewRequestEntityTooLarge(fmt.Sprintf(
				"the request body is too large: its JSON form exceeds the limit of %d bytes", c.maxBytes))
		}
		return nil
	}
	switch t := v.(type) {
	case nil:
		return nil, spend(4)
	case string:
		if !utf8.ValidString(t) {
			return nil, NewBadRequest(pathOrRoot(p) + ": string is not valid UTF-8")
		}
		return t, spend(int64(len(t)) + 2)
	case bool:
		return t, spend(5)
	case int, int64, uint64:
		return t, spend(20)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, NewBadRequest(pathOrRoot(p) + ": .nan and .inf have no JSON form")
		}
		return t, spend(24)
	case []any:
		if depth+1 > c.maxDepth {
			return nil, c.depthError()
		}
		if err := spend(2 + int64(len(t))); err != nil {
			return nil, err
		}
		arr := make([]any, len(t))
		for i, e := range t {
			ev, err := c.jsonable(e, p.Index(i), depth+1, budget)
			if err != nil {
				return nil, err
			}
			arr[i] = ev
		}
		return arr, nil
	case map[any]any:
		if depth+1 > c.maxDepth {
			return nil, c.depthError()
		}
		if err := spend(2 + int64(len(t))); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, NewBadRequest(fmt.Sprintf("%s: map key %s is %s, not a string; quote it",
					pathOrRoot(p), truncForMsg(fmt.Sprint(k)), yamlKindName(k)))
			}
			if !utf8.ValidString(ks) {
				return nil, NewBadRequest(pathOrRoot(p) + ": map key is not valid UTF-8")
			}
			if err := spend(int64(len(ks)) + 3); err != nil {
				return nil, err
			}
			ev, err := c.jsonable(e, p.Child(ks), depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[ks] = ev
		}
		return m, nil
	}
	return nil, NewBadRequest(fmt.Sprintf("%s: unsupported YAML value of type %T", pathOrRoot(p), v))
}

func (c *Codec) depthError() *StatusError {
	return NewBadRequest(fmt.Sprintf("the request body exceeded the max depth of %d nested objects and arrays", c.maxDepth))
}

// yamlTagError is a YAML tag the codec refuses.
type yamlTagError struct {
	line string
	tag  string
}

func (e *yamlTagError) Error() string {
	return fmt.Sprintf("%sYAML tag %s is not allowed", e.line, truncForMsg(e.tag))
}

// yamlCoreTags are the tags YAML resolves plain scalars and collections to on its own;
// written explicitly they cannot be told apart from the implicit ones, and they mean
// nothing JSON cannot say.
var yamlCoreTags = map[string]bool{
	"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!timestamp": true, "!!merge": true, "!!map": true, "!!seq": true,
}

// yamlTagProbe walks a YAML document with the YAML library's own decoder to find the
// tag of every node: decoding a node into a func value always fails with a type error
// that names the node's tag (the explicit one when there is one).
type yamlTagProbe struct{}

const cannotUnmarshal = "cannot unmarshal "

// UnmarshalYAML finds the node's tag, refuses one that is not a core tag, and walks
// the children of mappings and sequences.
func (yamlTagProbe) UnmarshalYAML(unmarshal func(any) error) error {
	var f func()
	err := unmarshal(&f)
	if err == nil {
		return nil
	}
	var te *yamlv2.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return err
	}
	msg := te.Errors[0]
	i := strings.Index(msg, cannotUnmarshal)
	if i < 0 {
		return fmt.Errorf("cannot determine a YAML tag: %s", msg)
	}
	tag := msg[i+len(cannotUnmarshal):]
	if j := strings.IndexByte(tag, ' '); j >= 0 {
		tag = tag[:j]
	}
	if !yamlCoreTags[tag] {
		return &yamlTagError{line: msg[:i], tag: tag}
	}
	switch tag {
	case "!!map":
		var m map[yamlTagProbe]yamlTagProbe
		return benignProbeErrors(unmarshal(&m))
	case "!!seq":
		var s []yamlTagProbe
		return benignProbeErrors(unmarshal(&s))
	}
	return nil
}

var probeTypeSuffix = "into " + reflect.TypeFor[yamlTagProbe]().String()

// benignProbeErrors drops the type errors of quoted scalars that read "null" or "~":
// the YAML library takes them for nulls and skips UnmarshalYAML, then fails to store
// the string in the probe. They carry no tag. Anything else is kept.
func benignProbeErrors(err error) error {
	var te *yamlv2.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var keep []string
	for _, m := range te.Errors {
		if !strings.HasSuffix(m, probeTypeSuffix) {
			keep = append(keep, m)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return &yamlv2.TypeError{Errors: keep}
}

// ---------------------------------------------------------------------------------
// JSON

type strictErrors struct {
	msgs []string
	// lenient collects the messages (up to the cap) without stopping the walk.
	lenient bool
}

func (s *strictErrors) add(what, path string) bool {
	if len(s.msgs) < maxStrictErrors {
		s.msgs = append(s.msgs, fmt.Sprintf("%s field %q", what, truncForMsg(path)))
	}
	return s.lenient || len(s.msgs) < maxStrictErrors
}

func (c *Codec) resolveKind(apiVersion, kind string, expected *KindInfo) (*KindInfo, error) {
	if expected != nil {
		if apiVersion != "" && apiVersion != expected.APIVersion() {
			return nil, NewBadRequest(fmt.Sprintf(
				"the API version in the data (%s) does not match the expected API version (%s)",
				truncForMsg(apiVersion), expected.APIVersion()))
		}
		if kind != "" && kind != expected.Kind {
			return nil, NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)",
				truncForMsg(kind), expected.Kind))
		}
		return expected, nil
	}
	var missing []string
	if apiVersion == "" {
		missing = append(missing, "apiVersion")
	}
	if kind == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return nil, NewBadRequest(fmt.Sprintf("the object has no %s, and the caller did not say which kind it expects",
			strings.Join(missing, " and ")))
	}
	k, ok := c.scheme.KindFor(apiVersion, kind)
	if !ok {
		return nil, NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q",
			truncForMsg(kind), truncForMsg(apiVersion)))
	}
	return k, nil
}

// decodeJSON decodes js; lenient reports unknown fields and duplicate keys instead of
// refusing them.
func (c *Codec) decodeJSON(js []byte, expected *KindInfo, fromYAML, lenient bool) (Object, []string, error) {
	// Pass 1: syntax, depth, duplicate keys, and the body's apiVersion and kind.
	scan := &jsonWalker{data: js, maxDepth: c.maxDepth, dups: true, top: true, strict: strictErrors{lenient: lenient}}
	if err := scan.document(nil); err != nil {
		if errors.Is(err, errStrictLimit) {
			return nil, nil, NewBadRequest("strict decoding error: " + strings.Join(scan.strict.msgs, ", "))
		}
		return nil, nil, err
	}
	k, err := c.resolveKind(scan.apiVersion, scan.kind, expected)
	if err != nil {
		return nil, nil, err
	}
	if k.New == nil {
		return nil, nil, NewInternalError(fmt.Errorf("resource: kind %s has no New function", k.Kind))
	}
	obj := k.New()
	ot := reflect.TypeOf(obj)
	if ot == nil || ot.Kind() != reflect.Pointer {
		return nil, nil, NewInternalError(fmt.Errorf("resource: kind %s: New returned %T, not a pointer", k.Kind, obj))
	}
	// Pass 2: keys that no field of the Go type has.
	check := &jsonWalker{data: js, maxDepth: c.maxDepth, strict: scan.strict}
	if err := check.document(ot.Elem()); err != nil && !errors.Is(err, errStrictLimit) {
		return nil, nil, err
	}
	// Duplicates first, then the unknown fields sorted, as kube-apiserver lists them.
	sort.Strings(check.strict.msgs[len(scan.strict.msgs):])
	if len(check.strict.msgs) > 0 && !lenient {
		return nil, nil, NewBadRequest("strict decoding error: " + strings.Join(check.strict.msgs, ", "))
	}
	if err := json.Unmarshal(js, obj); err != nil {
		return nil, nil, NewBadRequest(fmt.Sprintf("the request body could not be decoded as %s: %s",
			k.Kind, describeJSONError(err, fromYAML))).WithCause(err)
	}
	nilZeroTimes(reflect.ValueOf(obj).Elem())
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()
	return obj, check.strict.msgs, nil
}

func describeJSONError(err error, fromYAML bool) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		field := ute.Field
		if field == "" {
			field = "<root>"
		}
		msg := fmt.Sprintf("%s: cannot use %s as %s", field, ute.Value, ute.Type)
		if fromYAML && ute.Type != nil && ute.Type.Kind() == reflect.String && (ute.Value == "bool" || ute.Value == "number") {
			msg += " (YAML reads unquoted yes, no, on, off, y, n, true, false and numbers such as 1.10 as " +
				"booleans and numbers; quote the value to keep it a string)"
		}
		return msg
	}
	return err.Error()
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports whether values of t decode themselves, so their keys are not checked.
func opaque(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON names encoding/json decodes into a struct type, with the
// type of each; fields of embedded structs without a name are promoted, the shallowest
// one winning.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	type entry struct {
		t     reflect.Type
		depth int
	}
	found := map[string]entry{}
	var visit func(st reflect.Type, depth int, seen map[reflect.Type]bool)
	visit = func(st reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[st] {
			return
		}
		seen[st] = true
		defer delete(seen, st)
		for i := 0; i < st.NumField(); i++ {
			sf := st.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					visit(et, depth+1, seen)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if e, ok := found[name]; !ok || depth < e.depth {
				found[name] = entry{t: ft, depth: depth}
			}
		}
	}
	visit(t, 0, map[reflect.Type]bool{})
	out := make(map[string]reflect.Type, len(found))
	for k, e := range found {
		out[k] = e.t
	}
	fieldCache.Store(t, out)
	return out
}
