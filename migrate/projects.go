package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// FinalizerProjectInstances is the finalizer the project rules put on every Project:
// a deleted project stays, marked, until its instances are gone.
const FinalizerProjectInstances = "management.service/project-instances"

// Condition types of a Project being deleted, written by the project rules' worker.
const (
	// ConditionInstancesRemaining is True while instances are left in the namespace
	// of a project being deleted; its message names them.
	ConditionInstancesRemaining = "InstancesRemaining"
	// ConditionInstanceFinalizersRemaining is True while instances of a project
	// being deleted wait for finalizers; its message names the finalizers.
	ConditionInstanceFinalizersRemaining = "InstanceFinalizersRemaining"
)

// MaxNamespaceLength is the longest namespace name (a DNS label).
const MaxNamespaceLength = 63

// DefaultProjectFieldManager is the field manager of the project rules' own writes.
const DefaultProjectFieldManager = "project-controller"

// ProjectRulesOptions configure [InstallProjectRules]. The zero value gives the
// defaults.
type ProjectRulesOptions struct {
	// NamespacePrefix is the prefix of a project's namespace; empty means
	// [resource.DefaultProjectNamespacePrefix] ("p-"). It must be the prefix the
	// [Service] of the same store uses.
	NamespacePrefix string
	// FieldManager names the worker in managedFields; empty means
	// [DefaultProjectFieldManager].
	FieldManager string
	// ResyncInterval is how often the worker looks at every project again, besides
	// reacting to changes; 0 means 30 seconds.
	ResyncInterval time.Duration
	// Logger receives the worker's errors and progress; nil discards.
	Logger *slog.Logger
}

// ProjectRules are the rules every write of a Project or VirtualClusterInstance keeps
// (admission hooks in a store) and the worker that deletes the instances of a
// deleted project. Build them with [InstallProjectRules]; start the worker with
// [ProjectRules.Start].
type ProjectRules struct {
	prefix      string
	manager     string
	resync      time.Duration
	log         *slog.Logger
	kindProject *resource.KindInfo

	mu      sync.Mutex
	s       *store.Store
	started bool
}

// InstallProjectRules adds the project rules' admission hooks to opts (one mutating
// and one validating hook, after those already there) and returns the rules, whose
// Start the host calls with the store built from opts.
//
// The hooks enforce, on every write: an instance lives only in the namespace of an
// existing project that is not being deleted, with the project label the server
// sets; allowedClusters holds for instances and for project updates; a project name
// fits its namespace; a project carries [FinalizerProjectInstances]. Until Start,
// a project update that must list the project's instances (a change of
// allowedClusters, the removal of the finalizer) is refused with 503.
func InstallProjectRules(opts *store.Options, ro ProjectRulesOptions) (*ProjectRules, error) {
	if opts == nil {
		return nil, errors.New("migrate: store options are nil")
	}
	r := &ProjectRules{prefix: ro.NamespacePrefix, manager: ro.FieldManager, resync: ro.ResyncInterval, log: ro.Logger}
	if r.prefix == "" {
		r.prefix = resource.DefaultProjectNamespacePrefix
	}
	if errs := resource.ValidateNamespaceName(r.prefix+"a", resource.NewPath("namespacePrefix")); len(errs) > 0 {
		return nil, fmt.Errorf("migrate: namespace prefix %q cannot start a namespace name: %v", r.prefix, errs.ToAggregate())
	}
	if r.manager == "" {
		r.manager = DefaultProjectFieldManager
	}
	if r.resync <= 0 {
		r.resync = 30 * time.Second
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = resource.NewScheme()
	}
	k, ok := scheme.KindFor(resource.GroupVersion, resource.KindProject)
	if !ok {
		return nil, fmt.Errorf("migrate: the store's scheme has no kind %s", resource.KindProject)
	}
	r.kindProject = k
	opts.Mutating = append(opts.Mutating, store.MutatingAdmitterFunc(r.admit))
	opts.Validating = append(opts.Validating, store.ValidatingAdmitterFunc(r.validate))
	return r, nil
}

// MaxProjectNameLength returns the longest project name the rules accept: 63 minus
// the length of the namespace prefix.
func (r *ProjectRules) MaxProjectNameLength() int { return MaxNamespaceLength - len(r.prefix) }

// ProjectNamespace returns the namespace of project: the prefix plus its name.
func (r *ProjectRules) ProjectNamespace(project string) string { return r.prefix + project }

// projectOf returns the project of namespace ns, or "" when ns is not a project
// namespace.
func (r *ProjectRules) projectOf(ns string) string {
	if len(ns) > len(r.prefix) && strings.HasPrefix(ns, r.prefix) {
		return ns[len(r.prefix):]
	}
	return ""
}

// store returns the store the rules were started with; hooks that must list fail
// with 503 before Start.
func (r *ProjectRules) store() (*store.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == nil {
		return nil, resource.NewServiceUnavailable("the project rules are not started: the host must call ProjectRules.Start with the store")
	}
	return r.s, nil
}

func isKind(k *resource.KindInfo, kind string) bool {
	return k != nil && k.Group == resource.Group && k.Kind == kind
}

// admit is the mutating hook: it sets the project label of an instance and the
// finalizer of a project.
func (r *ProjectRules) admit(_ context.Context, req *store.AdmissionRequest) error {
	if req.Subresource != "" || req.Object == nil {
		return nil
	}
	switch {
	case isKind(req.Kind, resource.KindVirtualClusterInstance):
		return r.admitInstance(req)
	case isKind(req.Kind, resource.KindProject):
		m := req.Object.GetObjectMeta()
		if !m.IsTerminating() {
			m.AddFinalizer(FinalizerProjectInstances)
		}
	}
	return nil
}

// admitInstance refuses an instance outside a project namespace or with another
// project's label, and sets the label.
func (r *ProjectRules) admitInstance(req *store.AdmissionRequest) error {
	m := req.Object.GetObjectMeta()
	project := r.projectOf(m.Namespace)
	if project == "" {
		return resource.NewInvalid(req.Kind, m.Name, resource.ErrorList{resource.Invalid(
			resource.NewPath("metadata", "namespace"), m.Namespace, fmt.Sprintf(
				"is not the namespace of a project: an instance lives in the namespace of its project, %q followed by the project's name", r.prefix))})
	}
	if v, ok := m.Labels[resource.LabelProject]; ok && v != project {
		return resource.NewInvalid(req.Kind, m.Name, resource.ErrorList{resource.Invalid(
			resource.NewPath("metadata", "labels").Key(resource.LabelProject), v, fmt.Sprintf(
				"must be %q, the project of namespace %q (the server sets this label)", project, m.Namespace))})
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[resource.LabelProject] = project
	return nil
}

// validate is the validating hook: the rules that read other objects.
func (r *ProjectRules) validate(ctx context.Context, req *store.AdmissionRequest) error {
	if req.Subresource != "" || req.Object == nil || req.Tx == nil {
		return nil
	}
	switch {
	case isKind(req.Kind, resource.KindVirtualClusterInstance):
		inst, ok := req.Object.(*resource.VirtualClusterInstance)
		if !ok {
			return nil
		}
		return r.validateInstance(req, inst)
	case isKind(req.Kind, resource.KindProject):
		p, ok := req.Object.(*resource.Project)
		if !ok {
			return nil
		}
		old, _ := req.OldObject.(*resource.Project)
		return r.validateProject(ctx, req, p, old)
	}
	return nil
}

// validateInstance checks an instance's project, in the write's transaction: the
// read of the project makes the write run again if the project changes before it
// commits.
func (r *ProjectRules) validateInstance(req *store.AdmissionRequest, inst *resource.VirtualClusterInstance) error {
	if req.Operation == store.OperationUpdate && inst.IsTerminating() {
		// An instance on its way out may still lose its finalizers, whatever its
		// project's state.
		return nil
	}
	name := r.projectOf(inst.Namespace)
	p := &resource.Project{}
	if err := req.Tx.Get("", name, p); err != nil {
		if errors.Is(err, resource.ErrNotFound) {
			e := resource.NewNotFound(r.kindProject, name)
			e.ErrStatus.Message = fmt.Sprintf("project %q not found: namespace %q belongs to no project", name, inst.Namespace)
			return e
		}
		return err
	}
	if req.Operation == store.OperationCreate && p.IsTerminating() {
		return resource.NewConflict(req.Kind, inst.Name, fmt.Sprintf(
			"project %q is being deleted: no virtual cluster instance can be created in namespace %q", name, inst.Namespace))
	}
	return clusterAllowed(req.Kind, p, inst)
}

// clusterAllowed is 422 when p's allowedClusters do not allow inst's cluster.
func clusterAllowed(k *resource.KindInfo, p *resource.Project, inst *resource.VirtualClusterInstance) error {
	cluster := inst.Spec.ClusterRef.Cluster
	if allows(p.Spec.AllowedClusters, cluster) {
		return nil
	}
	return resource.NewInvalid(k, inst.Name, resource.ErrorList{resource.Forbidden(
		resource.NewPath("spec", "clusterRef", "cluster"),
		fmt.Sprintf("cluster %q is not allowed in project %q (allowedClusters: %s)", cluster, p.Name, clusterNames(p.Spec.AllowedClusters)))})
}

// allows reports whether allowed admits cluster: an empty list or "*" admits every
// cluster, and an instance without a cluster passes.
func allows(allowed []resource.AllowedCluster, cluster string) bool {
	if cluster == "" || len(allowed) == 0 {
		return true
	}
	for _, a := range allowed {
		if a.Name == "*" || a.Name == cluster {
			return true
		}
	}
	return false
}

func clusterNames(allowed []resource.AllowedCluster) string {
	names := make([]string, 0, len(allowed))
	for _, a := range allowed {
		names = append(names, fmt.Sprintf("%q", a.Name))
	}
	return strings.Join(names, ", ")
}

// validateProject checks a project's name on create, and on update that its
// allowedClusters keep every instance's cluster and that our finalizer goes only
// once the namespace is empty.
func (r *ProjectRules) validateProject(ctx context.Context, req *store.AdmissionRequest, p, old *resource.Project) error {
	if req.Operation == store.OperationCreate {
		return r.validateProjectName(req.Kind, p.Name)
	}
	if old == nil {
		return nil
	}
	finalizerGoes := old.HasFinalizer(FinalizerProjectInstances) && !p.HasFinalizer(FinalizerProjectInstances)
	narrowed := !sameClusters(old.Spec.AllowedClusters, p.Spec.AllowedClusters) && !allowsEvery(p.Spec.AllowedClusters)
	if !finalizerGoes && !narrowed {
		return nil
	}
	insts, err := r.instancesOf(ctx, req.Tx, p.Name)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if finalizerGoes {
			return resource.NewInvalid(req.Kind, p.Name, resource.ErrorList{resource.Forbidden(
				resource.NewPath("metadata", "finalizers"), fmt.Sprintf(
					"%s cannot be removed while the project's namespace %q holds virtual cluster instances (%q is one)",
					FinalizerProjectInstances, inst.Namespace, inst.Name))})
		}
		if !inst.IsTerminating() && !allows(p.Spec.AllowedClusters, inst.Spec.ClusterRef.Cluster) {
			return resource.NewInvalid(req.Kind, p.Name, resource.ErrorList{resource.Forbidden(
				resource.NewPath("spec", "allowedClusters"), fmt.Sprintf(
					"would exclude cluster %q, which virtual cluster instance %q of the project uses", inst.Spec.ClusterRef.Cluster, inst.Name))})
		}
	}
	return nil
}

// validateProjectName is 422 when the project's namespace would not be a valid
// namespace name: longer than 63 characters, or not a DNS label.
func (r *ProjectRules) validateProjectName(k *resource.KindInfo, name string) error {
	path := resource.NewPath("metadata", "name")
	if max := r.MaxProjectNameLength(); len(name) > max {
		fe := resource.TooLong(path, name, max)
		fe.Detail = fmt.Sprintf("must have at most %d characters: the project's namespace, %q plus its name, must fit in %d",
			max, r.prefix, MaxNamespaceLength)
		return resource.NewInvalid(k, name, resource.ErrorList{fe})
	}
	if errs := resource.ValidateNamespaceName(r.ProjectNamespace(name), path); len(errs) > 0 {
		return resource.NewInvalid(k, name, resource.ErrorList{resource.Invalid(path, name, fmt.Sprintf(
			"the project's namespace %q must be a valid namespace name (a DNS label)", r.ProjectNamespace(name)))})
	}
	return nil
}

// instancesOf lists the instances of project in tx, so that an instance created or
// changed in the project's namespace before tx commits runs the write again.
func (r *ProjectRules) instancesOf(_ context.Context, tx *store.Tx, project string) ([]*resource.VirtualClusterInstance, error) {
	list := &resource.VirtualClusterInstanceList{}
	if err := tx.List(list, store.ListOptions{Namespace: r.ProjectNamespace(project)}); err != nil {
		return nil, err
	}
	out := make([]*resource.VirtualClusterInstance, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func sameClusters(a, b []resource.AllowedCluster) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func allowsEvery(allowed []resource.AllowedCluster) bool { return allows(allowed, "\x00any") }
