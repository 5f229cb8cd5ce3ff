package crclient

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/management-service/mgmt/resource"
	jsonschema "github.com/management-service/mgmt/schema"
)

// kind is what the client knows of one GroupVersionKind: the store's kind and how to
// treat the user's objects of it.
type kind struct {
	gvk  schema.GroupVersionKind
	info *resource.KindInfo
	// unconditional: an update without resourceVersion is allowed (kube-apiserver
	// allows it for the built-in kinds, not for custom resources): the client then
	// updates the version it reads.
	unconditional bool
}

// clusterScoped are the built-in kinds that are not namespaced.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:                                                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
}

// builtinGroup reports whether group is one of Kubernetes' own API groups, whose
// kinds take updates without resourceVersion.
func builtinGroup(group string) bool {
	return group == "" || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// kinds maps GroupVersionKinds to the store's kinds, registering a kind the first
// time it is used. It is safe for concurrent use.
type kinds struct {
	scheme     *resource.Scheme
	userMapper meta.RESTMapper // nil: resource names are guessed, scope from clusterScoped
	status     map[schema.GroupVersionKind]bool
	clusterGK  map[schema.GroupKind]bool // scopes given with WithClusterScoped
	schemas    map[schema.GroupVersionKind][]byte
	registry   *jsonschema.Registry // validates the kinds with a schema; nil when none has one

	mu     sync.RWMutex
	byGVK  map[schema.GroupVersionKind]*kind
	mapper *meta.DefaultRESTMapper
}

func newKinds(s *resource.Scheme, userMapper meta.RESTMapper, status map[schema.GroupVersionKind]bool,
	cluster map[schema.GroupKind]bool, schemas map[schema.GroupVersionKind][]byte) *kinds {
	ks := &kinds{scheme: s, userMapper: userMapper, status: status, clusterGK: cluster, schemas: schemas,
		byGVK: map[schema.GroupVersionKind]*kind{}, mapper: meta.NewDefaultRESTMapper(nil)}
	// The store's own kinds (package resource and any the caller added) are there
	// from the start.
	for _, k := range s.Kinds() {
		if k.ParentResource != "" {
			continue
		}
		gvk := schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
		ks.byGVK[gvk] = &kind{gvk: gvk, info: k, unconditional: builtinGroup(k.Group)}
		ks.mapper.AddSpecific(gvk, gvk.GroupVersion().WithResource(k.Resource),
			gvk.GroupVersion().WithResource(strings.ToLower(k.Kind)), scopeOf(k.Namespaced))
	}
	return ks
}

func scopeOf(namespaced bool) meta.RESTScope {
	if namespaced {
		return meta.RESTScopeNamespace
	}
	return meta.RESTScopeRoot
}

// objectKinds registers every kind of s whose objects have object metadata and a
// list kind.
func (ks *kinds) objectKinds(s *runtime.Scheme) error {
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if !reflect.PointerTo(t).Implements(reflect.TypeFor[client.Object]()) {
			continue
		}
		if !s.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
			continue
		}
		if _, err := ks.get(gvk); err != nil {
			return err
		}
	}
	return nil
}

// get returns the kind of gvk, registering it as a generic kind of the store when
// it is new.
func (ks *kinds) get(gvk schema.GroupVersionKind) (*kind, error) {
	ks.mu.RLock()
	k, ok := ks.byGVK[gvk]
	ks.mu.RUnlock()
	if ok {
		return k, nil
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("crclient: object has no kind or version (%v)", gvk)
	}
	plural, namespaced, err := ks.names(gvk)
	if err != nil {
		return nil, err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.byGVK[gvk]; ok {
		return k, nil
	}
	if ri, ok := ks.scheme.KindFor(gvk.GroupVersion().String(), gvk.Kind); ok {
		// Registered already: by the store's owner, or by another client on it.
		k = &kind{gvk: gvk, info: ri, unconditional: builtinGroup(gvk.Group)}
		ks.byGVK[gvk] = k
		ks.mapper.AddSpecific(gvk, gvk.GroupVersion().WithResource(ri.Resource),
			gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scopeOf(ri.Namespaced))
		return k, nil
	}
	info := resource.RawKind(resource.KindInfo{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: plural.Resource, Namespaced: namespaced, HasStatus: ks.status[gvk], Schema: ks.schemas[gvk]})
	if err := ks.scheme.Register(info); err != nil {
		return nil, fmt.Errorf("crclient: register %v: %w", gvk, err)
	}
	if info.Schema != nil && ks.registry != nil {
		rg := resource.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
		if err := ks.registry.Register(rg, info.Schema); err != nil {
			return nil, fmt.Errorf("crclient: the JSON Schema of %v: %w", gvk, err)
		}
	}
	ri, _ := ks.scheme.KindFor(gvk.GroupVersion().String(), gvk.Kind)
	k = &kind{gvk: gvk, info: ri, unconditional: builtinGroup(gvk.Group)}
	ks.byGVK[gvk] = k
	ks.mapper.AddSpecific(gvk, plural, gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scopeOf(namespaced))
	return k, nil
}

// names returns the resource and scope of gvk: from the caller's RESTMapper when
// there is one, otherwise the resource kube-apiserver would use (the guessed plural)
// and the scope of the built-in kinds (custom kinds are namespaced unless
// WithClusterScoped says otherwise).
func (ks *kinds) names(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	if ks.userMapper != nil {
		m, err := ks.userMapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return schema.GroupVersionResource{}, false, err
		}
		return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural, !clusterScoped[gvk.GroupKind()] && !ks.clusterGK[gvk.GroupKind()], nil
}

// restMapper is the client's RESTMapper: the mapper of the registered kinds, read
// under the lock kinds writes it under.
type restMapper struct{ ks *kinds }

var _ meta.RESTMapper = restMapper{}

// KindFor implements meta.RESTMapper.
func (m restMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.KindFor(r)
}

// KindsFor implements meta.RESTMapper.
func (m restMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.KindsFor(r)
}

// ResourceFor implements meta.RESTMapper.
func (m restMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.ResourceFor(r)
}

// ResourcesFor implements meta.RESTMapper.
func (m restMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.ResourcesFor(r)
}

// RESTMapping implements meta.RESTMapper.
func (m restMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.RESTMapping(gk, versions...)
}

// RESTMappings implements meta.RESTMapper.
func (m restMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.RESTMappings(gk, versions...)
}

// ResourceSingularizer implements meta.RESTMapper.
func (m restMapper) ResourceSingularizer(r string) (string, error) {
	m.ks.mu.RLock()
	defer m.ks.mu.RUnlock()
	return m.ks.mapper.ResourceSingularizer(r)
}

// isPartial reports objects that keep their TypeMeta (unstructured and metadata-only
// objects), as the real client leaves it on them and clears it on typed ones.
func keepsTypeMeta(obj runtime.Object) bool {
	switch obj.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return true
	}
	return false
}
