package migrate

import (
	"context"
	"crypto/rand"
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
//     resourceVersion set. Causes carry the field paths. Nothing is read yet.
//  2. 403 Forbidden: the caller may not create virtualclusterinstances in the target
//     namespace, or may not delete the source instance. Nothing is read yet either,
//     so a caller without the rights gets this answer whether the project, the
//     instance or a record of that name exists or not (authorization before
//     existence), and the message names only what the request named.
//  3. 422 Invalid: metadata.name (or generateName) too long to be recorded under
//     the target project (see [Service.RecordName]).
//  4. A recorded request of that name into the target project: its result (a
//     replay), or 409 AlreadyExists when it recorded another source.
//  5. 404 NotFound: the target project does not exist (422 when it does but its
//     namespace would not be a valid namespace name); 409 Conflict: it is being
//     deleted.
//  6. 404 NotFound: the source instance does not exist.
//  7. 409 Conflict: the source instance is being deleted.
//  8. 409 Conflict: the source instance is already in the target project's namespace.
//  9. 409 AlreadyExists: an instance of that name exists in the target namespace.
//  10. 422 Invalid: the target project's allowedClusters do not allow the instance's
//     spec.clusterRef.cluster (an empty list, or an entry "*", allows every cluster;
//     an instance with no cluster passes).
//
// This is the order of decisions §5 with the authorization moved before the first
// read, as decisions §1 requires. When the store has the project rules
// ([InstallProjectRules]), the write of the moved instance passes their hooks too,
// in the same transaction.
//
// A request with metadata.name is idempotent: the request is recorded, in the same
// transaction as the move, as a ProjectMigrateVirtualClusterInstance named
// [Service.RecordName](targetProject, name), and a request whose name is recorded
// for the target project returns the recorded result (under the request's name)
// without moving anything, whatever has happened to the instance since: checks 5
// to 10 do not apply to a replay. A request with generateName (or with neither name
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
	// Authorization comes before anything is read: a caller without the rights gets
	// the same answer whether the project, the instance or a record exists or not.
	if err := svc.authorize(ctx, caller, targetProject, in.SourceVirtualClusterInstance); err != nil {
		return nil, err
	}
	if err := svc.checkRecordName(targetProject, in); err != nil {
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
		out.Name = svc.requestName(targetProject, out.Name)
		return out, nil
	}
	// The record is filled with the committed result; a copy through JSON makes it
	// exactly what a later read of the record (a replay) returns.
	out, err := resource.DeepCopy(oc.record)
	if err != nil {
		return nil, resource.NewInternalError(err)
	}
	out.Kind, out.APIVersion = resource.KindProjectMigrateVirtualClusterInstance, resource.GroupVersion
	out.Name = svc.requestName(targetProject, out.Name)
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
		err := tx.Get("", svc.RecordName(targetProject, in.Name), prev)
		switch {
		case err == nil:
			if err := svc.checkReplay(targetProject, in, prev); err != nil {
				return err
			}
			oc.replay = prev
			return nil
		case !errors.Is(err, resource.ErrNotFound):
			return err
		}
	}
	p, err := svc.check(tx, targetProject, in)
	if err != nil {
		return err
	}
	recordName := ""
	if in.Name != "" {
		recordName = svc.RecordName(targetProject, in.Name)
	} else if recordName, err = svc.generateRecordName(tx, targetProject, in.GenerateName); err != nil {
		return err
	}
	oc.record, err = svc.write(tx, p, in, recordName, wopts)
	return err
}

// RecordName returns the name under which a request named name, to move an instance
// into targetProject, is recorded: "<targetProject>.<name>". Records are scoped by
// their target project so that a name used for a move into one project never
// blocks, or answers, a move into another.
func (svc *Service) RecordName(targetProject, name string) string { return targetProject + "." + name }

// requestName is the request's name of a record of a move into targetProject.
func (svc *Service) requestName(targetProject, recordName string) string {
	return strings.TrimPrefix(recordName, targetProject+".")
}

// checkRecordName is 422 when the record of the request would have a name longer
// than a name may be.
func (svc *Service) checkRecordName(targetProject string, in *resource.ProjectMigrateVirtualClusterInstance) error {
	const maxName = 253
	name, field := in.Name, "name"
	if name == "" {
		name, field = in.GenerateName+"xxxxx", "generateName"
		if len(in.GenerateName) > maxGeneratePrefix {
			name = in.GenerateName[:maxGeneratePrefix] + "xxxxx"
		}
	}
	if max := maxName - len(targetProject) - 1; len(name) > max {
		fe := resource.TooLong(resource.NewPath("metadata", field), in.Name+in.GenerateName, max)
		fe.Detail = fmt.Sprintf("must leave room for the target project: a move into project %q is recorded as %q followed by its name, at most %d characters in all",
			targetProject, targetProject+".", maxName)
		return resource.NewInvalid(svc.kindMigrate, in.Name+in.GenerateName, resource.ErrorList{fe})
	}
	return nil
}

// maxGeneratePrefix is how much of a generateName a generated name keeps, as the
// store cuts it.
const maxGeneratePrefix = 58

// generateRecordName picks a free record name for a request with generateName:
// the prefix (cut to 58 characters) and 5 random characters, as the store makes
// names, scoped by the target project.
func (svc *Service) generateRecordName(tx *store.Tx, targetProject, prefix string) (string, error) {
	if len(prefix) > maxGeneratePrefix {
		prefix = prefix[:maxGeneratePrefix]
	}
	var name string
	for attempt := 0; attempt < store.MaxGenerateNameAttempts; attempt++ {
		name = svc.RecordName(targetProject, prefix+randomSuffix(5))
		err := tx.Get("", name, &resource.ProjectMigrateVirtualClusterInstance{})
		if errors.Is(err, resource.ErrNotFound) {
			return name, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", resource.NewGenerateNameConflict(svc.kindMigrate, svc.requestName(targetProject, name), 1)
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

// checkReplay decides a request whose name is already recorded for the target
// project (the caller passed the authorization of the request): the same source
// gets the recorded result; another is 409 AlreadyExists. The message names only
// what the request itself named: the recorded source may be hidden from the caller.
func (svc *Service) checkReplay(targetProject string, in, prev *resource.ProjectMigrateVirtualClusterInstance) error {
	if prev.SourceVirtualClusterInstance != in.SourceVirtualClusterInstance || prev.Labels[resource.LabelProject] != targetProject {
		e := resource.NewAlreadyExists(svc.kindMigrate, in.Name)
		e.ErrStatus.Message = fmt.Sprintf("%s %q already exists: the name records another move into project %q; use another name",
			svc.kindMigrate.GroupResource(), in.Name, targetProject)
		return e
	}
	return nil
}

// plan is what the checks found: the move to make.
type plan struct {
	project  *resource.Project
	targetNS string
	src      *resource.VirtualClusterInstance
}

// check runs the checks that read the store, in tx; a refusal is its Status error.
func (svc *Service) check(tx *store.Tx, targetProject string, in *resource.ProjectMigrateVirtualClusterInstance) (*plan, error) {
	srcRef := in.SourceVirtualClusterInstance

	// The target project exists, and is not being deleted.
	project, err := svc.targetProject(tx, targetProject, in.Name)
	if err != nil {
		return nil, err
	}
	targetNS := svc.ProjectNamespace(targetProject)
	if project.IsTerminating() {
		return nil, resource.NewConflict(svc.kindProject, targetProject, fmt.Sprintf(
			"project %q is being deleted: no virtual cluster instance can be moved into it", targetProject))
	}

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
	// The target project allows the instance's cluster.
	if err := svc.checkCluster(project, src); err != nil {
		return nil, err
	}
	return &plan{project: project, targetNS: targetNS, src: src}, nil
}

// write stages the move in tx: the source goes (without running its finalizers),
// the copy appears in the target namespace with the source's status, and the
// request is recorded; all at the transaction's one revision. It returns the
// record, which the store fills in when the transaction commits.
func (svc *Service) write(tx *store.Tx, p *plan, in *resource.ProjectMigrateVirtualClusterInstance, recordName string,
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
	record.Name = recordName
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

// checkCluster is 422 when the target project's allowedClusters do not allow the
// instance's cluster.
func (svc *Service) checkCluster(p *resource.Project, inst *resource.VirtualClusterInstance) error {
	return clusterAllowed(svc.kindInstance, p, inst)
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

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// randomSuffix returns n characters drawn from the store's alphabet of generated
// names.
func randomSuffix(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("migrate: crypto/rand failed: %v", err)) // never on supported platforms
	}
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b)
}
