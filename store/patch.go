package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/management-service/mgmt/resource"
)

// Patch types [Store.Patch] accepts, named by their media types.
const (
	// PatchTypeMerge is a JSON merge patch (RFC 7386).
	PatchTypeMerge = "application/merge-patch+json"
	// PatchTypeJSON is a JSON patch (RFC 6902).
	PatchTypeJSON = "application/json-patch+json"
	// PatchTypeStrategic is a strategic merge patch of Kubernetes; it needs
	// PatchOptions.StrategicMerge, which knows the kind's merge rules.
	PatchTypeStrategic = "application/strategic-merge-patch+json"
)

// PatchOptions are the options of a patch.
type PatchOptions struct {
	WriteOptions
	// Subresource is "status" to patch the status subresource: the patch applies to
	// the whole object, and only the status of the result is written, as
	// [Store.UpdateStatus] writes it. "" patches the main resource.
	Subresource string
	// FieldValidation decides what a patch that gives the object a field its kind does
	// not have gets: FieldValidationStrict (also "") refuses it with 422 Invalid, whose
	// cause names the field "patch", as kube-apiserver does; FieldValidationWarn drops
	// the field and hands Warn one message per field (`unknown field "spec.foo"`);
	// FieldValidationIgnore drops it silently.
	FieldValidation string
	// Warn, when set, receives the warnings of a successful patch, once each.
	Warn func(message string)
	// StrategicMerge applies a strategic merge patch to the JSON of the stored object
	// of kind k (e.g. schema.Registry.StrategicMergePatch); without it a patch of type
	// PatchTypeStrategic is 415.
	StrategicMerge func(k *resource.KindInfo, original, patch []byte) ([]byte, error)
}

// Values of PatchOptions.FieldValidation, the fieldValidation parameter of
// kube-apiserver.
const (
	FieldValidationStrict = "Strict"
	FieldValidationWarn   = "Warn"
	FieldValidationIgnore = "Ignore"
)

// patchCodec decodes patched objects: no body limit of its own (the store's object
// size limit applies to the write), the deepest nesting a codec allows.
func (s *Store) patchCodec() *resource.Codec {
	return resource.NewCodec(s.scheme, resource.CodecOptions{MaxBytes: math.MaxInt64, MaxDepth: resource.MaxDepthLimit})
}

// Patch applies a patch to the stored object that obj names (its kind, namespace and
// name) and writes the result as an update; obj is filled with it. A patch that sets
// metadata.resourceVersion makes it a precondition (409 on mismatch); a patch without
// one is applied to the latest version, again after a concurrent write. Every rule of
// [Store.Update] applies to the result.
//
// With opts.Subresource "status" it is a status patch: only the status of the result
// is written (404 for a kind without a status subresource).
//
// Errors: 415 for another patch type; 400 for a malformed patch or a result that does
// not decode, or that changes name or namespace; 422 for a patch that cannot be
// applied (a JSON patch test that fails, a missing path); 413 for a patch over the
// limits (10,000 operations, 3 MiB of copied values).
func (s *Store) Patch(ctx context.Context, obj resource.Object, patchType string, patch []byte, opts PatchOptions) error {
	k, err := s.kindOf(obj)
	if err != nil {
		return err
	}
	if patchType != PatchTypeMerge && patchType != PatchTypeJSON && (patchType != PatchTypeStrategic || opts.StrategicMerge == nil) {
		return resource.NewUnsupportedMediaType(patchType)
	}
	namespace := normalizeNamespace(k, obj.GetObjectMeta().Namespace)
	name := obj.GetObjectMeta().Name
	switch {
	case opts.Subresource == "":
	case opts.Subresource == "status" && k.HasStatus:
	case opts.Subresource == "status":
		return resource.NewNotFound(k, name+"/status")
	default:
		return resource.NewBadRequest(fmt.Sprintf("%s has no subresource %q to patch", k.Kind, opts.Subresource))
	}
	if err := checkKeyNames(k, namespace, name); err != nil {
		return err
	}
	switch opts.FieldValidation {
	case "", FieldValidationStrict, FieldValidationWarn, FieldValidationIgnore:
	default:
		return resource.NewBadRequest(fmt.Sprintf("unknown FieldValidation %q", opts.FieldValidation))
	}
	codec := s.patchCodec()
	// Duplicate keys of a merge or strategic merge patch are reported with the unknown
	// fields of the result, first, as kube-apiserver reports them.
	var dups []string
	if opts.FieldValidation != FieldValidationIgnore && patchType != PatchTypeJSON {
		if _, msgs, err := codec.DecodeLenient(patch, resource.MediaTypeJSON, k); err == nil {
			for _, m := range msgs {
				if strings.HasPrefix(m, "duplicate field ") {
					dups = append(dups, m)
				}
			}
		}
	}
	var warnings []string
	_, err = s.runTxn(ctx, opts.DryRun, func(tx *Tx) error {
		warnings = warnings[:0]
		// The patch sees the resourceVersion: one it changes becomes the update's
		// precondition, as kube-apiserver does.
		var rv, uid string
		var out []byte
		var next resource.Object
		var unknown []string
		if patchType == PatchTypeMerge && !slowMergePatch.Load() {
			next, unknown, out, rv, uid, err = mergePatchStored(tx, codec, k, namespace, name, patch)
			if err != nil {
				return err
			}
		}
		if next == nil {
			cur := k.New()
			if err := tx.Get(namespace, name, cur); err != nil {
				return err
			}
			rv, uid = cur.GetObjectMeta().ResourceVersion, cur.GetObjectMeta().UID
			doc, err := json.Marshal(cur)
			if err != nil {
				return resource.NewInternalError(err)
			}
			if patchType == PatchTypeStrategic {
				out, err = opts.StrategicMerge(k, doc, patch)
			} else {
				out, err = applyPatch(k, name, patchType, doc, patch)
			}
			if err != nil {
				return err
			}
			if next, unknown, err = decodePatched(codec, k, out); err != nil {
				return err
			}
		}
		unknown = append(slices.Clip(dups), unknown...)
		if len(unknown) > 0 {
			switch opts.FieldValidation {
			case "", FieldValidationStrict:
				// kube-apiserver names no object in this error's details.
				return resource.NewInvalid(nil, "", resource.ErrorList{resource.Invalid(resource.NewPath("patch"),
					string(out), "strict decoding error: "+strings.Join(unknown, ", "))})
			case FieldValidationWarn:
				warnings = append(warnings, unknown...)
			}
		}
		m := next.GetObjectMeta()
		// A patch that changes the uid is invalid (422), as kube-apiserver answers; one
		// that sends none keeps the stored uid.
		if u := uid; m.UID != "" && m.UID != u {
			return resource.NewInvalid(k, name, resource.ErrorList{
				resource.Invalid(metaPath.Child("uid"), m.UID, "field is immutable")})
		}
		if normalizeNamespace(k, m.Namespace) != namespace || m.Name != name {
			return resource.NewBadRequest(fmt.Sprintf("a patch cannot change the name or namespace of %s %q", k.Kind, name))
		}
		if m.ResourceVersion == "" {
			m.ResourceVersion = rv // no precondition: patch the version just read
		}
		uo := UpdateOptions{WriteOptions: opts.WriteOptions}
		if opts.Subresource == "status" {
			err = tx.UpdateStatus(next, uo)
		} else {
			err = tx.Update(next, uo)
		}
		if err != nil {
			return err
		}
		tx.onCommit(func(int64) error { moveInto(obj, next); return nil })
		return nil
	})
	if err == nil && opts.Warn != nil {
		for _, w := range warnings {
			opts.Warn(w)
		}
	}
	return err
}

// Limits of a JSON patch, as kube-apiserver sets them.
const (
	maxJSONPatchOperations = 10000
	maxJSONPatchCopyBytes  = 3 << 20
)

// applyPatch applies a merge patch or a JSON patch to doc with
// github.com/evanphx/json-patch, the library kube-apiserver uses, and maps its errors:
// a malformed patch is 400, one that cannot be applied 422, one over the limits 413.
func applyPatch(k *resource.KindInfo, name, patchType string, doc, patch []byte) ([]byte, error) {
	if patchType == PatchTypeMerge {
		if t := bytes.TrimSpace(patch); len(t) == 0 || t[0] != '{' {
			return nil, resource.NewBadRequest("a merge patch must be a JSON object")
		}
		out, err := jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return nil, resource.NewBadRequest(fmt.Sprintf("the merge patch is malformed: %v", err)).WithCause(err)
		}
		return out, nil
	}
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("the JSON patch is malformed: %v", err)).WithCause(err)
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, resource.NewRequestEntityTooLarge(fmt.Sprintf(
			"the JSON patch has %d operations, the limit is %d", len(ops), maxJSONPatchOperations))
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false // RFC 6902 has none
	opts.AccumulatedCopySizeLimit = maxJSONPatchCopyBytes
	opts.EscapeHTML = false
	out, err := ops.ApplyWithOptions(doc, opts)
	var tooLarge *jsonpatch.AccumulatedCopySizeError
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &tooLarge):
		return nil, resource.NewRequestEntityTooLarge(err.Error()).WithCause(err)
	case errors.Is(err, jsonpatch.ErrUnknownType), errors.Is(err, jsonpatch.ErrInvalid):
		return nil, resource.NewBadRequest(fmt.Sprintf("the JSON patch is malformed: %v", err)).WithCause(err)
	default:
		// kube-apiserver answers 422 with the message alone, no details.
		return nil, resource.NewStatusError(resource.ReasonInvalid,
			"the JSON patch cannot be applied: "+err.Error()).WithCause(err)
	}
}
