// Package resource is the object model of the management API (management.service/v1):
// the Go types of its kinds, their metadata, the codec that reads and writes them, the
// validation of metadata, label and field selectors, and the Status errors every other
// package returns.
//
// It uses the standard library only, plus sigs.k8s.io/yaml and the YAML library under
// it for the YAML side of the codec; it imports no Kubernetes module.
//
// # Basics
//
// Every object embeds [TypeMeta] (kind and apiVersion, inline) and [ObjectMeta] (as
// "metadata"), so it satisfies [Object]. The built-in kinds are
// [DirectClusterEndpointToken], [ProjectMigrateVirtualClusterInstance], [Project],
// [VirtualClusterInstance] and [AccessKey]; each has a list type built from [List]. A
// [Scheme] maps kinds to Go types, resource names and scope; [NewScheme] knows the
// five built-in kinds and host programs may register their own.
//
// A kind without a Go type of its own is registered at run time with [RawKind]: its
// objects are [RawObject] values (TypeMeta, ObjectMeta, the status and every other
// member kept as raw JSON) and its lists [RawList]. Many kinds share these two Go
// types; the scheme tells them apart by TypeMeta ([KindInfo.Generic]). A kind may
// carry a JSON Schema ([KindInfo.Schema]) for whoever validates its objects.
//
// A [Codec] turns request bodies into typed objects and objects into response bodies:
//
//	codec := resource.NewCodec(resource.NewScheme(), resource.CodecOptions{})
//	body, err := codec.ReadBody(r.Body)                  // 413 past 3 MiB
//	obj, err := codec.Decode(body, r.Header.Get("Content-Type"), kind)
//	out, err := codec.Encode(obj, resource.MediaTypeJSON)
//
// Decoding is strict: unknown fields and duplicate keys are errors that name the field;
// a body must hold exactly one object (one YAML document); nesting depth and size are
// limited. A body without apiVersion and kind takes them from the kind the caller
// expects (the endpoint's), and one that names another kind is refused, never guessed.
//
// [ValidateObjectMeta] checks the metadata a client sends (names, namespace, labels,
// annotations, finalizers, owner references, managed fields); the helpers it is made of
// ([ValidateName], [ValidateLabels], ...) are exported for use on other fields. They
// return an [ErrorList] of [FieldError] values with Kubernetes-style paths such as
// metadata.ownerReferences[0].uid, which [NewInvalid] turns into a 422 Status.
//
// [ParseLabelSelector] and [ParseFieldSelector] read the labelSelector and
// fieldSelector query parameters.
//
// # Errors
//
// Every error this package returns is a [*StatusError], whose [Status] is exactly the
// wire body of a Kubernetes failure (kind Status, apiVersion v1, status, message,
// reason, details with causes, code). Constructors exist for each reason (NewNotFound,
// NewConflict, NewInvalid, ...). A StatusError matches the sentinel of its reason under
// [errors.Is] however deeply it is wrapped (errors.Is(err, resource.ErrNotFound)), and
// unwraps to the error it was built from, if any. [StatusOf] maps any error to the
// Status to send: a StatusError gives its own, a bare sentinel gives one of its
// reason, a context deadline gives 504, and anything else gives 500 with an empty
// reason, as kube-apiserver does. [CodeOf] and [ReasonOf] are shorthands.
//
// The codec answers 400 BadRequest for malformed, non-strict or ambiguous bodies, 413
// RequestEntityTooLarge for oversized ones, 415 UnsupportedMediaType for content types
// it does not read and 406 NotAcceptable for media types it cannot write; validation
// answers 422 Invalid through NewInvalid; selectors answer 400.
//
// # Caveats
//
//   - YAML is YAML 1.1, as in Kubernetes: unquoted yes, no, on, off, y, n, true and
//     false are booleans and 1.10 is the number 1.1. Where a string is expected (label
//     values, names) such a value is refused with 400 rather than turned into "true" or
//     "1.1"; quote it. This is what kube-apiserver does with YAML bodies.
//   - YAML map keys must be strings, and scalar tags other than the core ones (!!str,
//     !!int, !!float, !!bool, !!null, !!timestamp, !!merge) are refused: !!binary, local
//     tags such as !vault, and so on. The core tags written out explicitly cannot be
//     told apart from implicit ones and are accepted. Tags on mappings and sequences are
//     ignored by the YAML library and so have no effect.
//   - YAML anchors and aliases are accepted, within the YAML library's aliasing limit;
//     the JSON form of a YAML body must also fit the byte limit, so aliases cannot
//     expand a small body into a large object.
//   - JSON field names match case-sensitively, unlike encoding/json on its own: "Kind"
//     is an unknown field, not "kind".
//   - An empty content type is sniffed: a body whose first non-space byte is '{' is
//     JSON, anything else YAML, so a YAML flow mapping sent without a content type is
//     read as JSON.
//   - Timestamps ([Time]) keep whole seconds in UTC, so sub-second precision and time
//     zones are lost on decode; times outside the years 0000-9999 are refused.
//   - Encode writes a value as it is; it does not fill in TypeMeta. YAML output sorts
//     keys, and managedFields' fieldsV1 is kept as raw JSON, so its key order may
//     change between JSON and YAML.
//   - Validation follows Kubernetes' wording closely but not byte for byte.
package resource
