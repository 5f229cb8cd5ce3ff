package crclient_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Widget is a custom resource as controller-gen would write it: spec, status, and
// deep-copy methods.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	Size  int               `json:"size,omitempty"`
	Color string            `json:"color,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// WidgetStatus is the observed state.
type WidgetStatus struct {
	Ready              bool  `json:"ready,omitempty"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Tags != nil {
		out.Spec.Tags = make(map[string]string, len(w.Spec.Tags))
		for k, v := range w.Spec.Tags {
			out.Spec.Tags[k] = v
		}
	}
}

func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

var widgetGV = schema.GroupVersion{Group: "example.com", Version: "v1"}

// newScheme is client-go's scheme plus Widget.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

func mustSelector(t interface{ Helper() }, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}
