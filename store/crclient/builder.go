package crclient

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/management-service/mgmt/resource"
	jsonschema "github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// ClientBuilder builds a [Client]. Its methods are those of controller-runtime's
// fake.ClientBuilder, so that a test switches by changing its constructor, plus
// options of the store's own.
type ClientBuilder struct {
	scheme     *runtime.Scheme
	restMapper meta.RESTMapper
	objs       []client.Object
	runtimeObj []runtime.Object
	lists      []client.ObjectList
	status     []client.Object
	cluster    []client.Object
	schemas    map[client.Object][]byte
	indexes    map[schema.GroupVersionKind]map[string]client.IndexerFunc
	funcs      *interceptor.Funcs
	managed    bool
	backend    backend.Backend
	existing   *store.Store
	setOpts    bool
	opts       store.Options
	kinds      []resource.KindInfo
	built      bool
	err        error
}

// NewClientBuilder returns a builder of a client over a new in-memory store (memdb)
// with a fake clock.
func NewClientBuilder() *ClientBuilder { return &ClientBuilder{} }

// WithScheme sets the scheme of the user's types; nil (the default) is client-go's
// scheme.Scheme, as for the fake client.
func (b *ClientBuilder) WithScheme(s *runtime.Scheme) *ClientBuilder {
	b.scheme = s
	return b
}

// WithRESTMapper sets where resource names and scopes come from. Without one, the
// resource is the kind's guessed plural and the scope that of kube-apiserver for the
// built-in kinds, namespaced for the others (see WithClusterScoped).
func (b *ClientBuilder) WithRESTMapper(m meta.RESTMapper) *ClientBuilder {
	b.restMapper = m
	return b
}

// WithObjects adds objects the store starts with. They are created through the
// store (so they get uid, resourceVersion and creationTimestamp); a status is
// written through the status path, and an object with a deletionTimestamp and
// finalizers is then deleted, so that it is terminating. The objects passed are not
// changed.
func (b *ClientBuilder) WithObjects(objs ...client.Object) *ClientBuilder {
	b.objs = append(b.objs, objs...)
	return b
}

// WithRuntimeObjects is WithObjects for runtime.Objects (lists are expanded).
func (b *ClientBuilder) WithRuntimeObjects(objs ...runtime.Object) *ClientBuilder {
	b.runtimeObj = append(b.runtimeObj, objs...)
	return b
}

// WithLists adds the items of lists, as WithObjects does.
func (b *ClientBuilder) WithLists(lists ...client.ObjectList) *ClientBuilder {
	b.lists = append(b.lists, lists...)
	return b
}

// WithStatusSubresource gives the kinds of objs a status subresource: Update and
// Patch keep the stored status, Status().Update and Status().Patch change only it.
// The built-in kinds that have one in kube-apiserver (Pod, Deployment, ...) always
// do, as with the fake client.
func (b *ClientBuilder) WithStatusSubresource(objs ...client.Object) *ClientBuilder {
	b.status = append(b.status, objs...)
	return b
}

// WithClusterScoped makes the kinds of objs cluster-scoped (custom kinds are
// namespaced otherwise, unless a RESTMapper says so).
func (b *ClientBuilder) WithClusterScoped(objs ...client.Object) *ClientBuilder {
	b.cluster = append(b.cluster, objs...)
	return b
}

// WithJSONSchema validates every write of obj's kind against schemaJSON (draft
// 2020-12), as kube-apiserver validates a custom resource against its CRD's
// schema: a write that does not conform is 422 Invalid.
func (b *ClientBuilder) WithJSONSchema(obj client.Object, schemaJSON []byte) *ClientBuilder {
	if b.schemas == nil {
		b.schemas = map[client.Object][]byte{}
	}
	b.schemas[obj] = schemaJSON
	return b
}

// WithIndex registers an index: a field selector on field for obj's kind is
// answered with extract's values (exact matches), in List, DeleteAllOf and Watch.
// Registering the same field of a kind twice panics, as with the fake client.
func (b *ClientBuilder) WithIndex(obj runtime.Object, field string, extract client.IndexerFunc) *ClientBuilder {
	gvk, err := apiutil.GVKForObject(obj, b.schemeOrDefault())
	if err != nil {
		panic(err)
	}
	if b.indexes == nil {
		b.indexes = map[schema.GroupVersionKind]map[string]client.IndexerFunc{}
	}
	if b.indexes[gvk] == nil {
		b.indexes[gvk] = map[string]client.IndexerFunc{}
	}
	if _, dup := b.indexes[gvk][field]; dup {
		panic(fmt.Errorf("indexer conflict: field %s for GroupVersionKind %v is already indexed", field, gvk))
	}
	b.indexes[gvk][field] = extract
	return b
}

// WithInterceptorFuncs wraps the client in controller-runtime's interceptor.
func (b *ClientBuilder) WithInterceptorFuncs(funcs interceptor.Funcs) *ClientBuilder {
	b.funcs = &funcs
	return b
}

// WithReturnManagedFields makes reads and writes return metadata.managedFields,
// which kube-apiserver always returns and the fake client (and, by default, this
// client, so that tests comparing whole objects keep passing) leaves out.
func (b *ClientBuilder) WithReturnManagedFields() *ClientBuilder {
	b.managed = true
	return b
}

// WithBackend puts the store on b instead of a new memdb backend (the client then
// closes b in Close).
func (b *ClientBuilder) WithBackend(be backend.Backend) *ClientBuilder {
	b.backend = be
	return b
}

// WithStoreOptions sets the store's options (admission hooks, limits, ...). Its
// Clock is replaced by the client's fake clock and its Scheme by one that holds
// resource.NewScheme's kinds, those of WithKinds and the user's.
func (b *ClientBuilder) WithStoreOptions(o store.Options) *ClientBuilder {
	b.opts, b.setOpts = o, true
	return b
}

// WithStore puts the client on a store that already exists, on any backend (a
// storetest.NewFixture's, one over badger or etcd...), instead of a new one. The
// client registers the kinds it uses in the store's scheme, and Close leaves the
// store open. Step needs the store's clock to be a *storetest.FakeClock (a fixture's
// is). WithBackend, WithStoreOptions, WithKinds and WithJSONSchema do not combine
// with it: those shape a store the builder makes.
func (b *ClientBuilder) WithStore(s *store.Store) *ClientBuilder {
	b.existing = s
	return b
}

// WithKinds adds kinds with Go types of the caller's own (resource.Object types) to
// the store, reachable through unstructured objects of their GroupVersionKind.
func (b *ClientBuilder) WithKinds(kinds ...resource.KindInfo) *ClientBuilder {
	b.kinds = append(b.kinds, kinds...)
	return b
}

func (b *ClientBuilder) schemeOrDefault() *runtime.Scheme {
	if b.scheme == nil {
		return clientgoscheme.Scheme
	}
	return b.scheme
}

// Build returns the client, as a client.WithWatch like the fake client's Build. It
// panics when the seed objects cannot be created, as the fake client does. Use
// BuildClient for the *Client (its clock and store).
func (b *ClientBuilder) Build() client.WithWatch {
	c, err := b.BuildClient()
	if err != nil {
		panic(err)
	}
	if b.funcs != nil {
		return interceptor.NewClient(c, *b.funcs)
	}
	return c
}

// BuildClient returns the *Client (interceptor functions are not applied: use Build
// for them). Seed objects that cannot be created are an error.
func (b *ClientBuilder) BuildClient() (*Client, error) {
	if b.built {
		return nil, fmt.Errorf("crclient: Build must not be called more than once on a builder")
	}
	b.built = true
	sch := b.schemeOrDefault()
	gvkOf := func(o runtime.Object) (schema.GroupVersionKind, error) { return apiutil.GVKForObject(o, sch) }

	status := map[schema.GroupVersionKind]bool{}
	for _, g := range inTreeWithStatus {
		status[g] = true
	}
	for _, o := range b.status {
		g, err := gvkOf(o)
		if err != nil {
			return nil, err
		}
		status[g] = true
	}
	cluster := map[schema.GroupKind]bool{}
	for _, o := range b.cluster {
		g, err := gvkOf(o)
		if err != nil {
			return nil, err
		}
		cluster[g.GroupKind()] = true
	}
	schemas := map[schema.GroupVersionKind][]byte{}
	for o, s := range b.schemas {
		g, err := gvkOf(o)
		if err != nil {
			return nil, err
		}
		schemas[g] = s
	}

	if b.existing != nil {
		if b.backend != nil || b.setOpts || len(b.kinds) > 0 || len(schemas) > 0 {
			return nil, fmt.Errorf("crclient: WithStore does not combine with WithBackend, WithStoreOptions, WithKinds or WithJSONSchema")
		}
		fc, _ := b.existing.Clock().(*storetest.FakeClock)
		ks := newKinds(b.existing.Scheme(), b.restMapper, status, cluster, nil)
		c := &Client{store: b.existing, clock: fc, scheme: sch, kinds: ks,
			indexes: maps.Clone(b.indexes), returnManagedFields: b.managed}
		c.mapper = restMapper{ks: ks}
		if err := ks.objectKinds(sch); err != nil {
			return nil, err
		}
		if err := c.seed(b); err != nil {
			return nil, err
		}
		return c, nil
	}
	rs := resource.NewScheme()
	for _, k := range b.kinds {
		if err := rs.Register(k); err != nil {
			return nil, err
		}
	}
	opts := b.opts
	clock := storetest.NewFakeClock(storetest.FixtureStart)
	opts.Clock, opts.Scheme = clock, rs
	var registry *jsonschema.Registry
	if len(schemas) > 0 {
		registry = jsonschema.NewRegistry()
		opts.Validating = append(append([]store.ValidatingAdmitter(nil), opts.Validating...), jsonschema.NewAdmitter(registry))
	}
	if opts.FieldTypes == nil {
		// Server-side apply and managedFields merge lists as the schemas say
		// (x-kubernetes-list-type...): WithJSONSchema's and the store's own kinds'.
		// Built-in kinds take client-go's types of kube-apiserver's OpenAPI.
		if registry != nil {
			opts.FieldTypes = newFieldTypes(registry, sch)
		} else {
			opts.FieldTypes = newFieldTypes(jsonschema.NewRegistry(), sch)
		}
	}
	be := b.backend
	if be == nil {
		be = memdb.New(memdb.Options{})
	}
	st, err := store.New(be, opts)
	if err != nil {
		return nil, err
	}
	ks := newKinds(rs, b.restMapper, status, cluster, schemas)
	ks.registry = registry
	c := &Client{store: st, backend: be, clock: clock, scheme: sch, kinds: ks, ownsStore: true,
		indexes: maps.Clone(b.indexes), returnManagedFields: b.managed}
	c.mapper = restMapper{ks: ks}
	if err := ks.objectKinds(sch); err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.seed(b); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// seed creates the builder's objects.
func (c *Client) seed(b *ClientBuilder) error {
	var objs []runtime.Object
	for _, o := range b.objs {
		objs = append(objs, o)
	}
	for _, l := range b.lists {
		items, err := meta.ExtractList(l)
		if err != nil {
			return err
		}
		objs = append(objs, items...)
	}
	for _, o := range b.runtimeObj {
		if meta.IsListType(o) {
			items, err := meta.ExtractList(o)
			if err != nil {
				return err
			}
			objs = append(objs, items...)
			continue
		}
		objs = append(objs, o)
	}
	ctx := context.Background()
	for _, o := range objs {
		if err := c.seedOne(ctx, o); err != nil {
			return fmt.Errorf("crclient: seed object %T: %w", o, err)
		}
	}
	return nil
}

func (c *Client) seedOne(ctx context.Context, o runtime.Object) error {
	k, err := c.kindOf(o)
	if err != nil {
		return err
	}
	in, err := c.toStore(k, o)
	if err != nil {
		return err
	}
	m := in.GetObjectMeta()
	m.ResourceVersion = ""
	terminating := m.DeletionTimestamp != nil
	if terminating && len(m.Finalizers) == 0 {
		return fmt.Errorf("refusing to create obj %s with metadata.deletionTimestamp but no finalizers", m.Name)
	}
	status := copyStatusOf(in)
	if err := c.store.Create(ctx, in, store.CreateOptions{WriteOptions: writeOpts(nil, "")}); err != nil {
		return toAPIError(err)
	}
	if k.info.HasStatus && status != nil {
		setStatusOf(in, status)
		if err := c.store.UpdateStatus(ctx, in, store.UpdateOptions{WriteOptions: writeOpts(nil, "")}); err != nil {
			return toAPIError(err)
		}
	}
	if terminating {
		if _, err := c.store.Delete(ctx, in, store.DeleteOptions{}); err != nil {
			return toAPIError(err)
		}
	}
	return nil
}

// copyStatusOf returns the status of a generic object (nil for other types, whose
// status a create keeps only when the kind has no status subresource).
func copyStatusOf(o resource.Object) []byte {
	if r, ok := o.(*resource.RawObject); ok && len(r.Status) > 0 {
		return append([]byte(nil), r.Status...)
	}
	return nil
}

func setStatusOf(o resource.Object, status []byte) {
	if r, ok := o.(*resource.RawObject); ok {
		r.Status = status
	}
}

// inTreeWithStatus are the built-in kinds with a status subresource that the fake
// client also treats as having one.
var inTreeWithStatus = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "Node"},
	{Version: "v1", Kind: "PersistentVolumeClaim"}, {Version: "v1", Kind: "PersistentVolume"},
	{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "ReplicationController"}, {Version: "v1", Kind: "Service"},
	{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"},
	{Group: "batch", Version: "v1", Kind: "CronJob"}, {Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment"},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
}
