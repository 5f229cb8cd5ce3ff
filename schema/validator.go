package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/management-service/mgmt/resource"
)

// Validator validates objects of one kind against the kind's compiled schema. It is
// immutable and safe for concurrent use.
type Validator struct {
	gvk    resource.GroupVersionKind
	info   *resource.KindInfo
	schema *jsonschema.Schema
	docs   map[string]any // the parsed schema documents, for error messages
	source []byte
	root   string // the URL of the kind's document in docs

	fastOnce sync.Once
	fast     *fastNode // nil: no fast path (see fast.go)

	memo validMemo // large values that passed (see unchanged.go)
}

// fastPath returns the validator's fast path, compiled on first use, or nil.
func (v *Validator) fastPath() *fastNode {
	v.fastOnce.Do(func() {
		if n, err := compileFast(v.schema); err == nil {
			v.fast = n
		}
	})
	return v.fast
}

// GroupVersionKind returns the kind the validator checks.
func (v *Validator) GroupVersionKind() resource.GroupVersionKind { return v.gvk }

// Source returns a copy of the schema document the validator was compiled from. A
// built-in document refers to [CommonURL] for the shared definitions.
func (v *Validator) Source() []byte { return append([]byte(nil), v.source...) }

// Validate encodes obj as JSON, the form the store writes, and validates it. A nil
// error means valid. Otherwise the error is a *resource.StatusError: Invalid (422)
// with one cause per violation, each naming its field path (e.g.
// "spec.scope.rules[0].verbs[1]"); BadRequest (400) if obj cannot be encoded; or
// InternalError (500) if the validator itself fails.
//
// An absent "apiVersion" or "kind" is taken to be the validator's, as a body without
// them takes them from its endpoint.
func (v *Validator) Validate(obj resource.Object) error {
	return v.validateObject(obj, v.info)
}

func (v *Validator) validateObject(obj resource.Object, info *resource.KindInfo) error {
	return v.validateEncoded(func() ([]byte, error) { return json.Marshal(obj) }, info)
}

// validateEncoded validates the object encode encodes (json.Marshal's encoding).
func (v *Validator) validateEncoded(encode func() ([]byte, error), info *resource.KindInfo) error {
	data, err := encode()
	if err != nil {
		return resource.NewBadRequest(fmt.Sprintf("%s: the object cannot be encoded as JSON: %v", v.gvk.Kind, err)).WithCause(err)
	}
	return v.validate(data, info)
}

// ValidateJSON validates a JSON document the way [Validator.Validate] validates an
// object. Text that is not one JSON object is refused with BadRequest (400); a
// document nested deeper than [MaxDepth] is Invalid (422) without being validated.
// Duplicate keys are not detected here (the last one wins): strict decoding is the
// codec's job.
func (v *Validator) ValidateJSON(data []byte) error {
	return v.validate(data, v.info)
}

func (v *Validator) validate(data []byte, info *resource.KindInfo) (err error) {
	defer func() {
		if r := recover(); r != nil { // a host schema the library cannot evaluate
			err = resource.NewInternalError(fmt.Errorf("schema: validating %s: %v", v.gvk.Kind, r))
		}
	}()
	// The fast decoder refuses a document nested deeper than MaxDepth too, so that a
	// valid document is scanned once; the depth is checked only when it fails.
	doc, ok := decodeFastMax(data, MaxDepth)
	if !ok {
		if depthExceeds(data, MaxDepth) {
			return resource.NewInvalid(info, "", resource.ErrorList{
				resource.Invalid(resource.NewPath(depthPath(data, MaxDepth)), nil,
					fmt.Sprintf("nesting depth exceeds the limit of %d", MaxDepth)),
			})
		}
		if doc, err = decodeJSON(data); err != nil {
			return resource.NewBadRequest(fmt.Sprintf("%s: %v", v.gvk.Kind, err))
		}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return resource.NewBadRequest(fmt.Sprintf("%s: the document must be a JSON object", v.gvk.Kind))
	}
	if _, ok := obj["apiVersion"]; !ok {
		obj["apiVersion"] = v.gvk.APIVersion()
	}
	if _, ok := obj["kind"]; !ok {
		obj["kind"] = v.gvk.Kind
	}
	if f := v.fastPath(); f != nil {
		var run fastRun
		if f.valid(&run, obj, 0) && !run.aborted {
			return nil
		}
	}
	err = v.schema.Validate(obj)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return resource.NewInternalError(fmt.Errorf("schema: validating %s: %w", v.gvk.Kind, err))
	}
	return resource.NewInvalid(info, objectName(obj), fieldErrors(ve, v.docs, obj))
}

// objectName returns metadata.name of a decoded object, or "".
func objectName(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
