package main

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/management-service/mgmt/resource"
)

// The objects every workload writes: a ~1 KB VirtualClusterInstance with 5 labels,
// the object of store/bench_test.go (benchInstance), in three shapes: ours
// (resource.VirtualClusterInstance), a typed CRD-like Kubernetes type with the same
// fields (VirtualClusterInstance below, for controller-runtime's fake client) and
// its unstructured form. The raw stores write the JSON of ours as an opaque value.

const (
	benchNamespace = "p-bench"
	selectorKey    = "one-in-hundred"
	selectorValue  = "true"
)

var (
	annotation  = strings.Repeat("x", 400)
	description = strings.Repeat("d", 200)
)

// benchLabels are the 5 labels of object i; selectorKey=true on one object in 100.
func benchLabels(i int) map[string]string {
	return map[string]string{
		"app": "bench", "tier": "backend", "team": fmt.Sprintf("team-%d", i%10),
		selectorKey: fmt.Sprintf("%t", i%100 == 0), "management.service/project": "bench",
	}
}

// objName is the name of object i of a workload; prefix keeps the objects of
// different workloads in one store apart.
func objName(prefix string, i int) string { return fmt.Sprintf("%s%06d", prefix, i) }

// oursInstance is store/bench_test.go's benchInstance, named prefix+i.
func oursInstance(prefix string, i int) *resource.VirtualClusterInstance {
	return &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Namespace:   benchNamespace,
			Name:        objName(prefix, i),
			Labels:      benchLabels(i),
			Annotations: map[string]string{"description": annotation},
		},
		Spec: resource.VirtualClusterInstanceSpec{
			DisplayName: fmt.Sprintf("Instance %d", i),
			Description: description,
			Owner:       &resource.Owner{User: "alice"},
			ClusterRef:  resource.ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"},
			TemplateRef: &resource.TemplateRef{Name: "default", Version: "1.0.0"},
			Parameters:  "replicas: 1\n",
		},
	}
}

// rawValue is the stored form of object i for the raw stores: the JSON of ours with
// the metadata a store would add, about 1 KB.
func rawValue(i int) []byte {
	o := oursInstance("obj-", i)
	o.APIVersion, o.Kind = "management.service/v1", "VirtualClusterInstance"
	o.UID = "0b8e7c1a-1111-4222-8333-944455556666"
	o.ResourceVersion = "1"
	o.Generation = 1
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

// k8sGV is the group and version of the typed Kubernetes mirror of the kind.
var k8sGV = schema.GroupVersion{Group: "management.service", Version: "v1"}

// VirtualClusterInstance mirrors resource.VirtualClusterInstance as a typed
// Kubernetes object (what a CRD's Go type looks like), for the fake client.
type VirtualClusterInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VirtualClusterInstanceSpec   `json:"spec,omitempty"`
	Status            VirtualClusterInstanceStatus `json:"status,omitempty"`
}

// VirtualClusterInstanceSpec mirrors resource.VirtualClusterInstanceSpec.
type VirtualClusterInstanceSpec struct {
	DisplayName string       `json:"displayName,omitempty"`
	Description string       `json:"description,omitempty"`
	Owner       *Owner       `json:"owner,omitempty"`
	ClusterRef  ClusterRef   `json:"clusterRef,omitempty"`
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	Parameters  string       `json:"parameters,omitempty"`
}

// Owner mirrors resource.Owner.
type Owner struct {
	User string `json:"user,omitempty"`
	Team string `json:"team,omitempty"`
}

// ClusterRef mirrors resource.ClusterRef.
type ClusterRef struct {
	Cluster        string `json:"cluster,omitempty"`
	Namespace      string `json:"namespace,omitempty"`
	VirtualCluster string `json:"virtualCluster,omitempty"`
}

// TemplateRef mirrors resource.TemplateRef.
type TemplateRef struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// VirtualClusterInstanceStatus mirrors resource.VirtualClusterInstanceStatus.
type VirtualClusterInstanceStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Reason     string             `json:"reason,omitempty"`
	Message    string             `json:"message,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VirtualClusterInstanceList is a list of VirtualClusterInstance.
type VirtualClusterInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualClusterInstance `json:"items"`
}

// DeepCopyInto copies o into out.
func (o *VirtualClusterInstance) DeepCopyInto(out *VirtualClusterInstance) {
	*out = *o
	o.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if o.Spec.Owner != nil {
		v := *o.Spec.Owner
		out.Spec.Owner = &v
	}
	if o.Spec.TemplateRef != nil {
		v := *o.Spec.TemplateRef
		out.Spec.TemplateRef = &v
	}
	if o.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(o.Status.Conditions))
		for i := range o.Status.Conditions {
			o.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy.
func (o *VirtualClusterInstance) DeepCopy() *VirtualClusterInstance {
	if o == nil {
		return nil
	}
	out := new(VirtualClusterInstance)
	o.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (o *VirtualClusterInstance) DeepCopyObject() runtime.Object { return o.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *VirtualClusterInstanceList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(VirtualClusterInstanceList)
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]VirtualClusterInstance, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// newK8sScheme returns a scheme that knows the typed kind and its list.
func newK8sScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypes(k8sGV, &VirtualClusterInstance{}, &VirtualClusterInstanceList{})
	metav1.AddToGroupVersion(s, k8sGV)
	return s
}

// k8sInstance is object i as the typed Kubernetes mirror.
func k8sInstance(prefix string, i int) *VirtualClusterInstance {
	return &VirtualClusterInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   benchNamespace,
			Name:        objName(prefix, i),
			Labels:      benchLabels(i),
			Annotations: map[string]string{"description": annotation},
		},
		Spec: VirtualClusterInstanceSpec{
			DisplayName: fmt.Sprintf("Instance %d", i),
			Description: description,
			Owner:       &Owner{User: "alice"},
			ClusterRef:  ClusterRef{Cluster: "cluster-1", Namespace: "vcluster-ns", VirtualCluster: "vc"},
			TemplateRef: &TemplateRef{Name: "default", Version: "1.0.0"},
			Parameters:  "replicas: 1\n",
		},
	}
}

// unstructuredInstance is object i in unstructured form.
func unstructuredInstance(prefix string, i int) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(k8sInstance(prefix, i))
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(k8sGV.WithKind("VirtualClusterInstance"))
	return u
}
