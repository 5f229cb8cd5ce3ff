// Package managedfields maintains metadata.managedFields for the store: on every
// create, update and status update it records an Update entry for the writing field
// manager, listing the fields that manager set in Kubernetes' FieldsV1 trie form
// ({"f:spec":{"f:ttl":{}}}).
//
// The store calls [Resolve] with the stored entries and those the client sent, to
// pick the entries the write starts from (a client may overwrite them, or reset them
// with [] or [{}]; subresource writes ignore them), then [Update] with the old and the
// new encoded object to record the write. [Set] is the field set of one entry.
//
// What is recorded follows Kubernetes' field manager for objects without a typed
// schema (custom resources), with these choices:
//
//   - Objects are compared field by field. Lists are atomic: a list is one field and
//     its items are never tracked. An empty object is a leaf. A non-empty object is
//     tracked through its fields, and is itself a member when it appears where there
//     was none, which FieldsV1 writes as ".":{} (e.g. {"f:spec":{".":{},"f:ttl":{}}}
//     on create), exactly as Kubernetes writes it for custom resources.
//   - apiVersion, kind, metadata itself and the server-owned metadata fields are
//     never tracked; nor is status on the main resource of a kind with a status
//     subresource, while a status write tracks status only.
//   - The writer's time is refreshed when its write adds, changes or removes a field
//     (the spec's rule; Kubernetes does not refresh it on a pure removal), never when
//     another manager takes one of its fields.
//   - At most [MaxUpdateEntries] Update entries are kept; older ones are folded into
//     an [AncientChangesManager] entry per apiVersion. Apply entries are never
//     folded, and Update never creates them.
//   - Entries are sorted the way Kubernetes sorts them, so the output is
//     deterministic and an update that changes nothing returns the same entries.
//
// Update runs on every store write, so it works on the encodings directly rather
// than decoding them: the two objects are parsed once each, without allocating,
// into lists of members sorted by name; a value of the new object that is byte for
// byte the old one's is neither validated again nor looked into; other scalars are
// compared by value as decoded JSON (1 equals 1.0, "\u00fc" equals "ü"). A Set is
// kept in its canonical FieldsV1 encoding, which entries written by Update already
// are, so their fieldsV1 is checked rather than parsed and set operations merge
// encodings. What is accepted, and every result and error, is exactly what decoding
// with encoding/json gives; the tests compare it with that implementation.
//
// The package imports only the standard library and package resource.
package managedfields
