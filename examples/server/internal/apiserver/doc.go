// Package apiserver wires the management API (management.service/v1) onto package
// httpapi: it lists the management kinds and their verbs, plugs in the access keys
// (authentication) and their scopes (authorization, through package policy), the
// token issuer (DirectClusterEndpointToken creation, JWKS and OpenID discovery) and
// the migration service (the migratevirtualclusterinstance subresource of projects).
//
// Every route lives under the base path (Config.BasePath, "/kubernetes/management").
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
