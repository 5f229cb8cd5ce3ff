package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Resource is one resource the server serves: a kind of the store's scheme and the
// verbs it has. Verbs a resource does not list answer 405.
type Resource struct {
	// Group, Version and Resource name the kind in the store's scheme
	// (Scheme.KindForResource).
	Group, Version, Resource string
	// Verbs of the main resource, from get, list, watch, create, update, patch, delete
	// and deletecollection; nil means all eight.
	Verbs []string
	// StatusVerbs of the status subresource, for a kind with HasStatus; nil means get,
	// patch and update.
	StatusVerbs []string
	// ShortNames and Categories are listed in discovery (kubectl get <short name>).
	ShortNames, Categories []string
	// Create, when set, answers a create in place of the store's Create: for kinds whose
	// create is a request to a service (a token issuer) rather than a stored object.
	Create CreateFunc
	// Subresources are extra subresources of the resource, each with one verb, create.
	Subresources []Subresource
	// Columns are the columns of the Table the resource is printed as (kubectl get),
	// after Name; nil means one, [AgeColumn]. Each needs a Name and a Type, and a
	// JSONPath or a Value.
	Columns []Column
}

// Subresource is an extra subresource of a served resource: POST to
// <resource>/<name>/<Name> creates an object of its kind through Create.
type Subresource struct {
	// Name is the subresource's path segment, e.g. "migratevirtualclusterinstance".
	Name string
	// Description says what a create does, for the OpenAPI document.
	Description string
	// Create answers the create; required.
	Create CreateFunc
}

// CreateRequest is a create handed to a [CreateFunc].
type CreateRequest struct {
	// Kind is the kind of Object.
	Kind *resource.KindInfo
	// Object is the decoded body.
	Object resource.Object
	// Name is the name on the URL: the parent object's for a subresource, else "".
	Name string
	// Namespace is the namespace on the URL, if any.
	Namespace string
	// Write holds the caller, dry run and field manager of the request.
	Write store.WriteOptions
}

// CreateFunc answers a create with the object to return (201 Created) or an error
// (its Status is the answer).
type CreateFunc func(ctx context.Context, req *CreateRequest) (resource.Object, error)

// Authenticator finds the caller of a request. An error is the answer (a 401 Status,
// resource.NewUnauthorized); a nil user with a nil error is an anonymous caller.
type Authenticator interface {
	Authenticate(r *http.Request) (*store.UserInfo, error)
}

// AuthenticatorFunc adapts a function to [Authenticator].
type AuthenticatorFunc func(r *http.Request) (*store.UserInfo, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*store.UserInfo, error) { return f(r) }

// MaxAuthorizationBytes caps the Authorization header a [BearerAuthenticator] reads; a
// longer one is 401.
const MaxAuthorizationBytes = 8 << 10

// BearerAuthenticator reads "Authorization: Bearer <token>" and hands the token to
// check. A missing, repeated, malformed or too long header is 401 before check runs.
func BearerAuthenticator(check func(ctx context.Context, token string) (*store.UserInfo, error)) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*store.UserInfo, error) {
		hs := r.Header.Values("Authorization")
		switch {
		case len(hs) == 0:
			return nil, unauthorized("no bearer token: send \"Authorization: Bearer <token>\"")
		case len(hs) > 1:
			return nil, unauthorized("more than one Authorization header")
		case len(hs[0]) > MaxAuthorizationBytes:
			return nil, unauthorized(fmt.Sprintf("the Authorization header is longer than %d bytes", MaxAuthorizationBytes))
		}
		scheme, tok, ok := strings.Cut(strings.TrimSpace(hs[0]), " ")
		tok = strings.TrimSpace(tok)
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
			return nil, unauthorized("malformed Authorization header: expected \"Bearer <token>\"")
		}
		return check(r.Context(), tok)
	})
}

func unauthorized(msg string) error {
	return resource.NewUnauthorized("Unauthorized: " + msg)
}

// Attributes describe a request to an [Authorizer]: a resource request (Resource
// set) or a non-resource one (Path set, Verb "get").
type Attributes struct {
	// Verb is get, list, watch, create, update, patch, delete or deletecollection.
	Verb string
	// APIGroup, APIVersion, Resource and Subresource name what is asked for.
	APIGroup, APIVersion, Resource, Subresource string
	// Name is the object's name; for a list or watch pinned to one name by its field
	// selector (metadata.name=x), that name.
	Name string
	// Namespace is the namespace on the URL.
	Namespace string
	// Path is the path below the base path of a non-resource request ("/version").
	Path string
}

// Decision is an Authorizer's yes, possibly narrowed.
type Decision struct {
	// Visible, when set, narrows the request to the objects it accepts: a get, update,
	// patch or delete of an object it rejects answers exactly as for a missing object,
	// and a list or watch leaves such objects out.
	Visible func(resource.Object) bool
}

// Authorizer decides a request. An error is the answer (a 403 Status, typically
// resource.NewForbidden); it must not depend on whether the object exists.
type Authorizer interface {
	Authorize(ctx context.Context, user *store.UserInfo, a Attributes) (Decision, error)
}

// AuthorizerFunc adapts a function to [Authorizer].
type AuthorizerFunc func(ctx context.Context, user *store.UserInfo, a Attributes) (Decision, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, user *store.UserInfo, a Attributes) (Decision, error) {
	return f(ctx, user, a)
}

// AllowAll is the Authorizer that allows every request: for tests and for servers
// whose every authenticated caller may do everything.
var AllowAll Authorizer = AuthorizerFunc(func(context.Context, *store.UserInfo, Attributes) (Decision, error) {
	return Decision{}, nil
})
