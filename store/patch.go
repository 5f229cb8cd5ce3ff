package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/jsonpatch"
)

// Patch types [Store.Patch] accepts, named by their media types.
const (
	// PatchTypeMerge is a JSON merge patch (RFC 7386).
	PatchTypeMerge = "application/merge-patch+json"
	// PatchTypeJSON is a JSON patch (RFC 6902).
	PatchTypeJSON = "application/json-patch+json"
)

// PatchOptions are the options of a patch.
type PatchOptions struct {
	WriteOptions
}

// Patch applies a patch to the stored object that obj names (its kind, namespace and
// name) and writes the result as an update; obj is filled with it. A patch that sets
// metadata.resourceVersion makes it a precondition (409 on mismatch); a patch without
// one is applied to the latest version, again after a concurrent write. Every rule of
// [Store.Update] applies to the result.
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
	if patchType != PatchTypeMerge && patchType != PatchTypeJSON {
		return resource.NewUnsupportedMediaType(patchType)
	}
	namespace := normalizeNamespace(k, obj.GetObjectMeta().Namespace)
	name := obj.GetObjectMeta().Name
	if err := checkKeyNames(k, namespace, name); err != nil {
		return err
	}
	_, err = s.runTxn(ctx, opts.DryRun, func(tx *Tx) error {
		cur := k.New()
		if err := tx.Get(namespace, name, cur); err != nil {
			return err
		}
		// The patch sees the resourceVersion: one it changes becomes the update's
		// precondition, as kube-apiserver does.
		rv := cur.GetObjectMeta().ResourceVersion
		doc, err := json.Marshal(cur)
		if err != nil {
			return resource.NewInternalError(err)
		}
		var out []byte
		if patchType == PatchTypeMerge {
			out, err = jsonpatch.MergePatch(doc, patch)
		} else {
			out, err = jsonpatch.Apply(doc, patch, jsonpatch.Options{})
		}
		if err != nil {
			return patchError(k, name, err)
		}
		next := k.New()
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(next); err != nil {
			return resource.NewBadRequest(fmt.Sprintf("the patched %s does not decode: %v", k.Kind, err)).WithCause(err)
		}
		m := next.GetObjectMeta()
		if normalizeNamespace(k, m.Namespace) != namespace || m.Name != name {
			return resource.NewBadRequest(fmt.Sprintf("a patch cannot change the name or namespace of %s %q", k.Kind, name))
		}
		if m.ResourceVersion == "" {
			m.ResourceVersion = rv // no precondition: patch the version just read
		}
		if err := tx.Update(next, UpdateOptions{WriteOptions: opts.WriteOptions}); err != nil {
			return err
		}
		tx.onCommit(func(int64) error { moveInto(obj, next); return nil })
		return nil
	})
	return err
}

func patchError(k *resource.KindInfo, name string, err error) error {
	switch {
	case errors.Is(err, jsonpatch.ErrTooLarge):
		return resource.NewRequestEntityTooLarge(err.Error()).WithCause(err)
	case errors.Is(err, jsonpatch.ErrFailed):
		return resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(resource.NewPath("patch"), nil, err.Error())}).WithCause(err)
	default:
		return resource.NewBadRequest(fmt.Sprintf("the patch is malformed: %v", err)).WithCause(err)
	}
}
