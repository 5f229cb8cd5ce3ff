package apiserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// MaxAccessKeyBytes is the longest secret an AccessKey may have: it must fit in an
// Authorization header.
const MaxAccessKeyBytes = 1024

// AnnotationLastApplied is the annotation client-side "kubectl apply" keeps the applied
// manifest in; the AccessKey hook removes spec.key from it.
const AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// AccessKeyAdmitter returns the store's mutating admission hook for AccessKeys, the
// place where the secret of the kind is kept out of storage (the hash is a semantic of
// the AccessKey kind, so it is an admission hook of the store rather than code in the
// HTTP handlers, and it holds for every writer: the API, the seed file, a program):
//
//   - on create, spec.key is required (at most MaxAccessKeyBytes); it is replaced by
//     spec.keyHash = HashKey(spec.key) and cleared, so only the hash is stored and no
//     response ever shows the key; a spec.keyHash sent by the client is refused (422);
//   - on update, spec.keyHash is kept from the stored key whatever the client sent;
//     a spec.key in the update rotates the key (a new hash) unless it is the same key;
//   - spec.key is also removed from the last-applied-configuration annotation that
//     client-side kubectl apply writes, which would otherwise hold it in clear;
//   - when the writer is an access key with a scope, the written key's scope must be
//     covered by the writer's own (policy.Covers): a key can never mint a wider key
//     (403 naming what is not covered).
func AccessKeyAdmitter() store.MutatingAdmitter {
	return store.MutatingAdmitterFunc(admitAccessKey)
}

func admitAccessKey(_ context.Context, req *store.AdmissionRequest) error {
	if req.Kind == nil || req.Kind.Group != resource.Group || req.Kind.Kind != resource.KindAccessKey {
		return nil
	}
	ak, ok := req.Object.(*resource.AccessKey)
	if !ok || req.Subresource != "" {
		return nil
	}
	keyPath := resource.NewPath("spec", "key")
	if len(ak.Spec.Key) > MaxAccessKeyBytes {
		return resource.NewInvalid(req.Kind, ak.Name, resource.ErrorList{
			resource.TooLong(keyPath, "", MaxAccessKeyBytes)})
	}
	var old *resource.AccessKey
	switch req.Operation {
	case store.OperationCreate:
		switch {
		case ak.Spec.KeyHash != "":
			return resource.NewInvalid(req.Kind, ak.Name, resource.ErrorList{resource.Forbidden(
				resource.NewPath("spec", "keyHash"), "set by the server from spec.key; send spec.key instead")})
		case ak.Spec.Key == "":
			return resource.NewInvalid(req.Kind, ak.Name, resource.ErrorList{resource.Required(
				keyPath, "the secret of the access key (it is stored only as a hash)")})
		}
		ak.Spec.KeyHash = HashKey(ak.Spec.Key)
	case store.OperationUpdate:
		old, _ = req.OldObject.(*resource.AccessKey)
		if old == nil {
			return nil
		}
		ak.Spec.KeyHash = old.Spec.KeyHash
		if ak.Spec.Key != "" {
			ak.Spec.KeyHash = HashKey(ak.Spec.Key)
		}
	default:
		return nil
	}
	ak.Spec.Key = ""
	scrubLastApplied(&ak.ObjectMeta)

	c := callerOf(req.User)
	if c == nil || c.scope == nil || c.scope.Unrestricted() {
		return nil
	}
	if old != nil && scopeEqual(old.Spec.Scope, ak.Spec.Scope) {
		return nil
	}
	if ok, gaps := policy.Covers(c.key.Spec.Scope, ak.Spec.Scope); !ok {
		parts := make([]string, len(gaps))
		for i, g := range gaps {
			parts[i] = g.String()
		}
		if len(parts) == 0 {
			parts = []string{"spec.scope: no restriction"}
		}
		return resource.NewForbidden(req.Kind, ak.Name, "the key's scope is wider than the scope of the access key "+
			"that writes it: "+strings.Join(parts, "; "))
	}
	return nil
}

func scopeEqual(a, b *resource.AccessKeyScope) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// scrubLastApplied removes spec.key from the last-applied-configuration annotation.
func scrubLastApplied(m *resource.ObjectMeta) {
	v, ok := m.Annotations[AnnotationLastApplied]
	if !ok || !strings.Contains(v, `"key"`) {
		return
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(v), &doc); err != nil {
		// Not JSON: drop it rather than keep a secret.
		delete(m.Annotations, AnnotationLastApplied)
		return
	}
	spec, _ := doc["spec"].(map[string]any)
	if _, has := spec["key"]; !has {
		return
	}
	delete(spec, "key")
	b, err := json.Marshal(doc)
	if err != nil {
		delete(m.Annotations, AnnotationLastApplied)
		return
	}
	m.Annotations[AnnotationLastApplied] = string(b) + "\n"
}

// OwnerAuthorizer returns the store's blockOwnerDeletion hook: a caller may set
// blockOwnerDeletion on a reference only when its access key's scope allows deleting
// the owner (the spec's rule). Writes without a caller (the seed file, the program's
// own) are allowed; an owner of a kind the scheme does not know is refused.
func OwnerAuthorizer(scheme *resource.Scheme, namespacePrefix string) store.OwnerAuthorizer {
	if namespacePrefix == "" {
		namespacePrefix = resource.DefaultProjectNamespacePrefix
	}
	return ownerAuthorizer{scheme: scheme, prefix: namespacePrefix}
}

type ownerAuthorizer struct {
	scheme *resource.Scheme
	prefix string
}

func (a ownerAuthorizer) CanDeleteOwner(ctx context.Context, user *store.UserInfo, owner resource.OwnerReference, namespace string) (bool, error) {
	if user == nil {
		return true, nil
	}
	c := callerOf(user)
	if c == nil || c.scope == nil {
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
		if p, ok := strings.CutPrefix(namespace, a.prefix); ok {
			req.Project = p
		}
	} else if k.Group == resource.Group && k.Resource == "projects" {
		req.Project = owner.Name
	}
	ok, _ = c.allowed(ctx, req)
	return ok, nil
}
