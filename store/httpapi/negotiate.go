package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// mediaTypeOf returns the lower-case media type of a Content-Type, without
// parameters; a value that does not parse is returned as it is (and refused later).
func mediaTypeOf(contentType string) string {
	if strings.TrimSpace(contentType) == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt
}

func looksLikeJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	mediaType string // lower case, "*/*" and "application/*" included
	q         float64
	params    map[string]string
}

// parseAccept splits an Accept header into its media ranges, highest q first, the
// more specific first among equal q, in header order otherwise, as kube-apiserver
// orders them. A range that does not parse is dropped; a q that does not parse is 0.
func parseAccept(accept string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			// kube-apiserver reads "*" alone as "*/*".
			if strings.TrimSpace(strings.Split(part, ";")[0]) != "*" {
				continue
			}
			mt, params = "*/*", map[string]string{}
		}
		c := acceptClause{mediaType: mt, q: 1, params: params}
		if v, ok := params["q"]; ok {
			c.q, err = strconv.ParseFloat(v, 64)
			if err != nil {
				c.q = 0
			}
			delete(params, "q")
		}
		out = append(out, c)
	}
	specificity := func(mt string) int {
		switch {
		case mt == "*/*":
			return 0
		case strings.HasSuffix(mt, "/*"):
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].q != out[j].q {
			return out[i].q > out[j].q
		}
		return specificity(out[i].mediaType) > specificity(out[j].mediaType)
	})
	return out
}

// target is a negotiated response form: a media type, and the conversion asked for
// with "as" ("" for the object itself; Table, PartialObjectMetadata,
// PartialObjectMetadataList).
type target struct {
	mediaType string
	as        string
}

// mediaTypeFor maps an Accept media range to the media type served: JSON for JSON and
// the wildcards, YAML for the YAML types; "" for anything else (protobuf, CBOR).
func mediaTypeFor(mt string) string {
	switch mt {
	case resource.MediaTypeJSON, "*/*", "application/*":
		return resource.MediaTypeJSON
	case resource.MediaTypeYAML, "text/yaml", "application/x-yaml":
		return resource.MediaTypeYAML
	}
	return ""
}

// negotiateTarget picks the response form from the Accept header as kube-apiserver
// does: the first media range, by q-value, that the server can encode, JSON or YAML,
// with a conversion it knows (as=Table, PartialObjectMetadata or
// PartialObjectMetadataList of meta.k8s.io v1 or v1beta1) when one is named and
// conversions are allowed. An empty header gives JSON; ok is false when nothing is
// acceptable (406).
func negotiateTarget(accept string, conversions bool) (target, bool) {
	if strings.TrimSpace(accept) == "" {
		return target{mediaType: resource.MediaTypeJSON}, true
	}
	for _, c := range parseAccept(accept) {
		mt := mediaTypeFor(c.mediaType)
		if mt == "" {
			continue
		}
		as, g, v := c.params["as"], c.params["g"], c.params["v"]
		if as == "" && g == "" && v == "" {
			return target{mediaType: mt}, true
		}
		if !conversions || g != metaGroup || (v != "v1" && v != "v1beta1") {
			continue
		}
		switch as {
		case asTable, asPartial, asPartialList:
			return target{mediaType: mt, as: as}, true
		}
	}
	return target{}, false
}

// negotiate picks the media type of a response that is not converted (a Status, a
// document): JSON or YAML; ok is false when nothing acceptable is left.
func negotiate(accept string) (string, bool) {
	t, ok := negotiateTarget(accept, false)
	return t.mediaType, ok
}

// responseType negotiates the response form of a resource request, or answers 406.
func responseType(r *http.Request) (target, error) {
	t, ok := negotiateTarget(r.Header.Get("Accept"), true)
	if !ok {
		return target{}, resource.NewNotAcceptable(r.Header.Get("Accept"))
	}
	return t, nil
}

// setTypeMeta writes the kind and apiVersion the wire needs on an object.
func setTypeMeta(obj resource.Object, k *resource.KindInfo) {
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()
}

// setListTypeMeta writes kind and apiVersion on a list and on each of its items.
func setListTypeMeta(list resource.ObjectList, k *resource.KindInfo) {
	tm := list.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.ListKind, k.APIVersion()
	for i := 0; i < list.Len(); i++ {
		setTypeMeta(list.Item(i), k)
	}
}

// writeObject encodes v in the negotiated form (converted to a Table or metadata
// when Accept asks for it) with the given code.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, ri *route, code int, v any) {
	t, err := responseType(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if t.as != "" {
		if v, err = s.convert(r, ri.res, t.as, v, true); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	body, err := s.codec.Encode(v, t.mediaType)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", t.mediaType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// writeError answers with the Status of err (resource.StatusOf), in the negotiated
// media type, or JSON when none can be negotiated. 429 and 503 carry Retry-After.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := resource.StatusOf(err)
	st.Kind, st.APIVersion, st.Status = "Status", "v1", resource.StatusFailure
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	if st.Code >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "code", st.Code, "error", err)
	}
	mt, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		mt = resource.MediaTypeJSON
	}
	body, encErr := s.codec.Encode(st, mt)
	if encErr != nil {
		mt, body = resource.MediaTypeJSON, []byte(fmt.Sprintf(
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"internal error","code":%d}`, st.Code))
	}
	if st.Code == http.StatusTooManyRequests || st.Code == http.StatusServiceUnavailable {
		retry := int32(1)
		if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
			retry = st.Details.RetryAfterSeconds
		}
		w.Header().Set("Retry-After", itoa(int64(retry)))
	}
	w.Header().Set("Content-Type", mt)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(body)
}

// readBody reads a request body within the codec's limit: a declared length over it
// is 413 before anything is read, a body that grows past it is 413 too; a body with a
// Content-Encoding (gzip, ...) is 415, since none is accepted.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if ce := strings.TrimSpace(r.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, resource.NewStatusError(resource.ReasonUnsupportedMediaType,
			fmt.Sprintf("Content-Encoding %q is not supported", ce))
	}
	limit := s.codec.MaxBytes()
	if r.ContentLength > limit {
		return nil, resource.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", limit))
	}
	if r.Body == nil {
		return nil, nil
	}
	return s.codec.ReadBody(http.MaxBytesReader(nil, r.Body, limit+1))
}

// decodeObject reads one object of kind k from a request body. A body without a
// Content-Type (as "kubectl create --raw" sends it) is read as YAML, which covers
// JSON; JSON and YAML are the only types read (415 otherwise). With fieldValidation
// Strict, unknown fields and duplicate keys are 400; with Warn or Ignore they are
// dropped and returned as warnings. A body whose kind is another one of the
// endpoint's group version is 422 with a cause on kind, as kube-apiserver answers for
// a custom resource.
func (s *Server) decodeObject(r *http.Request, k *resource.KindInfo, fieldValidation string) (resource.Object, []string, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, nil, err
	}
	decode := func(ct string) (resource.Object, []string, error) {
		if fieldValidation == store.FieldValidationStrict {
			obj, err := s.codec.Decode(body, ct, k)
			return obj, nil, err
		}
		return s.codec.DecodeLenient(body, ct, k)
	}
	ct := r.Header.Get("Content-Type")
	var obj resource.Object
	var warnings []string
	switch mediaTypeOf(ct) {
	case "":
		obj, warnings, err = decode("")
		if err != nil && looksLikeJSON(body) && errors.Is(err, resource.ErrBadRequest) {
			// Not JSON after all: a YAML flow mapping.
			if obj2, w2, err2 := decode(resource.MediaTypeYAML); err2 == nil {
				return obj2, w2, nil
			}
		}
	case resource.MediaTypeJSON, resource.MediaTypeYAML, "text/yaml", "application/x-yaml":
		obj, warnings, err = decode(ct)
	default:
		return nil, nil, resource.NewUnsupportedMediaType(ct)
	}
	if err != nil && errors.Is(err, resource.ErrBadRequest) {
		if kerr := otherKind(body, k); kerr != nil {
			return nil, nil, kerr
		}
	}
	return obj, warnings, err
}

// otherKind returns the 422 of a body that names another kind of k's group version
// (nil when it does not): the cause is on kind.
func otherKind(body []byte, k *resource.KindInfo) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(body, &head); err != nil {
		return nil
	}
	if head.Kind == "" || head.Kind == k.Kind || (head.APIVersion != "" && head.APIVersion != k.APIVersion()) {
		return nil
	}
	return resource.NewInvalid(k, head.Metadata.Name, resource.ErrorList{
		resource.Invalid(resource.NewPath("kind"), head.Kind, "must be "+k.Kind)})
}

// addWarnings sets one Warning header per message, in the form kube-apiserver sends
// them (299 - "<text>"), each once; messages with control characters are dropped.
func addWarnings(w http.ResponseWriter, msgs []string) {
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m] || !utf8.ValidString(m) || strings.IndexFunc(m, unicode.IsControl) >= 0 {
			continue
		}
		seen[m] = true
		var b strings.Builder
		b.WriteString(`299 - "`)
		for _, c := range m {
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		}
		b.WriteByte('"')
		w.Header().Add("Warning", b.String())
	}
}
