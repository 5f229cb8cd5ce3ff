package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// The review endpoints every authenticated caller may POST to, about itself:
// "kubectl auth whoami" and "kubectl auth can-i".
const (
	selfSubjectReviewPath       = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	selfSubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
)

// isReview reports whether the path below the base path is a review endpoint.
func isReview(path string) bool {
	return path == selfSubjectReviewPath || path == selfSubjectAccessReviewPath
}

// reviewMeta is the metadata of a review: a creation time, nothing else.
type reviewMeta struct {
	CreationTimestamp *resource.Time `json:"creationTimestamp"`
}

// userInfo is authentication.k8s.io/v1 UserInfo.
type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type selfSubjectReview struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Metadata   reviewMeta `json:"metadata"`
	Status     struct {
		UserInfo userInfo `json:"userInfo"`
	} `json:"status"`
}

// resourceAttributes and nonResourceAttributes are authorization.k8s.io/v1's.
type resourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

type nonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

type selfSubjectAccessReview struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Metadata   reviewMeta `json:"metadata"`
	Spec       struct {
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	} `json:"spec"`
	Status struct {
		Allowed         bool   `json:"allowed"`
		Denied          bool   `json:"denied,omitempty"`
		Reason          string `json:"reason,omitempty"`
		EvaluationError string `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// serveReview answers a SelfSubjectReview (who the caller is, from the
// Authenticator) or a SelfSubjectAccessReview (whether the caller may do what the
// spec describes, from the Authorizer; its refusal's message is the reason), 201 as
// kube-apiserver answers. Every authenticated caller may ask about itself, as
// kube-apiserver's default roles allow; the Authorizer is not asked for the review
// itself.
func (s *Server) serveReview(w *statusRecorder, r *http.Request, ri *route, user *store.UserInfo) {
	kind, group := "SelfSubjectReview", "authentication.k8s.io"
	if ri.nonResource == selfSubjectAccessReviewPath {
		kind, group = "SelfSubjectAccessReview", "authorization.k8s.io"
	}
	w.info.Verb, w.info.Resource = "create", strings.ToLower(kind)+"s."+group
	body, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var head struct{ Kind, APIVersion string }
	var in selfSubjectAccessReview
	switch ct := mediaTypeOf(r.Header.Get("Content-Type")); {
	case ct == mediaTypeProtobuf:
		// kubectl sends its reviews in protobuf, as client-go sends built-in kinds.
		var raw []byte
		head.APIVersion, head.Kind, raw, err = decodeProtobufEnvelope(body)
		if err == nil && kind == "SelfSubjectAccessReview" {
			err = decodeAccessReviewSpec(raw, &in)
		}
	case ct == "" || mediaTypeFor(ct) != "":
		if err = yaml.Unmarshal(body, &head); err == nil && kind == "SelfSubjectAccessReview" {
			err = yaml.Unmarshal(body, &in)
		}
	default:
		s.writeError(w, r, resource.NewUnsupportedMediaType(r.Header.Get("Content-Type")))
		return
	}
	if err != nil {
		s.writeError(w, r, resource.NewBadRequest(fmt.Sprintf("the %s body is malformed: %v", kind, err)))
		return
	}
	if (head.Kind != "" && head.Kind != kind) || (head.APIVersion != "" && head.APIVersion != group+"/v1") {
		s.writeError(w, r, resource.NewBadRequest(fmt.Sprintf("the body of this request must be a %s of %s/v1, not %s %s",
			kind, group, head.APIVersion, head.Kind)))
		return
	}
	now := resource.NewTime(time.Now())
	if kind == "SelfSubjectReview" {
		out := selfSubjectReview{Kind: kind, APIVersion: group + "/v1", Metadata: reviewMeta{CreationTimestamp: &now}}
		out.Status.UserInfo = userInfoOf(user)
		s.writeReview(w, r, out)
		return
	}
	ra, nra := in.Spec.ResourceAttributes, in.Spec.NonResourceAttributes
	var a Attributes
	switch {
	case ra != nil && nra != nil:
		s.writeError(w, r, resource.NewInvalid(&resource.KindInfo{Group: group, Kind: kind}, "", resource.ErrorList{
			resource.Invalid(resource.NewPath("spec", "nonResourceAttributes"), "", "cannot be specified in combination with resourceAttributes")}))
		return
	case ra != nil:
		a = Attributes{Verb: ra.Verb, APIGroup: ra.Group, APIVersion: ra.Version, Resource: ra.Resource,
			Subresource: ra.Subresource, Name: ra.Name, Namespace: ra.Namespace}
		// A namespace on a cluster-scoped kind (kubectl sends its context's) does not
		// narrow the question, as cluster-wide grants answer it in kube-apiserver.
		for _, g := range s.groups {
			for _, sr := range g.resources {
				if g.name != a.APIGroup || sr.kind.Resource != a.Resource {
					continue
				}
				if !sr.kind.Namespaced {
					a.Namespace = ""
				}
				if a.APIVersion == "" {
					a.APIVersion = g.version
				}
			}
		}
	case nra != nil:
		a = Attributes{Verb: nra.Verb, Path: nra.Path}
		if s.base != "" && strings.HasPrefix(a.Path, s.base+"/") {
			a.Path = strings.TrimPrefix(a.Path, s.base)
		}
	default:
		s.writeError(w, r, resource.NewInvalid(&resource.KindInfo{Group: group, Kind: kind}, "", resource.ErrorList{
			resource.Required(resource.NewPath("spec", "resourceAttributes"), "exactly one of nonResourceAttributes or resourceAttributes must be specified")}))
		return
	}
	// kube-apiserver answers with the review as sent, metadata included (no time).
	out := selfSubjectAccessReview{Kind: kind, APIVersion: group + "/v1"}
	out.Spec = in.Spec
	d, err := s.authz.Authorize(r.Context(), user, a)
	switch {
	case err == nil:
		out.Status.Allowed = true
		if d.Visible != nil && a.Name == "" {
			out.Status.Reason = "allowed for some objects only: the others are left out of lists and watches"
		}
	case resource.ReasonOf(err) == resource.ReasonForbidden || resource.ReasonOf(err) == resource.ReasonUnauthorized:
		out.Status.Reason = resource.StatusOf(err).Message
	default:
		out.Status.EvaluationError = err.Error()
	}
	s.writeReview(w, r, out)
}

// writeReview answers 201 with a review, in JSON or YAML as Accept asks.
func (s *Server) writeReview(w http.ResponseWriter, r *http.Request, v any) {
	mt, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		s.writeError(w, r, resource.NewNotAcceptable(r.Header.Get("Accept")))
		return
	}
	body, err := s.codec.Encode(v, mt)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", mt)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// userInfoOf is the UserInfo of a caller; a nil one is kube-apiserver's anonymous user.
func userInfoOf(u *store.UserInfo) userInfo {
	if u == nil {
		return userInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	}
	out := userInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	switch e := u.Extra.(type) {
	case map[string][]string:
		out.Extra = e
	case map[string]string:
		out.Extra = map[string][]string{}
		for k, v := range e {
			out.Extra[k] = []string{v}
		}
	}
	return out
}
