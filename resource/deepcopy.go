package resource

import "encoding/json"

// DeepCopier is implemented by objects that can copy themselves without reflection.
// Every kind of this package implements it; the store uses it when present and falls
// back to a reflective copy for other kinds.
type DeepCopier interface {
	// DeepCopyObject returns a copy that shares no mutable memory with the receiver.
	DeepCopyObject() Object
}

func copyStrings(in []string) []string {
	if in == nil {
		return nil
	}
	return append(make([]string, 0, len(in)), in...)
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
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
		out.ManagedFields = make([]ManagedFieldsEntry, len(m.ManagedFields))
		for i, e := range m.ManagedFields {
			e.Time = copyPtr(e.Time)
			e.FieldsV1 = copyRaw(e.FieldsV1)
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

// DeepCopyObject returns a deep copy.
func (o *DirectClusterEndpointToken) DeepCopyObject() Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Scope = o.Spec.Scope.DeepCopy()
	out.Status.ExpirationTimestamp = copyPtr(o.Status.ExpirationTimestamp)
	return &out
}

// DeepCopyObject returns a deep copy.
func (o *ProjectMigrateVirtualClusterInstance) DeepCopyObject() Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject returns a deep copy.
func (o *Project) DeepCopyObject() Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Owner = copyPtr(o.Spec.Owner)
	if o.Spec.AllowedClusters != nil {
		out.Spec.AllowedClusters = append([]AllowedCluster(nil), o.Spec.AllowedClusters...)
	}
	return &out
}

// DeepCopyObject returns a deep copy.
func (o *VirtualClusterInstance) DeepCopyObject() Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Owner = copyPtr(o.Spec.Owner)
	out.Spec.TemplateRef = copyPtr(o.Spec.TemplateRef)
	if o.Status.Conditions != nil {
		out.Status.Conditions = make([]Condition, len(o.Status.Conditions))
		for i, c := range o.Status.Conditions {
			c.LastTransitionTime = copyPtr(c.LastTransitionTime)
			out.Status.Conditions[i] = c
		}
	}
	return &out
}

// DeepCopyObject returns a deep copy.
func (o *AccessKey) DeepCopyObject() Object {
	out := *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Scope = o.Spec.Scope.DeepCopy()
	return &out
}
