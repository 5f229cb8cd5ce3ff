package jsonpatch

// MergePatch applies the RFC 7386 JSON merge patch patch to doc and returns the
// result as compact JSON with sorted keys.
//
// Members of patch replace those of doc, a null member deletes the member of doc
// (if any), objects merge recursively, and every other value (arrays included)
// replaces the old one whole. Nulls inside a patch object that merges into a
// missing or non-object member are dropped, as the RFC says.
//
// Unlike RFC 7386, which lets any JSON value be a merge patch (a non-object
// replaces the document) and any value be a target, both doc and patch must be
// JSON objects here, because a Kubernetes-style object is always one: anything
// else is an [ErrMalformed] error. Duplicate keys and invalid JSON are
// ErrMalformed; nesting deeper than [MaxDepth] is [ErrTooLarge]. Errors are
// [*Error] values with Op -1.
//
// Applying the same merge patch twice gives the same result as applying it once.
func MergePatch(doc, patch []byte) ([]byte, error) {
	p, err := decode(patch, "merge patch")
	if err != nil {
		return nil, err
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return nil, newErr(-1, "", ErrMalformed, nil, "merge patch must be a JSON object, not %s", kind(p))
	}
	d, err := decode(doc, "document")
	if err != nil {
		return nil, err
	}
	dm, ok := d.(map[string]any)
	if !ok {
		return nil, newErr(-1, "", ErrMalformed, nil, "document must be a JSON object, not %s", kind(d))
	}
	return encode(mergeObject(dm, pm))
}

// mergeObject merges patch into target (changing it) and returns target. Values of
// patch are moved into target, not copied: patch must not be used afterwards.
func mergeObject(target, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			tv, ok := target[k].(map[string]any)
			if !ok {
				tv = map[string]any{}
			}
			target[k] = mergeObject(tv, pv)
		default:
			target[k] = v
		}
	}
	return target
}

// kind names the JSON type of a decoded value, for error messages.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}
