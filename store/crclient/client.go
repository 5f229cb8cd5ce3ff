package crclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/storetest"
)

// DefaultFieldManager is the field manager of writes that name none.
const DefaultFieldManager = "crclient"

// Client is a controller-runtime client.WithWatch backed by a [store.Store]. Build it
// with [NewClientBuilder]. It is safe for concurrent use.
type Client struct {
	store   *store.Store
	backend backend.Backend
	clock   *storetest.FakeClock
	scheme  *runtime.Scheme
	kinds   *kinds
	mapper  meta.RESTMapper
	indexes map[schema.GroupVersionKind]map[string]client.IndexerFunc
	conv    convCache

	returnManagedFields bool
	ownsStore           bool // built the store: Close closes it
}

var _ client.WithWatch = (*Client)(nil)

// Store returns the store under the client.
func (c *Client) Store() *store.Store { return c.store }

// Clock returns the store's clock, which only [Client.Step] moves (it starts at
// storetest.FixtureStart). It is nil for a store of WithStore whose clock is not a
// *storetest.FakeClock.
func (c *Client) Clock() *storetest.FakeClock { return c.clock }

// Step moves the clock forward by d and waits until the store has settled: grace
// periods that ran out are reaped and the garbage collector has deleted what lost
// its owners.
func (c *Client) Step(d time.Duration) error {
	if c.clock == nil {
		return fmt.Errorf("crclient: the store's clock is not a *storetest.FakeClock: it cannot be stepped")
	}
	c.clock.Step(d)
	return c.Settle()
}

// Settle waits (up to 10 s) until the store's background work is done: dependents of
// deleted owners collected, expired grace periods reaped.
func (c *Client) Settle() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return toAPIError(c.store.Settle(ctx))
}

// Close stops the store's background work and closes its backend, when the builder
// made them (a store of WithStore stays open). The client is unusable afterwards.
func (c *Client) Close() error {
	if !c.ownsStore {
		return nil
	}
	err := c.store.Close()
	if c.backend != nil {
		if berr := c.backend.Close(); err == nil {
			err = berr
		}
	}
	return err
}

// Scheme returns the scheme the client was built with.
func (c *Client) Scheme() *runtime.Scheme { return c.scheme }

// RESTMapper returns the mapper of every kind the client knows: the kinds of its
// scheme, the store's own kinds, and unstructured kinds used since.
func (c *Client) RESTMapper() meta.RESTMapper { return c.mapper }

// GroupVersionKindFor returns the GroupVersionKind of obj, from the scheme or, for an
// unstructured object, from the object.
func (c *Client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.scheme)
}

// IsObjectNamespaced reports whether obj's kind is namespaced.
func (c *Client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	k, err := c.kindOf(obj)
	if err != nil {
		return false, err
	}
	return k.info.Namespaced, nil
}

func dryRun(v []string) bool { return len(v) > 0 && v[0] == metav1.DryRunAll }

func writeOpts(dry []string, manager string) store.WriteOptions {
	if manager == "" {
		manager = DefaultFieldManager
	}
	return store.WriteOptions{DryRun: dryRun(dry), FieldManager: manager}
}

// Get reads the object key names into obj.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	o := (&client.GetOptions{}).ApplyOptions(opts).AsGetOptions()
	out := k.info.New()
	if err := c.store.Get(ctx, key.Namespace, key.Name, out, store.GetOptions{ResourceVersion: o.ResourceVersion}); err != nil {
		return toAPIError(err)
	}
	return c.fromStore(k, out, obj)
}

// Create creates obj and fills it with the stored object.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	o := (&client.CreateOptions{}).ApplyOptions(opts)
	in, err := c.toStore(k, obj)
	if err != nil {
		return err
	}
	if err := c.store.Create(ctx, in, store.CreateOptions{WriteOptions: writeOpts(o.DryRun, o.FieldManager)}); err != nil {
		return toAPIError(err)
	}
	return c.fromWrite(k, in, obj)
}

// Update replaces the stored object with obj and fills obj with the result.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	o := (&client.UpdateOptions{}).ApplyOptions(opts)
	return c.update(ctx, obj, writeOpts(o.DryRun, o.FieldManager), false)
}

// update writes obj, or only its status. A built-in kind takes an update without
// resourceVersion as kube-apiserver does: against the version stored now.
func (c *Client) update(ctx context.Context, obj client.Object, wo store.WriteOptions, status bool) error {
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	in, err := c.toStore(k, obj)
	if err != nil {
		return err
	}
	write := func(o resource.Object) error {
		if status {
			return c.store.UpdateStatus(ctx, o, store.UpdateOptions{WriteOptions: wo})
		}
		return c.store.Update(ctx, o, store.UpdateOptions{WriteOptions: wo})
	}
	m := in.GetObjectMeta()
	if m.ResourceVersion == "" && k.unconditional {
		for range 16 {
			cur := k.info.New()
			if err := c.store.Get(ctx, m.Namespace, m.Name, cur, store.GetOptions{}); err != nil {
				return toAPIError(err)
			}
			try := objcopy(in)
			try.GetObjectMeta().ResourceVersion = cur.GetObjectMeta().ResourceVersion
			err := write(try)
			if err == nil {
				return c.fromWrite(k, try, obj)
			}
			if !apierrors.IsConflict(toAPIError(err)) {
				return toAPIError(err)
			}
		}
		return toAPIError(resource.NewConflict(k.info, m.Name, resource.OptimisticLockMessage))
	}
	if err := write(in); err != nil {
		return toAPIError(err)
	}
	return c.fromWrite(k, in, obj)
}

// objcopy copies a store object through JSON (only on the retry path).
func objcopy(o resource.Object) resource.Object {
	if c, ok := o.(resource.DeepCopier); ok {
		return c.DeepCopyResource()
	}
	out, err := resource.DeepCopy(o)
	if err != nil {
		return o
	}
	return out
}

// Patch applies patch to the stored object obj names and fills obj with the result.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	o := (&client.PatchOptions{}).ApplyOptions(opts)
	return c.patch(ctx, obj, patch, applyOpts{dryRun: o.DryRun, manager: o.FieldManager, force: o.Force}, "")
}

// patch applies patch to obj's object (its status when sub is "status"). With
// ApplyPatchType it is a server-side apply, whose field manager is required.
func (c *Client) patch(ctx context.Context, obj client.Object, patch client.Patch, ao applyOpts, sub string) error {
	wo := writeOpts(ao.dryRun, ao.manager)
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	target := k.info.New()
	tm := target.GetObjectMeta()
	tm.Name, tm.Namespace = obj.GetName(), obj.GetNamespace()
	switch patch.Type() {
	case types.MergePatchType, types.JSONPatchType:
		pt := store.PatchTypeMerge
		if patch.Type() == types.JSONPatchType {
			pt = store.PatchTypeJSON
		}
		if err := c.store.Patch(ctx, target, pt, data, store.PatchOptions{WriteOptions: wo, Subresource: sub}); err != nil {
			return toAPIError(err)
		}
		return c.fromWrite(k, target, obj)
	case types.StrategicMergePatchType:
		return c.strategicPatch(ctx, k, obj, data, wo, sub)
	case types.ApplyPatchType:
		out, err := c.applyData(ctx, k, obj.GetNamespace(), obj.GetName(), data, ao, sub)
		if err != nil {
			return err
		}
		return c.fromWrite(k, out, obj)
	case types.ApplyCBORPatchType:
		return toAPIError(resource.NewUnsupportedMediaType(string(patch.Type()) +
			" (apply configurations in CBOR are not supported; controller-runtime sends JSON)"))
	}
	return toAPIError(resource.NewUnsupportedMediaType(string(patch.Type())))
}

// strategicPatch applies a strategic merge patch as kube-apiserver does: to the
// object read now, with the patch type's merge keys taken from the Go type of the
// kind; a patch that names no resourceVersion is tried again after a concurrent
// write. Only kinds with a Go type in the scheme take one (415 otherwise, as for
// custom resources).
func (c *Client) strategicPatch(ctx context.Context, k *kind, obj client.Object, data []byte, wo store.WriteOptions, sub string) error {
	typed, err := c.scheme.New(k.gvk)
	if err != nil || !builtinGroup(k.gvk.Group) {
		return toAPIError(resource.NewUnsupportedMediaType(string(types.StrategicMergePatchType) +
			" (strategic merge patch is only for built-in kinds)"))
	}
	schemaMeta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return toAPIError(resource.NewBadRequest(err.Error()))
	}
	for range 16 {
		cur := k.info.New()
		if err := c.store.Get(ctx, obj.GetNamespace(), obj.GetName(), cur, store.GetOptions{}); err != nil {
			return toAPIError(err)
		}
		rv := cur.GetObjectMeta().ResourceVersion
		doc, err := json.Marshal(cur)
		if err != nil {
			return toAPIError(resource.NewInternalError(err))
		}
		patched, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(doc, data, schemaMeta)
		if err != nil {
			return toAPIError(resource.NewInvalid(k.info, obj.GetName(), resource.ErrorList{
				resource.Invalid(resource.NewPath("patch"), "", err.Error())}))
		}
		next := k.info.New()
		if err := json.Unmarshal(patched, next); err != nil {
			return toAPIError(resource.NewBadRequest(fmt.Sprintf("the patched %s does not decode: %v", k.gvk.Kind, err)))
		}
		nm := next.GetObjectMeta()
		if nm.Name != obj.GetName() || (k.info.Namespaced && nm.Namespace != cur.GetObjectMeta().Namespace) {
			return toAPIError(resource.NewBadRequest("a patch cannot change the name or namespace"))
		}
		fromPatch := nm.ResourceVersion != rv
		if nm.ResourceVersion == "" {
			nm.ResourceVersion, fromPatch = rv, false
		}
		uo := store.UpdateOptions{WriteOptions: wo}
		if sub == "status" {
			err = c.store.UpdateStatus(ctx, next, uo)
		} else {
			err = c.store.Update(ctx, next, uo)
		}
		if err == nil {
			return c.fromWrite(k, next, obj)
		}
		if fromPatch || !apierrors.IsConflict(toAPIError(err)) {
			return toAPIError(err)
		}
	}
	return toAPIError(resource.NewConflict(k.info, obj.GetName(), resource.OptimisticLockMessage))
}

func deleteOpts(o *metav1.DeleteOptions) store.DeleteOptions {
	d := store.DeleteOptions{WriteOptions: writeOpts(o.DryRun, ""), GracePeriodSeconds: o.GracePeriodSeconds}
	if o.PropagationPolicy != nil {
		d.PropagationPolicy = string(*o.PropagationPolicy)
	} else if o.OrphanDependents != nil && *o.OrphanDependents { //nolint:staticcheck // still honoured by kube-apiserver
		d.PropagationPolicy = store.DeletePropagationOrphan
	}
	if p := o.Preconditions; p != nil {
		if p.UID != nil {
			uid := string(*p.UID)
			d.Preconditions.UID = &uid
		}
		d.Preconditions.ResourceVersion = p.ResourceVersion
	}
	return d
}

// Delete deletes obj, or starts its graceful deletion when it has finalizers.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	o := (&client.DeleteOptions{}).ApplyOptions(opts).AsDeleteOptions()
	target := k.info.New()
	m := target.GetObjectMeta()
	m.Name, m.Namespace = obj.GetName(), obj.GetNamespace()
	_, err = c.store.Delete(ctx, target, deleteOpts(o))
	return toAPIError(err)
}

// DeleteAllOf deletes every object of obj's kind that the options select.
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	k, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	o := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	lo, indexed, err := c.listOpts(k, &o.ListOptions)
	if err != nil {
		return err
	}
	do := deleteOpts(o.DeleteOptions.AsDeleteOptions())
	if len(indexed) == 0 {
		_, err = c.store.DeleteCollection(ctx, k.info.NewList(), lo, do)
		return toAPIError(err)
	}
	list := k.info.NewList()
	if err := c.store.List(ctx, list, lo); err != nil {
		return toAPIError(err)
	}
	for i := 0; i < list.Len(); i++ {
		it := list.Item(i)
		ok, err := c.matchIndexed(k, it, indexed)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		target := k.info.New()
		m := target.GetObjectMeta()
		m.Name, m.Namespace = it.GetObjectMeta().Name, it.GetObjectMeta().Namespace
		if _, err := c.store.Delete(ctx, target, do); err != nil && !apierrors.IsNotFound(toAPIError(err)) {
			return toAPIError(err)
		}
	}
	return nil
}

// indexedReq is one requirement of a field selector on a registered index.
type indexedReq struct {
	field, value string
	not          bool
	index        client.IndexerFunc
}

// listOpts turns controller-runtime list options into the store's, splitting off
// the field selector requirements on registered indexes (the store knows only
// metadata.name and metadata.namespace).
func (c *Client) listOpts(k *kind, o *client.ListOptions) (store.ListOptions, []indexedReq, error) {
	raw := o.AsListOptions()
	lo := store.ListOptions{Namespace: o.Namespace, LabelSelector: raw.LabelSelector, Limit: raw.Limit,
		Continue: raw.Continue, ResourceVersion: raw.ResourceVersion,
		ResourceVersionMatch: string(raw.ResourceVersionMatch)}
	if !k.info.Namespaced {
		lo.Namespace = ""
	}
	if raw.FieldSelector == "" {
		return lo, nil, nil
	}
	sel, err := fields.ParseSelector(raw.FieldSelector)
	if err != nil {
		return lo, nil, toAPIError(resource.NewBadRequest(err.Error()))
	}
	var plain fields.Selector = fields.Everything()
	var indexed []indexedReq
	for _, r := range sel.Requirements() {
		switch r.Field {
		case "metadata.name", "metadata.namespace":
			plain = fields.AndSelectors(plain, requirementSelector(r))
			continue
		}
		idx := c.indexes[k.gvk][r.Field]
		if idx == nil {
			return lo, nil, toAPIError(resource.NewBadRequest(fmt.Sprintf(
				"field label not supported: %s (register an index for it with WithIndex)", r.Field)))
		}
		indexed = append(indexed, indexedReq{field: r.Field, value: r.Value, not: r.Operator == "!=", index: idx})
	}
	lo.FieldSelector = plain.String()
	if len(indexed) > 0 {
		// Filtering happens after the store's list: pages would come back short.
		lo.Limit, lo.Continue = 0, ""
	}
	return lo, indexed, nil
}

func requirementSelector(r fields.Requirement) fields.Selector {
	if r.Operator == "!=" {
		return fields.OneTermNotEqualSelector(r.Field, r.Value)
	}
	return fields.OneTermEqualSelector(r.Field, r.Value)
}

// matchIndexed reports whether the store object it matches every indexed
// requirement, computing the index values on it in the user's type.
func (c *Client) matchIndexed(k *kind, it resource.Object, reqs []indexedReq) (bool, error) {
	typed, err := c.scheme.New(k.gvk)
	if err != nil {
		u, uerr := c.newObject(k, unstructuredLike)
		if uerr != nil {
			return false, err
		}
		typed = u
	}
	data, err := json.Marshal(it)
	if err != nil {
		return false, err
	}
	if err := decodeInto(data, typed, true, k.gvk); err != nil {
		return false, err
	}
	co, ok := typed.(client.Object)
	if !ok {
		return false, fmt.Errorf("crclient: %T is not a client.Object", typed)
	}
	for _, r := range reqs {
		found := false
		for _, v := range r.index(co) {
			if v == r.value {
				found = true
				break
			}
		}
		if found == r.not {
			return false, nil
		}
	}
	return true, nil
}

// List lists the objects of list's item kind that opts select into list.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, err := c.kindOfList(list)
	if err != nil {
		return err
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	lo, indexed, err := c.listOpts(k, o)
	if err != nil {
		return err
	}
	src := k.info.NewList()
	if err := c.store.List(ctx, src, lo); err != nil {
		return toAPIError(err)
	}
	if len(indexed) > 0 {
		var keep []resource.Object
		for i := 0; i < src.Len(); i++ {
			ok, err := c.matchIndexed(k, src.Item(i), indexed)
			if err != nil {
				return err
			}
			if ok {
				keep = append(keep, src.Item(i))
			}
		}
		if err := src.SetItems(keep); err != nil {
			return err
		}
	}
	return c.fromStoreList(k, src, list)
}

// Status returns the writer of the status subresource.
func (c *Client) Status() client.SubResourceWriter { return &subResource{c: c, name: "status"} }

// SubResource returns the client of the named subresource. Only "status" exists in
// the store; the others answer 404 NotFound, as kube-apiserver does for a
// subresource a kind does not have.
func (c *Client) SubResource(name string) client.SubResourceClient {
	return &subResource{c: c, name: name}
}

type subResource struct {
	c    *Client
	name string
}

func (s *subResource) notFound(obj client.Object) error {
	k, err := s.c.kindOf(obj)
	if err != nil {
		return err
	}
	return toAPIError(resource.NewNotFound(k.info, obj.GetName()+"/"+s.name))
}

// Get reads the subresource: for "status", the object with its status.
func (s *subResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	if s.name != "status" {
		return s.notFound(obj)
	}
	k, err := s.c.kindOf(obj)
	if err != nil {
		return err
	}
	if !k.info.HasStatus {
		return s.notFound(obj)
	}
	o := (&client.SubResourceGetOptions{}).ApplyOptions(opts)
	var go_ []client.GetOption
	if o.Raw != nil {
		go_ = append(go_, &client.GetOptions{Raw: o.Raw})
	}
	return s.c.Get(ctx, client.ObjectKeyFromObject(obj), sub, go_...)
}

// Create is refused: the store has no subresource that takes a create.
func (s *subResource) Create(_ context.Context, obj, _ client.Object, _ ...client.SubResourceCreateOption) error {
	k, err := s.c.kindOf(obj)
	if err != nil {
		return err
	}
	if s.name == "status" && k.info.HasStatus {
		return toAPIError(resource.NewMethodNotAllowed(k.info, "create"))
	}
	return s.notFound(obj)
}

// Update writes the status of obj (everything else is kept).
func (s *subResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if s.name != "status" {
		return s.notFound(obj)
	}
	o := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	body := obj
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	if err := s.c.update(ctx, body, writeOpts(o.DryRun, o.FieldManager), true); err != nil {
		return err
	}
	if body != obj {
		return s.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	return nil
}

// Patch patches the status of obj.
func (s *subResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if s.name != "status" {
		return s.notFound(obj)
	}
	o := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	body := obj
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	return s.c.patch(ctx, body, patch, applyOpts{dryRun: o.DryRun, manager: o.FieldManager, force: o.Force}, "status")
}

// Apply is server-side apply of the status subresource (see [Client.Apply]): only
// the status of the configuration is applied. The object must exist (404
// otherwise, as kube-apiserver answers).
func (s *subResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	o := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
	body := obj
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	ao := applyOpts{dryRun: o.DryRun, manager: o.FieldManager, force: o.Force}
	if s.name != "status" {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return err
		}
		return s.notFound(u)
	}
	return s.c.applyConfiguration(ctx, obj, body, ao, "status")
}

// Watch watches the objects of list's item kind that opts select. With no
// resourceVersion it starts with an ADDED event per existing object, as
// kube-apiserver does.
func (c *Client) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	k, err := c.kindOfList(list)
	if err != nil {
		return nil, err
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	raw := o.AsListOptions()
	lo, indexed, err := c.listOpts(k, o)
	if err != nil {
		return nil, err
	}
	wo := store.WatchOptions{Namespace: lo.Namespace, LabelSelector: lo.LabelSelector, FieldSelector: lo.FieldSelector,
		ResourceVersion: raw.ResourceVersion, AllowBookmarks: raw.AllowWatchBookmarks}
	if raw.SendInitialEvents != nil {
		wo.SendInitialEvents = *raw.SendInitialEvents
	}
	w, err := c.store.Watch(ctx, k.info.New(), wo)
	if err != nil {
		return nil, toAPIError(err)
	}
	return newWatcher(c, k, list, w, indexed), nil
}
