// Package apiserver is the HTTP layer of the example server: it serves the management
// API (management.service/v1) the way kube-apiserver serves custom resources, so that
// a stock kubectl and client-go's dynamic client work against it.
//
// It holds no semantics of its own. Routing, content negotiation, authentication,
// authorization and Status responses are done here; every rule about objects belongs
// to the library packages it calls: package store (create, get, list, watch, update,
// patch, delete), package token (DirectClusterEndpointToken creation), package migrate
// (moves between projects), package policy (what an access key's scope allows) and
// package schema (validation, as a store admission hook).
//
// # Routes
//
// Every route lives under the base path (Config.BasePath, "/kubernetes/management"):
//
//	/healthz /livez /readyz                      no authentication
//	/.well-known/openid-configuration            no authentication (token package)
//	/openid/v1/jwks                              no authentication (token package)
//	/version /api /apis /apis/management.service /apis/management.service/v1
//	/openapi/v3 /openapi/v3/apis/management.service/v1
//	/apis/management.service/v1/<resource>[/<name>[/<subresource>]]
//	/apis/management.service/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]]
//
// The resources and their verbs are those of the project's design decisions §1; a verb
// a resource does not have is 405. Every failure is a Kubernetes Status body.
//
// # Access keys
//
// A request carries "Authorization: Bearer <access key>". The key is hashed
// ([HashKey]) and looked up among the stored AccessKeys by its hash; the key's scope
// then authorizes the request through package policy. [AccessKeyAdmitter] is the store
// admission hook that turns the spec.key of an AccessKey into spec.keyHash, so that
// only the hash is ever stored; [OwnerAuthorizer] is the store's blockOwnerDeletion
// hook, answered with the caller's scope.
package apiserver
