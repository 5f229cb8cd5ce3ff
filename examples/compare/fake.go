package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// controller-runtime's fake client, the usual fixture of controller unit tests, in
// its two configurations:
//
//   - default: fake.NewClientBuilder().Build() keeps objects in client-go's
//     field-managed object tracker (testing.NewFieldManagedObjectTracker), which
//     computes managedFields on every write (for server-side apply);
//   - plain: the same builder given client-go's plain tracker with
//     WithObjectTracker(testing.NewObjectTracker(scheme, decoder)), which does not.
//
// Both register the kind with a status subresource, as ours has one.

// newFakeClient returns a fake client over a fresh scheme that knows the kind.
func newFakeClient(plain bool) client.WithWatch {
	scheme := newK8sScheme()
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&VirtualClusterInstance{})
	if plain {
		b = b.WithObjectTracker(clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder()))
	}
	return b.Build()
}

// fakeEnv holds one tracker configuration's clients: one for the single-object
// workloads and two seeded for the lists.
type fakeEnv struct {
	write, small, large client.WithWatch
}

func newFakeEnv(ctx context.Context, cfg *config, plain bool) (*fakeEnv, error) {
	e := &fakeEnv{write: newFakeClient(plain), small: newFakeClient(plain), large: newFakeClient(plain)}
	// Seeded through Create, as a test suite fills its fixture, so that the default
	// tracker's objects carry the managedFields it records.
	if err := fakeSeed(ctx, e.write, prefixGet, getSeed); err != nil {
		return nil, err
	}
	if err := e.write.Create(ctx, k8sInstance(prefixUpdate, 0)); err != nil {
		return nil, err
	}
	if err := e.write.Create(ctx, unstructuredInstance("u"+prefixUpdate, 0)); err != nil {
		return nil, err
	}
	if err := fakeSeed(ctx, e.small, prefixList, cfg.small); err != nil {
		return nil, err
	}
	if err := fakeSeed(ctx, e.large, prefixList, cfg.large); err != nil {
		return nil, err
	}
	return e, nil
}

func fakeSeed(ctx context.Context, c client.Client, prefix string, n int) error {
	return fakeSeedWith(ctx, c, typedMaker, prefix, n)
}

func fakeSeedWith(ctx context.Context, c client.Client, mk objMaker, prefix string, n int) error {
	for i := 0; i < n; i++ {
		if err := c.Create(ctx, mk(prefix, i)); err != nil {
			return fmt.Errorf("seed fake client: %w", err)
		}
	}
	return nil
}

// objMaker builds object i of a workload in one of the shapes the fake client takes.
type objMaker func(prefix string, i int) client.Object

func typedMaker(prefix string, i int) client.Object        { return k8sInstance(prefix, i) }
func unstructuredMaker(prefix string, i int) client.Object { return unstructuredInstance(prefix, i) }
func configMapMaker(prefix string, i int) client.Object    { return configMapInstance(prefix, i) }

func makerOf(unstr bool) objMaker {
	if unstr {
		return unstructuredMaker
	}
	return typedMaker
}

func fakeCreate(ctx context.Context, c client.Client, row, col string, unstr bool) *bench {
	prefix := prefixCreate
	if unstr {
		prefix = "u" + prefixCreate
	}
	return fakeCreateWith(ctx, c, row, col, makerOf(unstr), prefix)
}

// fakeCreateWith creates objects built by mk: prepare builds the next n untimed,
// run creates the next n (building any that prepare did not), so that a sample may
// also be taken one create at a time.
func fakeCreateWith(ctx context.Context, c client.Client, row, col string, mk objMaker, prefix string) *bench {
	var objs []client.Object
	next := 0
	return &bench{row: row, col: col,
		prepare: func(n int) {
			objs = objs[:0]
			for i := 0; i < n; i++ {
				objs = append(objs, mk(prefix, next))
				next++
			}
		},
		run: func(n int) error {
			for i := 0; i < n; i++ {
				var o client.Object
				if len(objs) > 0 {
					o, objs = objs[0], objs[1:]
				} else {
					o = mk(prefix, next)
					next++
				}
				if err := c.Create(ctx, o); err != nil {
					return err
				}
			}
			return nil
		}}
}

func fakeGet(ctx context.Context, c client.Client, row, col string, unstr bool) *bench {
	if unstr {
		gvk := k8sGV.WithKind("VirtualClusterInstance")
		u := &unstructured.Unstructured{}
		return fakeGetWith(ctx, c, row, col, func() client.Object { u.SetGroupVersionKind(gvk); return u })
	}
	typed := &VirtualClusterInstance{}
	return fakeGetWith(ctx, c, row, col, func() client.Object { return typed })
}

// fakeGetWith reads the seeded objects in turn into the object out returns.
func fakeGetWith(ctx context.Context, c client.Client, row, col string, out func() client.Object) *bench {
	names := seedNames(prefixGet, getSeed)
	k := 0
	return &bench{row: row, col: col, run: func(n int) error {
		for i := 0; i < n; i++ {
			name := names[k%len(names)]
			k++
			o := out()
			if err := c.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, o); err != nil {
				return err
			}
			if o.GetName() != name {
				return fmt.Errorf("got %q, want %q", o.GetName(), name)
			}
		}
		return nil
	}}
}

func fakeUpdate(ctx context.Context, c client.Client, row, col string, unstr bool) (*bench, error) {
	if unstr {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k8sGV.WithKind("VirtualClusterInstance"))
		return fakeUpdateWith(ctx, c, row, col, u, objName("u"+prefixUpdate, 0), func(name string) error {
			return unstructured.SetNestedField(u.Object, name, "spec", "displayName")
		})
	}
	obj := &VirtualClusterInstance{}
	return fakeUpdateWith(ctx, c, row, col, obj, objName(prefixUpdate, 0), func(name string) error {
		obj.Spec.DisplayName = name
		return nil
	})
}

// fakeUpdateWith reads the named object into obj, then updates it with set
// changing one field each time.
func fakeUpdateWith(ctx context.Context, c client.Client, row, col string, obj client.Object, name string, set func(string) error) (*bench, error) {
	if err := c.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, obj); err != nil {
		return nil, err
	}
	names := displayNames()
	k := 0
	return &bench{row: row, col: col, run: func(n int) error {
		for i := 0; i < n; i++ {
			if err := set(names[k%len(names)]); err != nil {
				return err
			}
			k++
			if err := c.Update(ctx, obj); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func fakeList(ctx context.Context, c client.Client, row, col string, unstr bool, want int, opts ...client.ListOption) *bench {
	return &bench{row: row, col: col, run: func(n int) error {
		for i := 0; i < n; i++ {
			var got int
			if unstr {
				l := &unstructured.UnstructuredList{}
				l.SetGroupVersionKind(k8sGV.WithKind("VirtualClusterInstanceList"))
				if err := c.List(ctx, l, opts...); err != nil {
					return err
				}
				got = len(l.Items)
			} else {
				l := &VirtualClusterInstanceList{}
				if err := c.List(ctx, l, opts...); err != nil {
					return err
				}
				got = len(l.Items)
			}
			if got != want {
				return fmt.Errorf("listed %d, want %d", got, want)
			}
		}
		return nil
	}}
}

// The anchors for the default tracker (create 1.23 ms, update 1.69 ms) are
// those of a kind the tracker has a schema for: for built-in kinds (and CRDs whose
// generated apply configurations are passed with WithTypeConverters) it computes
// managedFields through a typed converter, which costs far more than the deduced
// converter it falls back to for a kind it has no schema for, such as the typed
// mirror above. The ConfigMap rows show that path: a built-in kind of the same size
// and labels, in the default builder's client-go scheme.

// configMapInstance is object i as a ConfigMap of about the same size and labels.
func configMapInstance(prefix string, i int) client.Object {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   benchNamespace,
			Name:        objName(prefix, i),
			Labels:      benchLabels(i),
			Annotations: map[string]string{"description": annotation},
		},
		Data: map[string]string{
			"displayName": fmt.Sprintf("Instance %d", i), "description": description, "owner": "alice",
			"cluster": "cluster-1", "namespace": "vcluster-ns", "virtualCluster": "vc",
			"template": "default", "templateVersion": "1.0.0", "parameters": "replicas: 1\n",
		},
	}
}

// newFakeConfigMapClient is the default builder as most tests use it: client-go's
// scheme and the default tracker; seeded with the objects a get reads and the one an
// update rewrites.
func newFakeConfigMapClient(ctx context.Context) (client.WithWatch, error) {
	c := fake.NewClientBuilder().Build()
	if err := fakeSeedWith(ctx, c, configMapMaker, prefixGet, getSeed); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, configMapInstance(prefixUpdate, 0)); err != nil {
		return nil, err
	}
	return c, nil
}

func fakeConfigMapBenches(ctx context.Context, c client.Client, col string) (create, get, update *bench, err error) {
	create = fakeCreateWith(ctx, c, rowCreate, col, configMapMaker, prefixCreate)
	out := &corev1.ConfigMap{}
	get = fakeGetWith(ctx, c, rowGet, col, func() client.Object { return out })
	cm := &corev1.ConfigMap{}
	update, err = fakeUpdateWith(ctx, c, rowUpdate, col, cm, objName(prefixUpdate, 0), func(name string) error {
		cm.Data["displayName"] = name
		return nil
	})
	return create, get, update, err
}
