package crclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// RESTConfig returns a rest.Config for manager.New with [Client.ManagerOptions]. It
// points at an address nothing listens on: with those options the manager reads and
// writes through the client, never over HTTP.
func RESTConfig() *rest.Config {
	return &rest.Config{Host: "http://127.0.0.1:1"}
}

// ManagerOptions returns opts set up to run a controller-runtime manager against the
// client: the manager's client is c, its RESTMapper c's, and the informers of its
// cache list and watch through c (so controllers see the store's watch events).
// Metrics and health probes are turned off and leader election with them. The
// cache's per-object selectors (Cache.ByObject, DefaultLabelSelector, ...) are not
// applied: the informers see every object of their kind. Two parts of a manager
// cannot be redirected and still speak HTTP to RESTConfig's address, where they
// fail: mgr.GetAPIReader() (read through the client itself instead) and event
// recorders (their events are dropped, with a log line).
func (c *Client) ManagerOptions(opts manager.Options) manager.Options {
	opts.NewClient = func(*rest.Config, client.Options) (client.Client, error) { return c, nil }
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return c.mapper, nil }
	opts.Cache.Scheme = c.scheme
	opts.Scheme = c.scheme
	opts.Cache.NewInformer = func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration,
		indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(c.listWatch(obj), obj, resync, indexers)
	}
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = ""
	opts.LeaderElection = false
	return opts
}

// listWatch lists and watches the objects of example's kind through c, in example's
// representation (typed, unstructured or metadata only).
func (c *Client) listWatch(example runtime.Object) *toolscache.ListWatch {
	newList := func() (client.ObjectList, error) {
		gvk, err := apiutil.GVKForObject(example, c.scheme)
		if err != nil {
			return nil, err
		}
		lgvk := gvk.GroupVersion().WithKind(gvk.Kind + "List")
		switch example.(type) {
		case *unstructured.Unstructured:
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(lgvk)
			return l, nil
		case *metav1.PartialObjectMetadata:
			l := &metav1.PartialObjectMetadataList{}
			l.SetGroupVersionKind(lgvk)
			return l, nil
		}
		o, err := c.scheme.New(lgvk)
		if err != nil {
			return nil, err
		}
		l, ok := o.(client.ObjectList)
		if !ok || !strings.HasSuffix(lgvk.Kind, "List") {
			return nil, fmt.Errorf("crclient: %T is not a list", o)
		}
		return l, nil
	}
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			l, err := newList()
			if err != nil {
				return nil, err
			}
			o := opts
			return l, c.List(ctx, l, &client.ListOptions{Raw: &o})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			l, err := newList()
			if err != nil {
				return nil, err
			}
			o := opts
			o.Watch = true
			return c.Watch(ctx, l, &client.ListOptions{Raw: &o})
		},
	}
}
