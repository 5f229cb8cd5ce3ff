// Package jsonpatch applies JSON merge patches (RFC 7386) and JSON patches (RFC 6902)
// to JSON documents. The store uses it to implement PATCH.
//
// [MergePatch] and [Apply] take and return raw JSON. Both decode with numbers kept as
// their literal text (json.Number), so integers of any size and decimals round-trip
// exactly. Both refuse duplicate object keys, in the patch and in the document, and
// values nested deeper than [MaxDepth]. Results are compact JSON with object keys
// sorted and no HTML escaping, so the same input always gives the same bytes.
//
// Every error is an [*Error] wrapping exactly one of three sentinels, to be checked
// with errors.Is:
//
//   - [ErrMalformed]: the patch or the document is not valid JSON or not of the right
//     shape (a patch that is not an array of operation objects, an unknown op, a
//     missing or mistyped member, a bad JSON pointer, a move into its own child, a
//     merge patch or document that is not an object). Maps to 400 Bad Request.
//   - [ErrFailed]: a well-formed patch that cannot be applied to this document (a
//     path that does not exist, an array index out of range, a failed test).
//     Maps to 422 Unprocessable Entity.
//   - [ErrTooLarge]: more operations than [Options.MaxOperations], more bytes
//     inserted than [Options.MaxCopyBytes], nesting deeper than [MaxDepth], or
//     array inserts and removals that would shift more than 2^24 elements in
//     total (a bound on CPU time). Maps to 413 Request Entity Too Large.
//
// A patch is checked as a whole (JSON syntax, operation count, the shape of every
// operation) before any operation is applied, so a patch that is both malformed and
// inapplicable reports ErrMalformed. Application is all or nothing: on error the
// input is never modified and no partial result is returned.
package jsonpatch
