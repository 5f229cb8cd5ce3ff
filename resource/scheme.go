package resource

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// GroupVersionKind names a kind fully.
type GroupVersionKind struct {
	// Group is the API group; "" is the core group.
	Group string
	// Version is the API version, e.g. "v1".
	Version string
	// Kind is the CamelCase kind name.
	Kind string
}

// APIVersion returns "group/version", or "version" for the core group.
func (g GroupVersionKind) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// String returns "group/version, Kind=kind".
func (g GroupVersionKind) String() string { return g.APIVersion() + ", Kind=" + g.Kind }

// KindInfo describes one kind: its names, where it lives and how to make its values.
type KindInfo struct {
	// Group is the API group, e.g. "management.service".
	Group string
	// Version is the API version, e.g. "v1".
	Version string
	// Kind is the CamelCase kind name, e.g. "Project".
	Kind string
	// ListKind is the kind of its list, e.g. "ProjectList".
	ListKind string
	// Resource is the lower-case plural resource name, e.g. "projects".
	Resource string
	// Namespaced is true for kinds whose objects live in a namespace.
	Namespaced bool
	// HasStatus is true for kinds with a status subresource: status is kept on
	// main-resource updates and changed only through the status path. The status is
	// the top-level member "status": the struct field encoded as "status" for a Go
	// type of its own, [RawObject.Status] for a generic kind.
	HasStatus bool
	// ParentResource is set for kinds that are only reachable as a subresource of
	// another resource (e.g. "projects" for ProjectMigrateVirtualClusterInstance).
	ParentResource string
	// New returns a new, empty object of the kind.
	New func() Object
	// NewList returns a new, empty list of the kind.
	NewList func() ObjectList
	// Schema is an optional JSON Schema (draft 2020-12) of the kind's objects, for
	// the program that validates them (package schema's Registry, say). The scheme
	// only carries it.
	Schema json.RawMessage

	generic bool // New makes *RawObject values: the kind is found by TypeMeta
}

// Generic reports whether the kind uses the generic representation ([RawObject] and
// [RawList], see [RawKind]) rather than a Go type of its own.
func (k *KindInfo) Generic() bool { return k.generic }

// GVK returns the kind's group, version and kind.
func (k *KindInfo) GVK() GroupVersionKind {
	return GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// APIVersion returns "group/version" ("version" for the core group).
func (k *KindInfo) APIVersion() string { return k.GVK().APIVersion() }

// GroupResource returns "resource.group", or "resource" for the core group, the form
// used in error messages.
func (k *KindInfo) GroupResource() string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// Scheme maps kinds to their Go types and back. It is safe for concurrent use; the
// zero value is an empty scheme ready to use.
type Scheme struct {
	mu       sync.RWMutex
	byGVK    map[GroupVersionKind]*KindInfo
	byGVR    map[string]*KindInfo // "group/version/resource"
	byType   map[reflect.Type]*KindInfo
	byListTy map[reflect.Type]*KindInfo
	byList   map[GroupVersionKind]*KindInfo // generic kinds by list kind
}

var (
	rawObjectType = reflect.TypeFor[*RawObject]()
	rawListType   = reflect.TypeFor[*RawList]()
)

// NewScheme returns a scheme that knows the five kinds of this package.
func NewScheme() *Scheme {
	s := &Scheme{}
	for _, k := range builtinKinds() {
		if err := s.Register(k); err != nil {
			panic(err) // the built-in table is fixed; a failure is a bug in this package
		}
	}
	return s
}

// Register adds a kind. It returns an error when the kind or its resource is already
// registered, or when a required field is empty. A kind whose New makes [RawObject]
// values (see [RawKind]) must make RawList values with NewList; any number of such
// generic kinds share the two Go types and are told apart by TypeMeta.
func (s *Scheme) Register(k KindInfo) error {
	if k.Version == "" || k.Kind == "" || k.Resource == "" || k.New == nil || k.NewList == nil {
		return fmt.Errorf("resource: kind %q: Version, Kind, Resource, New and NewList are required", k.Kind)
	}
	if k.ListKind == "" {
		k.ListKind = k.Kind + "List"
	}
	if strings.ToLower(k.Resource) != k.Resource || strings.Contains(k.Resource, "/") {
		return fmt.Errorf("resource: kind %q: resource %q must be lower case, without '/'", k.Kind, k.Resource)
	}
	info := &k
	gvr := k.Group + "/" + k.Version + "/" + k.Resource
	if k.ParentResource != "" {
		gvr = k.Group + "/" + k.Version + "/" + k.ParentResource + "/" + k.Resource
	}
	t := reflect.TypeOf(k.New())
	lt := reflect.TypeOf(k.NewList())
	info.generic = t == rawObjectType
	if info.generic != (lt == rawListType) {
		return fmt.Errorf("resource: kind %q: a kind of RawObject values needs RawList lists, and only it", k.Kind)
	}
	listGVK := GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.ListKind}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byGVK == nil {
		s.byGVK = map[GroupVersionKind]*KindInfo{}
		s.byGVR = map[string]*KindInfo{}
		s.byType = map[reflect.Type]*KindInfo{}
		s.byListTy = map[reflect.Type]*KindInfo{}
		s.byList = map[GroupVersionKind]*KindInfo{}
	}
	if _, dup := s.byGVK[k.GVK()]; dup {
		return fmt.Errorf("resource: kind %s is already registered", k.GVK())
	}
	if _, dup := s.byGVR[gvr]; dup {
		return fmt.Errorf("resource: resource %s is already registered", gvr)
	}
	if info.generic {
		if _, dup := s.byList[listGVK]; dup {
			return fmt.Errorf("resource: list kind %s is already registered", listGVK)
		}
		s.byList[listGVK] = info
	} else {
		if _, dup := s.byType[t]; dup {
			return fmt.Errorf("resource: Go type %v is already registered", t)
		}
		s.byType[t] = info
		s.byListTy[lt] = info
	}
	s.byGVK[k.GVK()] = info
	s.byGVR[gvr] = info
	return nil
}

// KindFor returns the kind of an apiVersion and kind pair, e.g. ("management.service/v1",
// "Project"). ok is false when it is not registered.
func (s *Scheme) KindFor(apiVersion, kind string) (*KindInfo, bool) {
	group, version := SplitAPIVersion(apiVersion)
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byGVK[GroupVersionKind{Group: group, Version: version, Kind: kind}]
	return k, ok
}

// KindForResource returns the kind served at group/version/resource. For a kind that
// is a subresource, resource is "parent/sub" (e.g. "projects/migratevirtualclusterinstance").
func (s *Scheme) KindForResource(group, version, resource string) (*KindInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byGVR[group+"/"+version+"/"+resource]
	return k, ok
}

// KindOf returns the kind of a Go object: by its registered Go type, which must match
// its TypeMeta when that is set. A [*RawObject] is found by its TypeMeta instead,
// among the generic kinds.
func (s *Scheme) KindOf(obj Object) (*KindInfo, error) {
	t := reflect.TypeOf(obj)
	if t == rawObjectType {
		return s.genericKind(obj.GetTypeMeta(), false)
	}
	s.mu.RLock()
	k, ok := s.byType[t]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("resource: Go type %T is not registered in the scheme", obj)
	}
	return k, nil
}

// KindOfList returns the kind whose list type is the Go type of list. A [*RawList]
// is found by its TypeMeta (the list kind) instead, among the generic kinds.
func (s *Scheme) KindOfList(list ObjectList) (*KindInfo, error) {
	t := reflect.TypeOf(list)
	if t == rawListType {
		return s.genericKind(list.GetTypeMeta(), true)
	}
	s.mu.RLock()
	k, ok := s.byListTy[t]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("resource: Go type %T is not a registered list type", list)
	}
	return k, nil
}

// genericKind returns the generic kind that tm names, as an object's or, with list,
// as a list's kind.
func (s *Scheme) genericKind(tm *TypeMeta, list bool) (*KindInfo, error) {
	what := "RawObject"
	if list {
		what = "RawList"
	}
	if tm == nil || tm.Kind == "" || tm.APIVersion == "" {
		return nil, fmt.Errorf("resource: a %s needs apiVersion and kind to name its kind", what)
	}
	group, version := SplitAPIVersion(tm.APIVersion)
	gvk := GroupVersionKind{Group: group, Version: version, Kind: tm.Kind}
	s.mu.RLock()
	var k *KindInfo
	var ok bool
	if list {
		k, ok = s.byList[gvk]
	} else {
		k, ok = s.byGVK[gvk]
	}
	s.mu.RUnlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("resource: %s is not registered in the scheme", gvk)
	case !k.generic:
		return nil, fmt.Errorf("resource: %s has a Go type of its own, not %s", gvk, what)
	}
	return k, nil
}

// Kinds returns every registered kind, sorted by group, version and kind.
func (s *Scheme) Kinds() []*KindInfo {
	s.mu.RLock()
	out := make([]*KindInfo, 0, len(s.byGVK))
	for _, k := range s.byGVK {
		out = append(out, k)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}

// SplitAPIVersion splits "group/version" into its parts; "v1" is the core group.
func SplitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// Kind names of this package.
const (
	KindDirectClusterEndpointToken           = "DirectClusterEndpointToken"
	KindProjectMigrateVirtualClusterInstance = "ProjectMigrateVirtualClusterInstance"
	KindProject                              = "Project"
	KindVirtualClusterInstance               = "VirtualClusterInstance"
	KindAccessKey                            = "AccessKey"
)

func builtinKinds() []KindInfo {
	return []KindInfo{
		{
			Group: Group, Version: Version, Kind: KindDirectClusterEndpointToken,
			Resource: "directclusterendpointtokens",
			New:      func() Object { return &DirectClusterEndpointToken{} },
			NewList:  func() ObjectList { return &DirectClusterEndpointTokenList{} },
		},
		{
			Group: Group, Version: Version, Kind: KindProjectMigrateVirtualClusterInstance,
			Resource: "migratevirtualclusterinstance", ParentResource: "projects",
			New:     func() Object { return &ProjectMigrateVirtualClusterInstance{} },
			NewList: func() ObjectList { return &ProjectMigrateVirtualClusterInstanceList{} },
		},
		{
			Group: Group, Version: Version, Kind: KindProject, Resource: "projects", HasStatus: true,
			New:     func() Object { return &Project{} },
			NewList: func() ObjectList { return &ProjectList{} },
		},
		{
			Group: Group, Version: Version, Kind: KindVirtualClusterInstance,
			Resource: "virtualclusterinstances", Namespaced: true, HasStatus: true,
			New:     func() Object { return &VirtualClusterInstance{} },
			NewList: func() ObjectList { return &VirtualClusterInstanceList{} },
		},
		{
			Group: Group, Version: Version, Kind: KindAccessKey, Resource: "accesskeys",
			New:     func() Object { return &AccessKey{} },
			NewList: func() ObjectList { return &AccessKeyList{} },
		},
	}
}
