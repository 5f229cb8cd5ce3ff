// Package httpapi serves a [store.Store] over HTTP with Kubernetes REST conventions,
// so that a stock kubectl, client-go's dynamic client and its informers work against
// it: it is the library half of a custom API server.
//
// A [Server] is an http.Handler for the resources its [Config] lists, each a kind of
// the store's scheme with a JSON Schema in the schema registry. It holds no object
// semantics of its own: every rule about objects is the store's (and its admission
// hooks'). The server does routing, content negotiation (JSON and YAML, by q-value;
// Table, PartialObjectMetadata and PartialObjectMetadataList forms with
// [Resource.Columns]), discovery, OpenAPI v3 generated from the kinds' JSON Schemas,
// watch streaming with bookmarks, fieldValidation (Strict, Warn with Warning headers,
// Ignore), merge, JSON and strategic merge patches, dry run, field managers, body
// limits, timeouts, in-flight bounds and Status errors. It answers SelfSubjectReview
// and SelfSubjectAccessReview ("kubectl auth whoami", "kubectl auth can-i") from its
// Authenticator and Authorizer.
//
// # Routes
//
// Below Config.BasePath:
//
//	/healthz /livez /readyz                     no authentication
//	Config.Public paths                         no authentication
//	/version /api /api/v1 /apis /apis/<group>[/<version>]
//	/apis/authentication.k8s.io/v1/selfsubjectreviews          POST, any caller
//	/apis/authorization.k8s.io/v1/selfsubjectaccessreviews     POST, any caller
//	/openapi/v3 /openapi/v3/apis/<group>/<version>
//	Config.NonResource paths
//	/apis/<group>/<version>/<resource>[/<name>[/<subresource>]]
//	/apis/<group>/<version>/namespaces/<ns>/<resource>[/<name>[/<subresource>]]
//
// A verb a resource does not list is 405; every failure is a Kubernetes Status body.
//
// # What a host plugs in
//
//   - [Authenticator]: request → caller ([BearerAuthenticator] reads bearer tokens);
//   - [Authorizer]: caller and [Attributes] → [Decision] or a 403, decided before
//     anything is read, so that an answer never depends on whether an object the
//     caller may not see exists; a Decision may narrow a request to the objects a
//     caller may see (Decision.Visible);
//   - admission: the store's own hooks (store.Options.Mutating and Validating);
//   - [Resource.Create] and [Subresource]: creates answered by a service instead of
//     the store (a token issuer, a move between projects);
//   - Config.Public and Config.NonResource: extra endpoints (a JWKS document).
//
// Requests pass, in order: the base path, the unauthenticated endpoints, routing, the
// in-flight bounds, authentication, name and query validation, authorization, and
// the handler.
package httpapi
