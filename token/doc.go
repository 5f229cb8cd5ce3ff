// Package token holds the bearer credentials of the management API: AccessKeys (their
// secrets, authentication, who may write which key, and authorization of requests)
// and DirectClusterEndpointTokens, signed, scoped, expiring bearer tokens that a
// connected cluster verifies on its own, from a published key set, without calling
// back.
//
// # Access keys
//
// A host wires four things (see the package example):
//
//   - [RegisterKinds] in the scheme it builds the store with: the internal kinds
//     [AccessKeySecret] and [AccessKeyBinding] (and [TokenSigningKey]). The HTTP layer
//     must never serve them; it serves only the kinds the host lists.
//   - [NewAccessKeyAdmission], built before the store, as one of store.Options.Mutating
//     and one of store.Options.Validating; [NewAuthorizer] as
//     store.Options.OwnerAuthorizer.
//   - [Authenticator.Authenticate] on each request's bearer secret: a store.UserInfo
//     whose Extra is the caller's [Identity] ([IdentityOf] reads it back). Every write
//     the request makes passes that UserInfo in store.WriteOptions.User; the hooks read
//     the caller from there. A write without a UserInfo is the host's own (a seed file)
//     and is allowed everything; a UserInfo without an Identity is allowed nothing.
//   - [Authorizer.Authorize] on each request's policy.Request, and, when the answer has
//     [Decision.Visible], the HTTP layer applies it: a get, update or delete of an
//     object it hides is answered exactly as for a missing one, and lists and watches
//     leave such objects out. To mint a token the host calls [Identity.TokenCaller] and
//     [Issuer.Issue].
//
// The secret. spec.key is accepted on create (required) and on update (a rotation; the
// same secret again changes nothing); it is never stored on the AccessKey nor
// returned, and spec.keyHash is refused and cleared (the field is no longer used).
// The admission writes, in the transaction of the key's own write (store
// AdmissionRequest.Tx), an [AccessKeySecret] named by the secret's hash ([SecretName])
// holding the key's name and uid, and an [AccessKeyBinding] named like the key holding
// that record's name; rotation and delete remove the old records in the same
// transaction. So a secret belongs to one key on every backend, atomically: creating
// or rotating to a secret another key holds is 409 Conflict, naming no other key.
// spec.key is also removed from kubectl's last-applied-configuration annotation. Keys
// that older servers stored with spec.keyHash are moved over by [AdoptLegacyHashes].
// spec.ttl above [MaxAccessKeyTTL] is 422 naming the bound, and expiry never
// overflows ([KeyExpiry]).
//
// Authentication reads the secret's record, the key it names (same uid) and the key's
// binding (same secret), in one store transaction, and refuses an expired key or one
// being deleted (401 Unauthorized). It keeps no cache, so it is right at once after
// any create, rotation, update, delete or restart.
//
// Who may write which key ([AccessKeyAdmission]): a caller without a scope may do
// everything. A scoped caller may create, update (patch is an update) or delete a key
// only when
//
//   - its scope covers the key's stored scope and its new scope ([policy.Covers]); a
//     key without a scope is covered only by a caller without one;
//   - the key's stored and new subject are the caller's own (a subject is spec.subject
//     as a user, or, for a key without spec.subject, that key itself, so such a key
//     manages only itself); a new key without spec.subject gets the caller's;
//   - spec.tokenGeneration keeps its value (0 on create): raising it revokes every
//     token of the subject, which only a caller that may manage every key of the
//     subject, one without a scope, may do;
//   - when the caller's own key expires, a created key, or one whose ttl changes,
//     expires no later;
//   - spec.user and spec.team stay as they were, or become empty or the caller's own.
//
// Refusals are 403 Forbidden opening with one sentence the user can act on, then the
// precise reason. Rotating the secret, changing ttl, scope or subject all go through
// the same rules. Deleting a key removes its secret records at once, also when the
// delete only marks the key (finalizers, grace period).
//
// Authorization ([Authorizer.Authorize]) allows what the caller's scope allows, with
// the project of a request taken from its namespace (prefix "p-" unless configured),
// plus self-service for every authenticated key and nothing more: discovery, /version
// and /openapi/*; minting a DirectClusterEndpointToken (the issuer grants no scope
// wider than the caller's own); get, list, watch and delete of the token records the
// key minted ([LabelMintedBy], with [Decision.Visible]). A Forbidden opens with
// [LeadForbidden].
//
// # Tokens
//
// Three types do the work:
//
//   - [Issuer] takes a create request for a DirectClusterEndpointToken and the
//     authenticated [Caller], applies the rules of design decisions §3, writes the
//     record through the store and returns it with status.token and
//     status.expirationTimestamp.
//   - [Verifier] checks a token offline against a [KeySource] (a [KeySet] in the
//     process that issues, the [StaticKeys] of a published JWKS on a connected
//     cluster), and online through an optional [RevocationChecker]
//     ([StoreRevocation]). It returns the [Claims], whose scope is ready for package
//     policy, or a [*VerifyError] whose class is one of the sentinels ([ErrExpired],
//     [ErrSignature], [ErrRevoked], ...), each mapping to 401 ([VerifyError.Status]).
//   - [KeySet] holds one signing key and the verifying keys, rotates them, persists
//     them in the store as [TokenSigningKey] objects ([OpenKeySet]) and renders the
//     JWKS ([KeySet.JWKS]); [NewDiscovery] renders the OpenID-style discovery document
//     that points to it. A server serves them at [DiscoveryPath] and [JWKSPath] under
//     its base path.
//
// The package is built on go-jose (github.com/go-jose/go-jose/v4) for signing and
// signature verification.
//
// # Tokens
//
// A token is a JWS compact serialization (a JWT). The header is exactly
// {"alg","kid","typ"}: alg EdDSA (Ed25519, the default) or ES256; kid the base64url
// SHA-256 of the public key's PKIX DER ([KeyID]); typ [TokenType] ("dcet+jwt"), so that
// no other JWT signed by a trusted key can pass for one of ours. The claims are iss,
// sub ("<kind>:<name>" of the caller), iat, nbf (= iat), exp, jti (the uid of the
// record), aud when the host binds the token to audiences, and the private claim
// "management.service" = {uid, name, kind, gen, rec, scope, key, kuid} of the caller,
// with rec the record's name (for the online check), scope the granted scope in a
// compact form, and key and kuid the AccessKey the token was minted with, when the
// host says (see [ManagementClaim]). A token with a ten-entry scope is under 1 KiB.
//
// # Issuing
//
// spec.ttl omitted or 0 gives the default (24 h); negative, below the minimum or above
// the maximum (90 days) is 422 at spec.ttl naming the bound; the lifetime is cut to
// what the caller's own key has left. A requested spec.scope is validated (422 with
// field paths under spec.scope) and must be covered by the caller's scope (403 naming
// each entry that is not); no requested scope gives the caller's scope. The record
// (generateName "dcet-" when it has no name) is written with the store's Create, so
// admission hooks, schema validation and dry runs apply; it holds everything but the
// token: the granted ttl and scope, status.expirationTimestamp, annotations naming the
// subject and the signing key, and, when the caller names its AccessKey
// ([Caller.AccessKey]), the label [LabelMintedBy] (the key's uid) and the annotation
// [AnnotationAccessKey] (its name). A dry run returns the full object without signing.
//
// # Verifying
//
// [Verifier] documents its checks and their order. In short: the size is capped before
// parsing; the header is allow-listed (alg, kid, typ and nothing else: a token that
// carries jwk, jku, x5u, x5c, x5t or crit is refused, and no key is ever read from a
// token); the kid is looked up in memory only; the signature is checked before any
// claim is read, so an expired token with a bad signature is a signature error;
// exp, iat, nbf, iss, sub and jti are required; the leeway is at most 60 s.
//
// Offline verification cannot see revocation: a token stays valid offline until its
// exp ([MaxAccessKeyTTL] documents the bounds). Online, [StoreRevocation] refuses a
// token whose record was deleted or re-created, one whose minting AccessKey was
// deleted, re-created or is being deleted (whatever the subject), and one whose
// subject's token generation was raised ([SubjectGeneration]). A token is bound to its record (jti is
// the record's uid) and to its subject (gen), not to a virtual cluster instance: its
// scope names projects, spaces and virtual clusters by name, so a token keeps
// allowing an instance that is re-created under the same name, and stops allowing one
// that moves to a project the scope does not name.
//
// # Keys
//
// [OpenKeySet] loads the keys from the store, or makes the first one. [KeySet.Stage]
// publishes the next key ahead of its use (a verifier that caches the JWKS for an hour
// should see it an hour before it signs), [KeySet.Rotate] makes it sign and retires
// the old key, which keeps verifying until [KeySet.Prune] removes it once the
// retention (the maximum TTL plus the leeway) has passed. Another process on the same
// store picks changes up with [KeySet.Refresh].
//
// # Caveats
//
//   - [TokenSigningKey] objects hold private keys: in clear unless
//     [KeySetOptions.EncryptionKey] is set (AES-256-GCM). A server must not serve that
//     kind through its API (get or list would show them), or only to administrators.
//   - ES256 signatures are malleable: (r, s) and (r, n-s) both verify, so a token
//     string is not a unique identifier of a token; the jti is. Apart from that, an
//     accepted token is byte for byte the string that was signed: the verifier
//     requires canonical base64url in all three parts, since go-jose verifies the
//     signature over a re-encoding of the decoded header and payload (a verifier
//     built on go-jose alone, like a connected cluster's, accepts other encodings of
//     the same content).
//   - [SubjectGeneration] lists the access keys for subjects that are not an access key
//     themselves; hosts with many keys pass their own [GenerationFunc].
//   - Records of expired tokens stay until [Issuer.DeleteExpired] removes them.
package token
