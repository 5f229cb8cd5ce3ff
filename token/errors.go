package token

import (
	"errors"

	"github.com/management-service/mgmt/resource"
)

// Sentinel errors of verification. Every error [Verifier.Verify] returns is a
// [*VerifyError] that matches exactly one of them under [errors.Is]; callers decide on
// the class, never on the message. [Verifier] lists the order of the checks; what
// matters most is that the signature is checked before any claim is read, so a token
// that is both tampered with and expired is reported as [ErrSignature], never as
// [ErrExpired] (CVE-2024-51744 was that confusion).
var (
	// ErrMalformed means the input is not a JWS compact string of our shape (size cap,
	// three parts, base64url, JSON, claim types).
	ErrMalformed = errors.New("token: malformed")
	// ErrAlgorithm means the header's "alg" is not in the verifier's allow-list ("none",
	// HS256, RS256, ES384, ... are never accepted).
	ErrAlgorithm = errors.New("token: algorithm not allowed")
	// ErrHeader means the header carries a parameter other than alg, kid and typ; in
	// particular key material or key references (jwk, jku, x5u, x5c, x5t), which are
	// never used.
	ErrHeader = errors.New("token: header parameter not allowed")
	// ErrType means the header's "typ" is missing or is not [TokenType], so another kind of
	// JWT cannot be replayed as ours.
	ErrType = errors.New("token: wrong token type")
	// ErrUnknownKey means the header's "kid" is missing, not a string, not in the key set,
	// or names a key of another algorithm than the header's.
	ErrUnknownKey = errors.New("token: unknown signing key")
	// ErrSignature means the signature does not verify with the key the kid names.
	ErrSignature = errors.New("token: invalid signature")
	// ErrMissingClaim means a required claim (iss, sub, iat, nbf, exp, jti, the
	// "management.service" claim, or aud for a verifier bound to an audience) is absent.
	ErrMissingClaim = errors.New("token: required claim missing")
	// ErrInvalidClaim means the claims contradict each other or the verifier's bounds
	// (exp not after iat, nbf after exp, a lifetime above the maximum).
	ErrInvalidClaim = errors.New("token: invalid claim")
	// ErrIssuer means "iss" is not the verifier's issuer.
	ErrIssuer = errors.New("token: wrong issuer")
	// ErrAudience means "aud" does not name the verifier, or is present for a verifier that
	// has no audience.
	ErrAudience = errors.New("token: wrong audience")
	// ErrNotYetValid means "nbf" or "iat" is later than now plus the leeway.
	ErrNotYetValid = errors.New("token: not valid yet")
	// ErrExpired means "exp" is not later than now minus the leeway.
	ErrExpired = errors.New("token: expired")
	// ErrRevoked means the online check found the token revoked: its record was deleted
	// (or re-created with another uid), or the subject's token generation was raised,
	// or the subject is gone.
	ErrRevoked = errors.New("token: revoked")
	// ErrCheckFailed means the online check could not be made (the store failed). The token
	// is refused; the host answers 503 rather than 401.
	ErrCheckFailed = errors.New("token: revocation check failed")
)

// VerifyError is the typed error of verification. Kind is one of the sentinels above
// and Detail says what was wrong (it never contains the token). It matches Kind under
// [errors.Is], and also [resource.ErrUnauthorized] (or
// [resource.ErrServiceUnavailable] for [ErrCheckFailed]), so that
// resource.StatusOf maps it to 401 on its own; [VerifyError.Status] gives the Status
// with a short, stable message for the client.
type VerifyError struct {
	// Kind is the sentinel of the error's class.
	Kind error
	// Detail describes the problem, for logs.
	Detail string
	// Err is the underlying error (from go-jose, encoding/json or the store), if any.
	Err error
}

// Error returns "<kind>: <detail>[: <cause>]".
func (e *VerifyError) Error() string {
	s := e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause, for [errors.Is] and [errors.As].
func (e *VerifyError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Is reports whether target is the Status sentinel of the error: resource.ErrUnauthorized
// for every class but [ErrCheckFailed], which is resource.ErrServiceUnavailable.
func (e *VerifyError) Is(target error) bool {
	if e.Kind == ErrCheckFailed {
		return target == resource.ErrServiceUnavailable
	}
	return target == resource.ErrUnauthorized
}

// Status returns the error as a Kubernetes Status: 401 Unauthorized with a stable
// message that names the class a client can act on (expired, not yet valid, revoked)
// and says "invalid bearer token" for every other class, so that a forger learns
// nothing about which check failed; [ErrCheckFailed] is 503 ServiceUnavailable. The
// returned error wraps e.
func (e *VerifyError) Status() *resource.StatusError {
	var msg string
	switch e.Kind {
	case ErrExpired:
		msg = "the token has expired"
	case ErrNotYetValid:
		msg = "the token is not valid yet"
	case ErrRevoked:
		msg = "the token has been revoked"
	case ErrCheckFailed:
		return resource.NewServiceUnavailable("the token could not be checked, try again").WithCause(e)
	default:
		msg = "invalid bearer token"
	}
	return resource.NewUnauthorized(msg).WithCause(e)
}

// StatusFor maps an error of this package to the Status a server answers: a
// [*VerifyError] gives [VerifyError.Status], a *resource.StatusError (what
// [Issuer.Issue] returns) is returned as it is, nil gives nil and anything else is 500.
func StatusFor(err error) *resource.StatusError {
	if err == nil {
		return nil
	}
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Status()
	}
	var se *resource.StatusError
	if errors.As(err, &se) {
		return se
	}
	return resource.NewInternalError(err)
}

func verr(kind error, detail string, cause error) *VerifyError {
	return &VerifyError{Kind: kind, Detail: detail, Err: cause}
}
