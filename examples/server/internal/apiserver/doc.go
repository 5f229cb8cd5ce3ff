// Package apiserver wires the management API (management.service/v1) onto package
// httpapi: it lists the management kinds and their verbs and plugs in package token
// (access keys for authentication, their scopes for authorization, the token issuer
// behind DirectClusterEndpointToken creates, JWKS and OpenID discovery) and package
// migrate (the move, the migratevirtualclusterinstance subresource of projects). It
// holds no rules of its own.
package apiserver
