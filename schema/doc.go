// Package schema validates objects against JSON Schemas before the store writes them.
//
// Every built-in kind of management.service/v1 (DirectClusterEndpointToken,
// ProjectMigrateVirtualClusterInstance, Project, VirtualClusterInstance and AccessKey)
// has a JSON Schema, draft 2020-12, embedded in the binary (schemas/*.json). The
// definitions they share (object metadata with every ObjectMeta field, owner
// references, managedFields entries, labels, the access key scope and its rules, name
// formats) live in one document, [CommonURL], that the others "$ref" in memory. The
// schemas follow the Go types of package resource field for field and say
// "additionalProperties": false wherever the spec lists the fields, so an unknown
// field is refused. They also carry the rules a schema can express: required fields,
// DNS-1123 names and namespaces, RFC 3339 timestamps, int64 bounds, the operation
// (Apply|Update) and fieldsType (FieldsV1) enums, at most one controller owner
// reference, "*" only as a whole value (and in a non-resource URL only as the whole,
// final path step), the request targets, resourceNames only with resources. Rules
// that need the stored object or the caller (immutable fields, scope coverage,
// overlapping wildcard resources, the token's TTL bounds) are checked elsewhere.
//
// A [Registry] holds one compiled [Validator] per kind; validators are compiled once
// and are safe for concurrent use. A failed validation is a *resource.StatusError with
// reason Invalid (422) and one cause per violation: the leaf errors of the schema
// validation, deduplicated and sorted, each with a Kubernetes-style field path
// ("spec.scope.rules[0].verbs[1]", "metadata.labels[app]") and a readable message.
// Values of fields marked "writeOnly" (the token, an access key's secret) are never
// echoed in messages.
//
// An [Admitter] is the store's validating admission hook: every create, update and
// status update of a kind with a schema, dry runs included, is validated before it is
// written. An update of a version the Admitter itself passed, under the same compiled
// schema, in this process, validates only what the update changed, wherever the
// schema makes that give the same answer as a full validation; this is not
// Kubernetes' validation ratcheting: an unchanged field that is invalid under the
// current schema is still refused (unchanged.go tells how and why).
//
// A host program adds schemas for its own kinds with [Registry.Register]. Nothing is
// ever loaded from the file system or the network: the compiler's loader is replaced
// by one that refuses every URL, and every "$ref" must resolve to an in-memory
// document (the built-in ones or the schema itself). Schemas are checked against the
// draft 2020-12 metaschema and, since the library ignores unknown keywords, also
// against the list of draft 2020-12 keywords, so a typo such as "maxLenght" is refused
// instead of silently disabling a rule. Formats are asserted, and instances nested
// deeper than [MaxDepth] are refused before validation.
package schema
