package token

import (
	"context"
	"strings"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// LeadForbidden opens the message of every Forbidden the [Authorizer] answers: one
// sentence a user can act on, followed by the precise explanation.
const LeadForbidden = "Your access key's scope does not allow this request."

// AuthorizerOptions configure an [Authorizer]; the zero value is the default.
type AuthorizerOptions struct {
	// NamespacePrefix is the prefix of a project's namespace; "" means
	// resource.DefaultProjectNamespacePrefix ("p-").
	NamespacePrefix string
	// Scheme resolves the kinds of owner references ([Authorizer.CanDeleteOwner]); nil
	// means resource.NewScheme().
	Scheme *resource.Scheme
}

// Authorizer decides requests for the caller [Authenticator.Authenticate] found: with
// its key's scope, plus the self-service every authenticated key has. It also is the
// store's blockOwnerDeletion hook (store.Options.OwnerAuthorizer). It keeps no state
// and is safe for concurrent use.
type Authorizer struct {
	prefix string
	scheme *resource.Scheme
}

// NewAuthorizer returns an Authorizer.
func NewAuthorizer(opts AuthorizerOptions) *Authorizer {
	if opts.NamespacePrefix == "" {
		opts.NamespacePrefix = resource.DefaultProjectNamespacePrefix
	}
	if opts.Scheme == nil {
		opts.Scheme = resource.NewScheme()
	}
	return &Authorizer{prefix: opts.NamespacePrefix, scheme: opts.Scheme}
}

var _ store.OwnerAuthorizer = (*Authorizer)(nil)

// Decision is an allowed request: why, and which objects the caller may see.
type Decision struct {
	// Entry is what allowed the request: a scope entry ("spec.scope.projects[0]"),
	// "" for a key without a scope, or "self-service".
	Entry string
	// Reason says in one line why the request is allowed.
	Reason string
	// Visible, when not nil, says which objects the caller may see: the HTTP layer
	// answers a get, update or delete of an object for which it is false exactly as
	// for a missing object (404, same message), and leaves such objects out of lists
	// and watches. A delete it allows is made with a UID precondition of the object it
	// checked, so that a record re-created in between is not deleted blindly. nil
	// means every object the request reaches.
	Visible func(resource.Object) bool
}

// ProjectOf returns the project a Management request is about: the Project object
// itself (resource "projects", cluster-scoped), or the project whose namespace
// (NamespacePrefix + project) the request is in; "" otherwise.
func (a *Authorizer) ProjectOf(resourceName, name, namespace string) string {
	if resourceName == "projects" && namespace == "" {
		return name
	}
	if p, ok := strings.CutPrefix(namespace, a.prefix); ok {
		return p
	}
	return ""
}

// NamespaceOf returns the namespace of a project: NamespacePrefix + project.
func (a *Authorizer) NamespaceOf(project string) string { return a.prefix + project }

// Authorize decides req for user (from [Authenticator.Authenticate]). It fills
// req.Project from the namespace when the request targets the management API and
// leaves it empty. Allowed: the Decision. Refused: a 401 *resource.StatusError when
// user carries no [Identity], a 403 one opening with [LeadForbidden] otherwise.
//
// A request is allowed when the key's scope allows it, or by self-service, which every
// authenticated key has and which allows nothing else:
//
//   - get (and head) of discovery (/api, /api/<version>, /apis, /apis/<group>,
//     /apis/<group>/<version>), /version and /openapi/*;
//   - create of a DirectClusterEndpointToken (the [Issuer] grants no scope wider than
//     the caller's own);
//   - get, list, watch and delete of DirectClusterEndpointToken records, with Visible
//     showing only those minted with the caller's own key ([LabelMintedBy]).
func (a *Authorizer) Authorize(_ context.Context, user *store.UserInfo, req policy.Request) (Decision, error) {
	id := IdentityOf(user)
	if id == nil {
		return Decision{}, resource.NewUnauthorized("Unauthorized: no authenticated access key")
	}
	if req.Project == "" && req.IsResourceRequest() && (req.Target == "" || req.Target == resource.RequestTargetManagement) {
		req.Project = a.ProjectOf(req.Resource, req.Name, req.Namespace)
	}
	d := id.Evaluate(req)
	if d.Allowed {
		dec := Decision{Entry: d.Entry, Reason: d.Reason}
		if req.APIGroup == resource.Group && req.Resource == "accesskeys" && !id.Unrestricted() {
			// A scoped key manages only keys of its own subject; the others it does not
			// see, so that asking for one answers as for a missing key.
			own := subjectID(id.Key)
			dec.Visible = func(o resource.Object) bool {
				k, ok := o.(*resource.AccessKey)
				return ok && subjectID(k) == own
			}
		}
		return dec, nil
	}
	if sd, ok := selfService(id, req); ok {
		return sd, nil
	}
	return Decision{}, forbiddenRequest(id, req, d.Reason)
}

// selfService is the part of Authorize every authenticated key has.
func selfService(id *Identity, req policy.Request) (Decision, bool) {
	if req.Target != "" && req.Target != resource.RequestTargetManagement {
		return Decision{}, false
	}
	if !req.IsResourceRequest() {
		if (req.Verb == "get" || req.Verb == "head") && discoveryPath(req.Path) {
			return Decision{Entry: "self-service", Reason: "allowed: discovery, /version and /openapi are open to every access key"}, true
		}
		return Decision{}, false
	}
	if req.APIGroup != resource.Group || req.Resource != "directclusterendpointtokens" || req.Subresource != "" || req.Namespace != "" {
		return Decision{}, false
	}
	switch req.Verb {
	case "create":
		return Decision{Entry: "self-service", Reason: "allowed: every access key may mint tokens within its own scope"}, true
	case "get", "list", "watch", "delete":
		uid := id.Key.UID
		return Decision{Entry: "self-service", Reason: "allowed: every access key may see and revoke the tokens it minted",
			Visible: func(o resource.Object) bool {
				return uid != "" && o.GetObjectMeta().Labels[LabelMintedBy] == uid
			}}, true
	}
	return Decision{}, false
}

// discoveryPath reports whether p is a discovery path, /version or under /openapi/.
func discoveryPath(p string) bool {
	if p == "/version" || strings.HasPrefix(p, "/openapi/") {
		return true
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, s := range parts[1:] {
		if s == "" {
			return false
		}
	}
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// forbiddenRequest is the 403 of a request the scope denies: LeadForbidden, then which
// key cannot do what, and why.
func forbiddenRequest(id *Identity, req policy.Request, reason string) *resource.StatusError {
	detail := "access key " + clip(id.Key.Name) + " cannot " + req.String() + ": " + reason
	var e *resource.StatusError
	if req.IsResourceRequest() {
		e = resource.NewForbidden(&resource.KindInfo{Group: req.APIGroup, Resource: req.Resource}, req.Name, detail)
	} else {
		e = resource.NewStatusError(resource.ReasonForbidden, "forbidden: "+detail)
	}
	e.ErrStatus.Message = LeadForbidden + " " + e.ErrStatus.Message
	return e
}

// CanDeleteOwner implements store.OwnerAuthorizer (the blockOwnerDeletion rule): a
// caller may set blockOwnerDeletion on a reference only when its key's scope allows
// deleting the owner. Writes without a caller are allowed; a UserInfo without an
// [Identity], and an owner of a kind the scheme does not know, are refused.
func (a *Authorizer) CanDeleteOwner(_ context.Context, user *store.UserInfo, owner resource.OwnerReference, namespace string) (bool, error) {
	if user == nil {
		return true, nil
	}
	id := IdentityOf(user)
	if id == nil {
		return false, nil
	}
	k, ok := a.scheme.KindFor(owner.APIVersion, owner.Kind)
	if !ok {
		return false, nil
	}
	req := policy.Request{Verb: "delete", APIGroup: k.Group, Resource: k.Resource, Name: owner.Name,
		Target: resource.RequestTargetManagement}
	if k.Namespaced {
		req.Namespace = namespace
	}
	req.Project = a.ProjectOf(req.Resource, req.Name, req.Namespace)
	if k.Group != resource.Group && req.Resource == "projects" {
		req.Project = ""
	}
	return id.Evaluate(req).Allowed, nil
}
