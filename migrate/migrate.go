package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// AnnotationMigratedFromUID is written on a moved VirtualClusterInstance, next to
// [resource.AnnotationMigratedFrom] ("<namespace>/<name>" of the source): the uid the
// instance had before its last move (the move gives it a new one).
const AnnotationMigratedFromUID = "management.service/migrated-from-uid"

// DefaultFieldManager is the field manager of the service's writes when neither
// [Options].FieldManager nor [RequestOptions].FieldManager names one.
const DefaultFieldManager = "migrate"

// DefaultGenerateName is the generateName a request gets when it has neither a name
// nor a generateName: the request is still recorded, under a fresh name.
const DefaultGenerateName = "migrate-"

// Options configure a [Service]. The zero value gives the defaults.
type Options struct {
	// NamespacePrefix is the prefix of a project's namespace: project "a" lives in
	// NamespacePrefix+"a". Empty means [resource.DefaultProjectNamespacePrefix] ("p-").
	NamespacePrefix string
	// FieldManager names the service in the managedFields of what it writes; empty
	// means [DefaultFieldManager]. A request's own [RequestOptions].FieldManager wins.
	FieldManager string
	// Logger receives one line per completed move (and nothing else); nil discards.
	Logger *slog.Logger
}

// Service moves VirtualClusterInstances between projects. Build it with [New]; it is
// safe for concurrent use.
type Service struct {
	s       *store.Store
	prefix  string
	manager string
	log     *slog.Logger

	kindMigrate  *resource.KindInfo
	kindInstance *resource.KindInfo
	kindProject  *resource.KindInfo
}

// New returns a service that moves instances in s. It fails when s is nil, when the
// namespace prefix cannot start a namespace name, or when s's scheme lacks one of the
// kinds Project, VirtualClusterInstance and ProjectMigrateVirtualClusterInstance.
func New(s *store.Store, opts Options) (*Service, error) {
	if s == nil {
		return nil, errors.New("migrate: store is nil")
	}
	svc := &Service{s: s, prefix: opts.NamespacePrefix, manager: opts.FieldManager, log: opts.Logger}
	if svc.prefix == "" {
		svc.prefix = resource.DefaultProjectNamespacePrefix
	}
	// The prefix followed by a one-letter project must be a namespace name.
	if errs := resource.ValidateNamespaceName(svc.prefix+"a", resource.NewPath("namespacePrefix")); len(errs) > 0 {
		return nil, fmt.Errorf("migrate: namespace prefix %q cannot start a namespace name: %v", svc.prefix, errs.ToAggregate())
	}
	if svc.manager == "" {
		svc.manager = DefaultFieldManager
	}
	if svc.log == nil {
		svc.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, want := range []struct {
		kind string
		into **resource.KindInfo
	}{
		{resource.KindProjectMigrateVirtualClusterInstance, &svc.kindMigrate},
		{resource.KindVirtualClusterInstance, &svc.kindInstance},
		{resource.KindProject, &svc.kindProject},
	} {
		k, ok := s.Scheme().KindFor(resource.GroupVersion, want.kind)
		if !ok {
			return nil, fmt.Errorf("migrate: the store's scheme has no kind %s", want.kind)
		}
		*want.into = k
	}
	return svc, nil
}

// NamespacePrefix returns the prefix of project namespaces the service uses.
func (svc *Service) NamespacePrefix() string { return svc.prefix }

// ProjectNamespace returns the namespace of project: the prefix plus its name.
func (svc *Service) ProjectNamespace(project string) string { return svc.prefix + project }

// projectOf returns the project whose namespace ns is, or "" when ns is not a
// project namespace.
func (svc *Service) projectOf(ns string) string {
	if len(ns) > len(svc.prefix) && strings.HasPrefix(ns, svc.prefix) {
		return ns[len(svc.prefix):]
	}
	return ""
}

// Authorizer decides whether the caller may make one request, described as the
// policy engine describes requests. reason explains a denial (it goes into the
// message of the 403) and may be empty when the request is allowed.
type Authorizer interface {
	Allowed(ctx context.Context, req policy.Request) (allowed bool, reason string)
}

// AuthorizerFunc adapts a function to [Authorizer].
type AuthorizerFunc func(ctx context.Context, req policy.Request) (bool, string)

// Allowed calls f.
func (f AuthorizerFunc) Allowed(ctx context.Context, req policy.Request) (bool, string) {
	return f(ctx, req)
}

// scopeAuthorizer evaluates requests against a compiled access key scope.
type scopeAuthorizer struct{ c *policy.Compiled }

func (a scopeAuthorizer) Allowed(_ context.Context, req policy.Request) (bool, string) {
	if d := a.c.Evaluate(req); d.Allowed {
		return true, d.Reason
	}
	return false, a.c.Explain(req).Reason
}

// ScopeAuthorizer returns the [Authorizer] of an access key's scope: a request is
// allowed when the policy engine says the scope allows it. A nil scope is no
// restriction (the admin key): every well-formed request is allowed. An invalid
// scope is an error (the policy engine's validation errors), since it allows
// nothing. The decision stands for the scope only; a host with a role model
// combines it with the subject's own rights in an Authorizer of its own.
func ScopeAuthorizer(scope *resource.AccessKeyScope) (Authorizer, error) {
	c, err := policy.Compile(scope)
	if err != nil {
		return nil, fmt.Errorf("migrate: invalid scope: %w", err)
	}
	return scopeAuthorizer{c: c}, nil
}

// Caller is who asks for a move, and what they may do.
type Caller struct {
	// User is passed to the store's writes (admission hooks, the OwnerAuthorizer).
	User *store.UserInfo
	// Authorizer decides the caller's rights. Nil allows nothing: every move is
	// refused with 403 (use ScopeAuthorizer(nil) for an unrestricted caller).
	Authorizer Authorizer
}

// RequestOptions are the options of one [Service.Migrate] call.
type RequestOptions struct {
	// DryRun runs every check, and the writes, and stores nothing.
	DryRun bool
	// FieldManager names the caller in managedFields; empty means the service's.
	FieldManager string
}

// Migrate moves the VirtualClusterInstance that req names into targetProject, in one
// store transaction, and returns req with the record's metadata and a status naming
// the moved instance (namespace, name, new uid). req itself is not modified.
//
// The checks, in order, each a Status error with nothing changed (a refusal, like a
// move, stands on one consistent state of the store: when a concurrent write
// changed what the checks read, they run again):
//
//  1. 422 Invalid: kind or apiVersion set to something else than
//     ProjectMigrateVirtualClusterInstance and management.service/v1; a missing or
//     malformed sourceVirtualClusterInstance.name (DNS subdomain) or .namespace (DNS
//     label); malformed metadata (name, generateName, labels, ...) or a
//     resourceVersion set. Causes carry the field paths.
//  2. 404 NotFound: the target project does not exist (422 when it does but its
//     namespace would not be a valid namespace name).
//  3. 404 NotFound: the source instance does not exist.
//  4. 409 Conflict: the source instance is being deleted.
//  5. 409 Conflict: the source instance is already in the target project's namespace.
//  6. 409 AlreadyExists: an instance of that name exists in the target namespace.
//  7. 403 Forbidden: the caller may not create virtualclusterinstances in the target
//     namespace, or may not delete the source instance.
//  8. 422 Invalid: the target project's allowedClusters do not allow the instance's
//     spec.clusterRef.cluster (an empty list, or an entry "*", allows every cluster;
//     an instance with no cluster passes).
//
// A request with metadata.name is idempotent: the request is recorded, in the same
// transaction as the move, as a ProjectMigrateVirtualClusterInstance of that name,
// and a request whose name is recorded returns the recorded result without moving
// anything, whatever has happened to the instance since, once the caller passes the
// authorization check (step 7, evaluated on the recorded source and target): checks
// 2 to 6 and 8 do not apply to a replay. A recorded name with another source or
// target is 409 AlreadyExists. A request with generateName (or with neither name
// nor generateName, which gets [DefaultGenerateName]) is recorded under a fresh name
// each time. With DryRun every check runs, a recorded name is answered as above,
// and nothing is stored; the uid in the status of a dry run is not kept anywhere.
func (svc *Service) Migrate(ctx context.Context, targetProject string, req *resource.ProjectMigrateVirtualClusterInstance,
	caller Caller, opts RequestOptions) (*resource.ProjectMigrateVirtualClusterInstance, error) {
	if req == nil {
		return nil, resource.NewBadRequest("migrate: the request is nil")
	}
	in, err := resource.DeepCopy(req)
	if err != nil {
		return nil, resource.NewBadRequest(err.Error()).WithCause(err)
	}
	if err := svc.validate(in); err != nil {
		return nil, err
	}
	manager := opts.FieldManager
	if manager == "" {
		manager = svc.manager
	}
	wopts := store.WriteOptions{DryRun: opts.DryRun, FieldManager: manager, User: caller.User}

	// One transaction decides and, for a move, writes. A refusal (the function's
	// error) aborts it, and a replay or a dry run commits no write; in each case the
	// store checks that everything the function read was still current, and runs it
	// again otherwise (store.Txn). So every answer stands on one consistent state of
	// the store, never on reads from before and after a concurrent move (say, no
	// record yet and the source already gone).
	var oc outcome
	err = svc.s.Txn(ctx, store.TxnOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		oc = outcome{}
		return svc.decide(ctx, tx, targetProject, in, caller, wopts, &oc)
	})
	if err != nil {
		return nil, err
	}
	if oc.replay != nil {
		out := oc.replay
		out.Kind, out.APIVersion = resource.KindProjectMigrateVirtualClusterInstance, resource.GroupVersion
		return out, nil
	}
	// The record is filled with the committed result; a copy through JSON makes it
	// exactly what a later read of the record (a replay) returns.
	out, err := resource.DeepCopy(oc.record)
	if err != nil {
		return nil, resource.NewInternalError(err)
	}
	out.Kind, out.APIVersion = resource.KindProjectMigrateVirtualClusterInstance, resource.GroupVersion
	if !opts.DryRun {
		svc.log.Info("migrated virtual cluster instance",
			"migration", out.Name,
			"from", in.SourceVirtualClusterInstance.Namespace+"/"+in.SourceVirtualClusterInstance.Name,
			"to", out.Status.Namespace+"/"+out.Status.Name,
			"uid", out.Status.UID, "resourceVersion", out.ResourceVersion)
	}
	return out, nil
}

// outcome is what the transaction of [Service.Migrate] decided: a replay of a
// recorded request, or a move (the record, filled in when it commits).
type outcome struct {
	replay *resource.ProjectMigrateVirtualClusterInstance
	record *resource.ProjectMigrateVirtualClusterInstance
}

// decide runs the record lookup, the checks and the writes in tx. A refusal is its
// Status error.
func (svc *Service) decide(ctx context.Context, tx *store.Tx, targetProject string,
	in *resource.ProjectMigrateVirtualClusterInstance, caller Caller, wopts store.WriteOptions, oc *outcome) error {
	if in.Name != "" {
		prev := &resource.ProjectMigrateVirtualClusterInstance{}
		err := tx.Get("", in.Name, prev)
		switch {
		case err == nil:
			if err := svc.checkReplay(ctx, targetProject, in, prev, caller); err != nil {
				return err
			}
			oc.replay = prev
			return nil
		case !errors.Is(err, resource.ErrNotFound):
			return err
		}
	}
	p, err := svc.check(ctx, tx, targetProject, in, caller)
	if err != nil {
		return err
	}
	oc.record, err = svc.write(tx, p, in, wopts)
	return err
}

// validate is check 1: the body. It fills the defaults it needs (kind, apiVersion,
// generateName) into in, a copy of the request.
func (svc *Service) validate(in *resource.ProjectMigrateVirtualClusterInstance) error {
	var errs resource.ErrorList
	if in.Kind != "" && in.Kind != resource.KindProjectMigrateVirtualClusterInstance {
		errs = append(errs, resource.NotSupported(resource.NewPath("kind"), in.Kind,
			[]string{resource.KindProjectMigrateVirtualClusterInstance}))
	}
	if in.APIVersion != "" && in.APIVersion != resource.GroupVersion {
		errs = append(errs, resource.NotSupported(resource.NewPath("apiVersion"), in.APIVersion,
			[]string{resource.GroupVersion}))
	}
	src := resource.NewPath("sourceVirtualClusterInstance")
	if in.SourceVirtualClusterInstance.Name == "" {
		errs = append(errs, resource.Required(src.Child("name"), "the name of the instance to move is required"))
	} else {
		errs = append(errs, resource.ValidateName(in.SourceVirtualClusterInstance.Name, src.Child("name"))...)
	}
	if in.SourceVirtualClusterInstance.Namespace == "" {
		errs = append(errs, resource.Required(src.Child("namespace"), "the namespace of the instance to move is required"))
	} else {
		errs = append(errs, resource.ValidateNamespaceName(in.SourceVirtualClusterInstance.Namespace, src.Child("namespace"))...)
	}
	meta := &in.ObjectMeta
	metaPath := resource.NewPath("metadata")
	if meta.ResourceVersion != "" {
		errs = append(errs, resource.Invalid(metaPath.Child("resourceVersion"), meta.ResourceVersion,
			"must not be set on a request to create"))
	}
	// The request is cluster-scoped (a subresource of Project): a namespace is
	// dropped, as the store does for every cluster-scoped kind.
	meta.Namespace = ""
	if meta.Name == "" && meta.GenerateName == "" {
		meta.GenerateName = DefaultGenerateName
	}
	errs = append(errs, resource.ValidateObjectMeta(meta, false, metaPath)...)
	if len(errs) > 0 {
		name := meta.Name
		if name == "" {
			name = meta.GenerateName
		}
		return resource.NewInvalid(svc.kindMigrate, name, errs)
	}
	in.Kind, in.APIVersion = resource.KindProjectMigrateVirtualClusterInstance, resource.GroupVersion
	in.Status = resource.ProjectMigrateVirtualClusterInstanceStatus{}
	return nil
}

// checkReplay decides a request whose name is already recorded: the same request
// (source and target) by a caller with the rights the move needs gets the recorded
// result; another request under that name is 409 AlreadyExists.
func (svc *Service) checkReplay(ctx context.Context, targetProject string,
	in, prev *resource.ProjectMigrateVirtualClusterInstance, caller Caller) error {
	if prev.SourceVirtualClusterInstance != in.SourceVirtualClusterInstance || prev.Labels[resource.LabelProject] != targetProject {
		e := resource.NewAlreadyExists(svc.kindMigrate, in.Name)
		e.ErrStatus.Message += fmt.Sprintf(": it recorded the move of %s/%s into project %q, not of %s/%s into project %q",
			prev.SourceVirtualClusterInstance.Namespace, prev.SourceVirtualClusterInstance.Name,
			prev.Labels[resource.LabelProject], in.SourceVirtualClusterInstance.Namespace,
			in.SourceVirtualClusterInstance.Name, targetProject)
		return e
	}
	return svc.authorize(ctx, caller, targetProject, in.SourceVirtualClusterInstance)
}

// plan is what the checks found: the move to make.
type plan struct {
	project  *resource.Project
	targetNS string
	src      *resource.VirtualClusterInstance
}

// check runs checks 2 to 8 in tx; a refusal is its Status error.
func (svc *Service) check(ctx context.Context, tx *store.Tx, targetProject string,
	in *resource.ProjectMigrateVirtualClusterInstance, caller Caller) (*plan, error) {
	srcRef := in.SourceVirtualClusterInstance

	// 2. The target project exists.
	project, err := svc.targetProject(tx, targetProject, in.Name)
	if err != nil {
		return nil, err
	}
	targetNS := svc.ProjectNamespace(targetProject)

	// 3. The source instance exists.
	src := &resource.VirtualClusterInstance{}
	if err := tx.Get(srcRef.Namespace, srcRef.Name, src); err != nil {
		if errors.Is(err, resource.ErrNotFound) {
			e := resource.NewNotFound(svc.kindInstance, srcRef.Name)
			e.ErrStatus.Message = fmt.Sprintf("%s %q not found in namespace %q",
				svc.kindInstance.GroupResource(), srcRef.Name, srcRef.Namespace)
			return nil, e
		}
		return nil, err
	}
	// 4. It is not being deleted.
	if src.IsTerminating() {
		return nil, resource.NewConflict(svc.kindInstance, src.Name, fmt.Sprintf(
			"the virtual cluster instance is being deleted (deletionTimestamp %s) and cannot be moved",
			src.DeletionTimestamp.Format("2006-01-02T15:04:05Z")))
	}
	// 5. It is not in the target project already.
	if src.Namespace == targetNS {
		return nil, resource.NewConflict(svc.kindInstance, src.Name, fmt.Sprintf(
			"the virtual cluster instance is already in project %q (namespace %q)", targetProject, targetNS))
	}
	// 6. Its name is free in the target namespace.
	taken := &resource.VirtualClusterInstance{}
	switch err := tx.Get(targetNS, src.Name, taken); {
	case err == nil:
		e := resource.NewAlreadyExists(svc.kindInstance, src.Name)
		e.ErrStatus.Message = fmt.Sprintf("%s %q already exists in namespace %q of project %q",
			svc.kindInstance.GroupResource(), src.Name, targetNS, targetProject)
		return nil, e
	case !errors.Is(err, resource.ErrNotFound):
		return nil, err
	}
	// 7. The caller may create in the target and delete the source.
	if err := svc.authorize(ctx, caller, targetProject, srcRef); err != nil {
		return nil, err
	}
	// 8. The target project allows the instance's cluster.
	if err := svc.checkCluster(project, src); err != nil {
		return nil, err
	}
	return &plan{project: project, targetNS: targetNS, src: src}, nil
}

// write stages the move in tx: the source goes (without running its finalizers),
// the copy appears in the target namespace with the source's status, and the
// request is recorded; all at the transaction's one revision. It returns the
// record, which the store fills in when the transaction commits.
func (svc *Service) write(tx *store.Tx, p *plan, in *resource.ProjectMigrateVirtualClusterInstance,
	wopts store.WriteOptions) (*resource.ProjectMigrateVirtualClusterInstance, error) {
	src := p.src
	uid, rv := src.UID, src.ResourceVersion
	gone := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: src.Namespace, Name: src.Name}}
	// MovedTo has the store answer an update based on the source (its uid, or a
	// resourceVersion not newer than the move) with 409 Conflict naming the new place,
	// not 404: the writer's copy is stale, the instance is not gone.
	if _, err := tx.Delete(gone, store.DeleteOptions{WriteOptions: wopts, SkipFinalizers: true,
		MovedTo:       &store.Location{Namespace: p.targetNS, Name: src.Name},
		Preconditions: store.Preconditions{UID: &uid, ResourceVersion: &rv}}); err != nil {
		return nil, err
	}
	moved := svc.copyForTarget(src, p.project, p.targetNS)
	if err := tx.Create(moved, store.CreateOptions{WriteOptions: wopts}); err != nil {
		return nil, err
	}
	created := &resource.VirtualClusterInstance{}
	if err := tx.Get(p.targetNS, src.Name, created); err != nil {
		return nil, err
	}
	if !statusIsZero(&src.Status) {
		created.Status = src.Status
		if err := tx.UpdateStatus(created, store.UpdateOptions{WriteOptions: wopts}); err != nil {
			return nil, err
		}
	}
	record := &resource.ProjectMigrateVirtualClusterInstance{
		ObjectMeta:                   in.ObjectMeta,
		SourceVirtualClusterInstance: in.SourceVirtualClusterInstance,
		Status: resource.ProjectMigrateVirtualClusterInstanceStatus{
			Namespace: p.targetNS, Name: src.Name, UID: created.UID,
		},
	}
	record.Labels = cloneMap(record.Labels)
	record.Labels[resource.LabelProject] = p.project.Name
	if err := tx.Create(record, store.CreateOptions{WriteOptions: wopts}); err != nil {
		return nil, err
	}
	return record, nil
}

// targetProject reads the target project (check 2).
func (svc *Service) targetProject(tx *store.Tx, name, reqName string) (*resource.Project, error) {
	notFound := func() error { return resource.NewNotFound(svc.kindProject, name) }
	if name == "" || len(resource.ValidateName(name, resource.NewPath("name"))) > 0 {
		return nil, notFound() // no project can have that name
	}
	p := &resource.Project{}
	if err := tx.Get("", name, p); err != nil {
		if errors.Is(err, resource.ErrNotFound) {
			return nil, notFound()
		}
		return nil, err
	}
	ns := svc.ProjectNamespace(name)
	if errs := resource.ValidateNamespaceName(ns, resource.NewPath("metadata", "namespace")); len(errs) > 0 {
		return nil, resource.NewInvalid(svc.kindMigrate, reqName, resource.ErrorList{resource.Invalid(
			resource.NewPath("project"), name, fmt.Sprintf("the project's namespace %q is not a valid namespace name", ns))})
	}
	return p, nil
}

// authorize is check 7: create virtualclusterinstances in the target namespace, and
// delete the source instance, each decided by the caller's Authorizer.
func (svc *Service) authorize(ctx context.Context, caller Caller, targetProject string, src resource.SourceVirtualClusterInstance) error {
	create := policy.Request{
		Verb: "create", APIGroup: resource.Group, Resource: svc.kindInstance.Resource,
		Namespace: svc.ProjectNamespace(targetProject), Project: targetProject,
		Target: resource.RequestTargetManagement,
	}
	del := policy.Request{
		Verb: "delete", APIGroup: resource.Group, Resource: svc.kindInstance.Resource,
		Namespace: src.Namespace, Name: src.Name, Project: svc.projectOf(src.Namespace),
		Target: resource.RequestTargetManagement,
	}
	var denied []string
	for _, r := range []struct {
		what string
		req  policy.Request
	}{
		{fmt.Sprintf("cannot create %s in namespace %q", svc.kindInstance.Resource, create.Namespace), create},
		{fmt.Sprintf("cannot delete %s %q in namespace %q", svc.kindInstance.Resource, src.Name, src.Namespace), del},
	} {
		allowed, reason := false, "the caller has no authorizer"
		if caller.Authorizer != nil {
			allowed, reason = caller.Authorizer.Allowed(ctx, r.req)
		}
		if !allowed {
			if reason != "" {
				denied = append(denied, r.what+" ("+reason+")")
			} else {
				denied = append(denied, r.what)
			}
		}
	}
	if len(denied) == 0 {
		return nil
	}
	who := "the caller"
	if caller.User != nil && caller.User.Name != "" {
		who = fmt.Sprintf("user %q", caller.User.Name)
	}
	return resource.NewForbidden(svc.kindInstance, src.Name,
		fmt.Sprintf("%s may not move it into project %q: %s", who, targetProject, strings.Join(denied, "; ")))
}

// checkCluster is check 8: the project's allowedClusters must allow the instance's
// cluster.
func (svc *Service) checkCluster(p *resource.Project, inst *resource.VirtualClusterInstance) error {
	cluster := inst.Spec.ClusterRef.Cluster
	allowed := p.Spec.AllowedClusters
	if cluster == "" || len(allowed) == 0 {
		return nil
	}
	names := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a.Name == "*" || a.Name == cluster {
			return nil
		}
		names = append(names, fmt.Sprintf("%q", a.Name))
	}
	return resource.NewInvalid(svc.kindInstance, inst.Name, resource.ErrorList{resource.Forbidden(
		resource.NewPath("spec", "clusterRef", "cluster"),
		fmt.Sprintf("cluster %q is not allowed in project %q (allowedClusters: %s)", cluster, p.Name, strings.Join(names, ", ")))})
}

// copyForTarget returns the object to create in the target namespace: the source's
// spec and metadata, with the project label rewritten, the move recorded in
// annotations, the server-set fields cleared (the store sets new ones) and the owner
// references carried as far as they can follow (see the package documentation).
// Status is written separately, through the status path.
func (svc *Service) copyForTarget(src *resource.VirtualClusterInstance, target *resource.Project, targetNS string) *resource.VirtualClusterInstance {
	m := src.ObjectMeta
	out := &resource.VirtualClusterInstance{
		ObjectMeta: resource.ObjectMeta{
			Name:         m.Name,
			GenerateName: m.GenerateName,
			Namespace:    targetNS,
			Labels:       cloneMap(m.Labels),
			Annotations:  cloneMap(m.Annotations),
			Finalizers:   append([]string(nil), m.Finalizers...),
		},
		Spec: src.Spec,
	}
	out.Labels[resource.LabelProject] = target.Name
	out.Annotations[resource.AnnotationMigratedFrom] = m.Namespace + "/" + m.Name
	out.Annotations[AnnotationMigratedFromUID] = m.UID
	srcProject := svc.projectOf(m.Namespace)
	seen := map[string]bool{}
	for _, ref := range m.OwnerReferences {
		k, known := svc.s.Scheme().KindFor(ref.APIVersion, ref.Kind)
		switch {
		case known && k.Namespaced:
			// The owner stays in the source namespace and cannot own an object in
			// another one: keeping the reference would have the garbage collector
			// delete the moved instance.
			continue
		case known && k == svc.kindProject && srcProject != "" && ref.Name == srcProject:
			// Owned by the project it leaves: now owned by the project it joins.
			ref.Name, ref.UID = target.Name, target.UID
		}
		if seen[ref.UID] {
			continue
		}
		seen[ref.UID] = true
		out.OwnerReferences = append(out.OwnerReferences, ref)
	}
	return out
}

func statusIsZero(s *resource.VirtualClusterInstanceStatus) bool {
	return s.Phase == "" && s.Reason == "" && s.Message == "" && len(s.Conditions) == 0
}

// cloneMap returns a copy of m, never nil.
func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}
