package resource

import (
	"encoding/json"
	"maps"
)

// DeepCopier is implemented by objects that can copy themselves without reflection.
// Every kind of this package implements it; the store uses it when present and falls
// back to a reflective copy for other kinds.
type DeepCopier interface {
	// DeepCopyResource returns a copy that shares no mutable memory with the receiver.
	DeepCopyResource() Object
}

// DeepCopierInto is implemented by objects that can copy themselves into an object
// of their type that already exists (an item of a list, say), without reflection and
// without allocating the object. Every kind of this package implements it.
type DeepCopierInto interface {
	// DeepCopyResourceInto overwrites out, which must have the receiver's type, with a
	// copy that shares no mutable memory with the receiver.
	DeepCopyResourceInto(out Object)
}

func copyStrings(in []string) []string {
	if in == nil {
		return nil
	}
	return append(make([]string, 0, len(in)), in...)
}

// copyMap clones in (nil stays nil, empty stays empty); maps.Clone copies the table
// as it is instead of inserting every entry again.
func copyMap(in map[string]string) map[string]string {
	return maps.Clone(in)
}

func copyRaw(in json.RawMessage) json.RawMessage {
	if in == nil {
		return nil
	}
	return append(make(json.RawMessage, 0, len(in)), in...)
}

func copyPtr[T any](in *T) *T {
	if in == nil {
		return nil
	}
	v := *in
	return &v
}

// DeepCopyInto copies m into out, sharing no mutable memory.
func (m *ObjectMeta) DeepCopyInto(out *ObjectMeta) {
	*out = *m
	out.DeletionTimestamp = copyPtr(m.DeletionTimestamp)
	out.DeletionGracePeriodSeconds = copyPtr(m.DeletionGracePeriodSeconds)
	out.Labels = copyMap(m.Labels)
	out.Annotations = copyMap(m.Annotations)
	if m.OwnerReferences != nil {
		out.OwnerReferences = make([]OwnerReference, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			r.Controller = copyPtr(r.Controller)
			r.BlockOwnerDeletion = copyPtr(r.BlockOwnerDeletion)
			out.OwnerReferences[i] = r
		}
	}
	out.Finalizers = copyStrings(m.Finalizers)
	if m.ManagedFields != nil {
		// One allocation for the times and one for the field sets of every entry.
		nt, size := 0, 0
		for _, e := range m.ManagedFields {
			if e.Time != nil {
				nt++
			}
			size += len(e.FieldsV1)
		}
		var times []Time
		if nt > 0 {
			times = make([]Time, 0, nt)
		}
		var buf []byte
		if size > 0 {
			buf = make([]byte, 0, size)
		}
		out.ManagedFields = make([]ManagedFieldsEntry, len(m.ManagedFields))
		for i, e := range m.ManagedFields {
			if e.Time != nil {
				times = append(times, *e.Time)
				e.Time = &times[len(times)-1]
			}
			if len(e.FieldsV1) > 0 {
				start := len(buf)
				buf = append(buf, e.FieldsV1...)
				e.FieldsV1 = buf[start:len(buf):len(buf)]
			} else {
				e.FieldsV1 = copyRaw(e.FieldsV1)
			}
			out.ManagedFields[i] = e
		}
	}
}

// DeepCopy returns a copy of the scope that shares no mutable memory with it.
func (s *AccessKeyScope) DeepCopy() *AccessKeyScope {
	if s == nil {
		return nil
	}
	out := *s
	if s.Projects != nil {
		out.Projects = append([]AccessKeyScopeProject(nil), s.Projects...)
	}
	if s.Spaces != nil {
		out.Spaces = append([]AccessKeyScopeSpace(nil), s.Spaces...)
	}
	if s.VirtualClusters != nil {
		out.VirtualClusters = append([]AccessKeyScopeVirtualCluster(nil), s.VirtualClusters...)
	}
	if s.Rules != nil {
		out.Rules = make([]AccessKeyScopeRule, len(s.Rules))
		for i, r := range s.Rules {
			r.Verbs = copyStrings(r.Verbs)
			if r.Resources != nil {
				res := make([]GroupResources, len(r.Resources))
				for j, g := range r.Resources {
					g.Resources = copyStrings(g.Resources)
					res[j] = g
				}
				r.Resources = res
			}
			r.ResourceNames = copyStrings(r.ResourceNames)
			r.Namespaces = copyStrings(r.Namespaces)
			r.NonResourceURLs = copyStrings(r.NonResourceURLs)
			if r.RequestTargets != nil {
				r.RequestTargets = append([]RequestTarget(nil), r.RequestTargets...)
			}
			if r.VirtualClusters != nil {
				r.VirtualClusters = append([]AccessKeyVirtualCluster(nil), r.VirtualClusters...)
			}
			out.Rules[i] = r
		}
	}
	return &out
}

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *DirectClusterEndpointToken) DeepCopyInto(out *DirectClusterEndpointToken) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Scope = o.Spec.Scope.DeepCopy()
	out.Status.ExpirationTimestamp = copyPtr(o.Status.ExpirationTimestamp)
}

// DeepCopyResource returns a deep copy.
func (o *DirectClusterEndpointToken) DeepCopyResource() Object {
	out := new(DirectClusterEndpointToken)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *DirectClusterEndpointToken, a deep copy of o.
func (o *DirectClusterEndpointToken) DeepCopyResourceInto(out Object) {
	o.DeepCopyInto(out.(*DirectClusterEndpointToken))
}

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *ProjectMigrateVirtualClusterInstance) DeepCopyInto(out *ProjectMigrateVirtualClusterInstance) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopyResource returns a deep copy.
func (o *ProjectMigrateVirtualClusterInstance) DeepCopyResource() Object {
	out := new(ProjectMigrateVirtualClusterInstance)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *ProjectMigrateVirtualClusterInstance, a deep copy of o.
func (o *ProjectMigrateVirtualClusterInstance) DeepCopyResourceInto(out Object) {
	o.DeepCopyInto(out.(*ProjectMigrateVirtualClusterInstance))
}

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *Project) DeepCopyInto(out *Project) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Owner = copyPtr(o.Spec.Owner)
	if o.Spec.AllowedClusters != nil {
		out.Spec.AllowedClusters = append([]AllowedCluster(nil), o.Spec.AllowedClusters...)
	}
	out.Status.Conditions = copyConditions(o.Status.Conditions)
}

// DeepCopyResource returns a deep copy.
func (o *Project) DeepCopyResource() Object {
	out := new(Project)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *Project, a deep copy of o.
func (o *Project) DeepCopyResourceInto(out Object) { o.DeepCopyInto(out.(*Project)) }

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *VirtualClusterInstance) DeepCopyInto(out *VirtualClusterInstance) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Owner = copyPtr(o.Spec.Owner)
	out.Spec.TemplateRef = copyPtr(o.Spec.TemplateRef)
	out.Status.Conditions = copyConditions(o.Status.Conditions)
}

// copyConditions returns a copy of cs that shares no memory with it (nil for nil).
func copyConditions(cs []Condition) []Condition {
	if cs == nil {
		return nil
	}
	out := make([]Condition, len(cs))
	for i, c := range cs {
		c.LastTransitionTime = copyPtr(c.LastTransitionTime)
		out[i] = c
	}
	return out
}

// DeepCopyResource returns a deep copy.
func (o *VirtualClusterInstance) DeepCopyResource() Object {
	out := new(VirtualClusterInstance)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *VirtualClusterInstance, a deep copy of o.
func (o *VirtualClusterInstance) DeepCopyResourceInto(out Object) {
	o.DeepCopyInto(out.(*VirtualClusterInstance))
}

// DeepCopyInto copies o into out, sharing no mutable memory.
func (o *AccessKey) DeepCopyInto(out *AccessKey) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Scope = o.Spec.Scope.DeepCopy()
}

// DeepCopyResource returns a deep copy.
func (o *AccessKey) DeepCopyResource() Object {
	out := new(AccessKey)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyResourceInto makes out, a *AccessKey, a deep copy of o.
func (o *AccessKey) DeepCopyResourceInto(out Object) { o.DeepCopyInto(out.(*AccessKey)) }
