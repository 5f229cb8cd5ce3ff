package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/management-service/mgmt/resource"
)

// PatchTypeApply is the media type of a server-side apply configuration
// ([Store.Apply]); the configuration itself is JSON (YAML is converted by the
// caller).
const PatchTypeApply = "application/apply-patch+yaml"

// ApplyOptions are the options of a server-side apply. WriteOptions.FieldManager is
// required.
type ApplyOptions struct {
	WriteOptions
	// Force takes the fields that conflict from the managers that own them, instead
	// of failing with 409.
	Force bool
	// Subresource is "status" to apply to the status subresource (only the status
	// of the result is written), "" for the main resource.
	Subresource string
}

// applyState carries what Apply computed through the write pipeline, which then
// stores these entries instead of tracking the write itself.
type applyState struct {
	entries []resource.ManagedFieldsEntry
}

// patchOptionsKind names the options in an Invalid error, as Kubernetes does.
var patchOptionsKind = &resource.KindInfo{Group: "meta.k8s.io", Kind: "PatchOptions"}

// Apply merges config, a server-side apply configuration in JSON (a partial
// object: apiVersion, kind, metadata.name and the fields the manager has an opinion
// about), into the object that obj names (its kind, namespace and name), with
// Kubernetes' server-side apply rules, and fills obj with the result:
//
//   - the manager (opts.FieldManager, required: 422 otherwise) owns exactly the
//     fields of its configuration; a field it applied before and no longer does is
//     removed, unless another manager owns it too;
//   - a field whose value the configuration changes and another manager owns is a
//     conflict: 409 Conflict with one FieldManagerConflict cause per field (e.g.
//     .spec.displayName) naming its owner, unless opts.Force, which takes it over;
//     applying the value a field already has shares it instead;
//   - lists merge by their FieldType (Options.FieldTypes): atomic lists are
//     replaced whole, sets by value, map lists by key; objects field by field;
//   - a missing object is created (with opts.Subresource "status": 404); an object
//     that has no managedFields yet is first given to the manager
//     "before-first-apply";
//   - a configuration that changes nothing writes nothing: the resourceVersion
//     stays.
//
// The result is written as [Store.Update] (or [Store.UpdateStatus], or
// [Store.Create]) writes it, every rule of those applies; a
// metadata.resourceVersion in the configuration is a precondition. The manager's
// entry has operation Apply.
//
// created says the apply created the object (kube-apiserver answers it with 201).
//
// Errors: 400 for a configuration that is not a JSON object, names another
// apiVersion, kind, name or namespace, carries metadata.managedFields, or has
// fields the kind does not know; 422 for a missing or invalid field manager.
func (s *Store) Apply(ctx context.Context, obj resource.Object, config []byte, opts ApplyOptions) (created bool, err error) {
	k, err := s.kindOf(obj)
	if err != nil {
		return false, err
	}
	namespace := normalizeNamespace(k, obj.GetObjectMeta().Namespace)
	name := obj.GetObjectMeta().Name
	if opts.FieldManager == "" {
		return false, resource.NewInvalid(patchOptionsKind, "", resource.ErrorList{
			resource.Required(resource.NewPath("fieldManager"), "is required for apply patch")})
	}
	if err := checkFieldManager(patchOptionsKind, "", opts.FieldManager); err != nil {
		return false, err
	}
	switch {
	case opts.Subresource == "":
	case opts.Subresource == "status" && k.HasStatus:
	case opts.Subresource == "status":
		return false, resource.NewNotFound(k, name+"/status")
	default:
		return false, resource.NewBadRequest(fmt.Sprintf("%s has no subresource %q to apply to", k.Kind, opts.Subresource))
	}
	if err := checkKeyNames(k, namespace, name); err != nil {
		return false, err
	}
	cfg, err := applyConfig(k, namespace, name, config)
	if err != nil {
		return false, err
	}
	_, err = s.runTxn(ctx, opts.DryRun, func(tx *Tx) error {
		next, create, err := tx.merge(k, namespace, name, cfg, opts)
		if err != nil {
			return err
		}
		wo := opts.WriteOptions
		wo.apply = next.state
		switch {
		case create:
			err = tx.Create(next.obj, CreateOptions{WriteOptions: wo})
		case opts.Subresource == "status":
			err = tx.UpdateStatus(next.obj, UpdateOptions{WriteOptions: wo})
		default:
			err = tx.Update(next.obj, UpdateOptions{WriteOptions: wo})
		}
		if err != nil {
			return err
		}
		tx.onCommit(func(int64) error { moveInto(obj, next.obj); created = create; return nil })
		return nil
	})
	return created && err == nil, err
}

// applyConfig checks an apply configuration and returns it decoded, with
// apiVersion, kind, metadata.name and metadata.namespace filled in.
func applyConfig(k *resource.KindInfo, namespace, name string, config []byte) (map[string]any, error) {
	v, err := decodeValue(config)
	if err != nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("the apply configuration is not valid JSON: %v", err)).WithCause(err)
	}
	cfg, ok := v.(map[string]any)
	if !ok {
		return nil, resource.NewBadRequest("the apply configuration must be a JSON object")
	}
	if av, ok := cfg["apiVersion"]; ok && av != k.APIVersion() {
		return nil, resource.NewBadRequest(fmt.Sprintf(
			"Incorrect version specified in apply patch. Specified patch version: %v, expected: %s", av, k.APIVersion()))
	}
	if kd, ok := cfg["kind"]; ok && kd != k.Kind {
		return nil, resource.NewBadRequest(fmt.Sprintf("the apply configuration is a %v, not a %s", kd, k.Kind))
	}
	cfg["apiVersion"], cfg["kind"] = k.APIVersion(), k.Kind
	meta, _ := cfg["metadata"].(map[string]any)
	if meta == nil {
		if m, ok := cfg["metadata"]; ok && m != nil {
			return nil, resource.NewBadRequest("metadata of the apply configuration must be an object")
		}
		meta = map[string]any{}
		cfg["metadata"] = meta
	}
	if _, ok := meta["managedFields"]; ok {
		return nil, resource.NewBadRequest("metadata.managedFields must be nil")
	}
	if n, ok := meta["name"]; ok && n != name {
		return nil, resource.NewBadRequest(fmt.Sprintf(
			"the name of the object (%v) does not match the name on the URL (%s)", n, name))
	}
	meta["name"] = name
	if ns, ok := meta["namespace"]; ok && k.Namespaced && normalizeNamespace(k, fmt.Sprint(ns)) != namespace {
		return nil, resource.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if k.Namespaced {
		meta["namespace"] = namespace
	} else {
		delete(meta, "namespace")
	}
	// The configuration must be an object of the kind: no unknown fields.
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, resource.NewBadRequest(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(k.New()); err != nil {
		return nil, resource.NewBadRequest(fmt.Sprintf("the apply configuration is not a valid %s: %v", k.Kind, err)).WithCause(err)
	}
	return cfg, nil
}

// merged is the object an apply writes, and the managedFields it computed.
type merged struct {
	obj   resource.Object
	state *applyState
}

// merge reads the object, merges the configuration into it and computes the
// managedFields; create says the object does not exist.
func (tx *Tx) merge(k *resource.KindInfo, namespace, name string, cfg map[string]any, opts ApplyOptions) (merged, bool, error) {
	s := tx.s
	cur, liveData, create, err := tx.readLive(k, namespace, name, cfg, opts)
	if err != nil {
		return merged{}, false, err
	}
	kt, err := s.types.get(k, s.opts.FieldTypes)
	if err != nil {
		return merged{}, false, resource.NewInternalError(err)
	}
	liveTV, err := typedOf(kt, liveData, typed.AllowDuplicates)
	if err != nil {
		return merged{}, false, resource.NewInternalError(fmt.Errorf("store: apply: the stored %s: %w", k.Kind, err))
	}
	configTV, err := kt.pt.FromUnstructured(cfg)
	if err != nil {
		return merged{}, false, resource.NewInvalid(k, name, resource.ErrorList{
			resource.Invalid(resource.NewPath("patch"), nil, err.Error())}).WithCause(err)
	}
	m, err := decodeManagers(cur.GetObjectMeta().ManagedFields)
	if err != nil {
		return merged{}, false, resource.NewInternalError(fmt.Errorf("store: apply: managedFields: %w", err))
	}
	a := applier{kt: kt, k: k, name: name, m: m, live: liveTV, config: configTV, create: create, opts: opts, now: s.clock.Now(),
		annotations: cur.GetObjectMeta().Annotations}
	newTV, err := a.apply()
	if err != nil {
		return merged{}, false, err
	}
	out, err := m.encode()
	if err != nil {
		return merged{}, false, resource.NewInternalError(err)
	}
	next, err := resultOf(k, cur, newTV, cfg, opts, create)
	if err != nil {
		return merged{}, false, err
	}
	return merged{obj: next, state: &applyState{entries: out}}, create, nil
}

// readLive reads the object an apply merges into: cur (empty when it does not
// exist, then create is set) and its encoding (nil then).
func (tx *Tx) readLive(k *resource.KindInfo, namespace, name string, cfg map[string]any, opts ApplyOptions) (
	cur resource.Object, liveData []byte, create bool, err error) {
	cur = k.New()
	err = tx.Get(namespace, name, cur)
	switch {
	case errors.Is(err, resource.ErrNotFound) && opts.Subresource != "":
		return nil, nil, false, err
	case errors.Is(err, resource.ErrNotFound):
		// As kube-apiserver: a uid names an object that must exist.
		if uid, _ := cfg["metadata"].(map[string]any)["uid"].(string); uid != "" {
			return nil, nil, false, resource.NewConflict(k, name, fmt.Sprintf(
				"uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		return k.New(), nil, true, nil
	case err != nil:
		return nil, nil, false, err
	}
	if liveData, err = json.Marshal(cur); err != nil {
		return nil, nil, false, resource.NewInternalError(err)
	}
	return cur, liveData, false, nil
}

// applier runs structured-merge-diff's apply of one configuration, with the rules
// kube-apiserver's field manager adds around it.
type applier struct {
	kt           *kindType
	k            *resource.KindInfo
	name         string
	m            *managers
	live, config *typed.TypedValue
	create       bool
	opts         ApplyOptions
	now          time.Time
	annotations  map[string]string // the live object's
}

// apply merges the configuration into the live object and updates a.m; the result
// is nil when the object does not change. Fields set before anyone applied go to
// before-first-apply first; kubectl takes over from its client-side apply; the
// applier's time is set when the object or its fields change.
func (a *applier) apply() (*typed.TypedValue, error) {
	version := a.k.APIVersion()
	f := scopeFilterOf(a.k, a.opts.Subresource)
	if !a.create && len(a.m.sets) == 0 {
		empty, _ := typedOf(a.kt, nil)
		if err := a.m.update(f, empty, a.live, managerKey{manager: BeforeFirstApplyManager,
			operation: resource.ManagedFieldsOperationUpdate, apiVersion: version, subresource: a.opts.Subresource}, a.now); err != nil {
			return nil, resource.NewInternalError(err)
		}
	}
	id := a.m.add(managerKey{manager: a.opts.FieldManager, operation: resource.ManagedFieldsOperationApply, subresource: a.opts.Subresource})
	var before *fieldpath.Set
	if vs, ok := a.m.sets[id]; ok {
		before = vs.Set()
	}
	run := func(force bool) (*typed.TypedValue, fieldpath.ManagedFields, error) {
		return updaterFor(f, a.m, version).Apply(a.live, a.config, fieldpath.APIVersion(version), a.m.sets, id, force)
	}
	newTV, sets, err := run(a.opts.Force)
	var cs merge.Conflicts
	if errors.As(err, &cs) && a.opts.FieldManager == kubectlManager && !a.create {
		if rest, ok := allowedByLastApplied(a.kt, a.k, a.live, a.annotations, cs); ok && len(rest) == 0 {
			newTV, sets, err = run(true)
		} else if ok {
			err = rest
		}
	}
	if err != nil {
		if errors.As(err, &cs) {
			return nil, conflictError(cs, a.m)
		}
		return nil, resource.NewInvalid(a.k, a.name, resource.ErrorList{
			resource.Invalid(resource.NewPath("patch"), nil, err.Error())}).WithCause(err)
	}
	a.m.sets = sets
	after, owns := a.m.sets[id]
	if newTV != nil || !owns || before == nil || !before.Equals(after.Set()) {
		t := resource.NewTime(a.now)
		a.m.times[id] = &t
	}
	return newTV, nil
}

// resultOf returns the object an apply writes: cur when nothing changed, else the
// merged value decoded; kubectl's last-applied annotation follows the configuration.
func resultOf(k *resource.KindInfo, cur resource.Object, newTV *typed.TypedValue, cfg map[string]any,
	opts ApplyOptions, create bool) (resource.Object, error) {
	next := cur
	if newTV != nil {
		raw, err := json.Marshal(newTV.AsValue().Unstructured())
		if err != nil {
			return nil, resource.NewInternalError(err)
		}
		next = k.New()
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(next); err != nil {
			return nil, resource.NewBadRequest(fmt.Sprintf("the applied %s does not decode: %v", k.Kind, err)).WithCause(err)
		}
		if !create && next.GetObjectMeta().ResourceVersion == "" {
			next.GetObjectMeta().ResourceVersion = cur.GetObjectMeta().ResourceVersion
		}
	}
	next.GetObjectMeta().ManagedFields = nil
	if opts.FieldManager == kubectlManager {
		if err := syncLastApplied(next, cfg); err != nil {
			return nil, resource.NewInternalError(err)
		}
	}
	return next, nil
}

// conflictError is the 409 of an apply that conflicts with other managers: one
// FieldManagerConflict cause per field, as kube-apiserver words them.
func conflictError(cs merge.Conflicts, m *managers) *resource.StatusError {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Manager != cs[j].Manager {
			return cs[i].Manager < cs[j].Manager
		}
		return cs[i].Path.String() < cs[j].Path.String()
	})
	causes := make([]resource.StatusCause, 0, len(cs))
	byManager := map[string][]string{}
	var owners []string
	for _, c := range cs {
		who := describeManager(m.keys[c.Manager])
		causes = append(causes, resource.StatusCause{Type: resource.CauseFieldManagerConflict,
			Message: "conflict with " + who, Field: c.Path.String()})
		if _, ok := byManager[who]; !ok {
			owners = append(owners, who)
		}
		byManager[who] = append(byManager[who], c.Path.String())
	}
	var msg string
	if len(cs) == 1 {
		msg = fmt.Sprintf("Apply failed with 1 conflict: %s", causes[0].Message+": "+causes[0].Field)
	} else {
		sort.Strings(owners)
		var lines []string
		for _, o := range owners {
			lines = append(lines, "conflicts with "+o+":")
			for _, p := range byManager[o] {
				lines = append(lines, "- "+p)
			}
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(cs), strings.Join(lines, "\n"))
	}
	e := resource.NewStatusError(resource.ReasonConflict, msg)
	e.ErrStatus.Details = &resource.StatusDetails{Causes: causes}
	return e
}

// describeManager names a manager as kube-apiserver's conflict messages do.
func describeManager(k managerKey) string {
	s := fmt.Sprintf("%q", k.manager)
	if k.subresource != "" {
		s += fmt.Sprintf(" with subresource %q", k.subresource)
	}
	if k.operation == resource.ManagedFieldsOperationUpdate {
		s += " using " + k.apiVersion
	}
	return s
}
