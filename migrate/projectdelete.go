package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// leaderPoll is how often the worker asks the store whether it leads.
const leaderPoll = 250 * time.Millisecond

// Start binds the rules to s, the store built from the options
// [InstallProjectRules] filled, and starts the worker that finishes the deletion of
// projects; stop ends the worker and waits for it. The worker acts only while s
// leads its background work ([store.Store.Leading]: always without an elector, on
// etcd only in the elected leader); it picks up every project being deleted when it
// starts or becomes leader, so a deletion resumes after a restart or a crash.
// Start fails when the rules are started already.
func (r *ProjectRules) Start(s *store.Store) (stop func(), err error) {
	if s == nil {
		return nil, errors.New("migrate: store is nil")
	}
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return nil, errors.New("migrate: the project rules are started already")
	}
	r.started, r.s = true, s
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	w := &projectWorker{r: r, s: s, queue: map[string]struct{}{}, kick: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); w.watch(ctx, &resource.Project{}) }()
	go func() { defer wg.Done(); w.watch(ctx, &resource.VirtualClusterInstance{}) }()
	go func() { defer wg.Done(); w.loop(ctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}, nil
}

// projectWorker deletes the instances of projects being deleted, then their
// finalizer.
type projectWorker struct {
	r *ProjectRules
	s *store.Store

	mu    sync.Mutex
	queue map[string]struct{} // projects to look at
	kick  chan struct{}
}

func (w *projectWorker) enqueue(project string) {
	if project == "" {
		return
	}
	w.mu.Lock()
	w.queue[project] = struct{}{}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// watch queues the project of every change of example's kind, and watches again
// when a watch ends.
func (w *projectWorker) watch(ctx context.Context, example resource.Object) {
	for ctx.Err() == nil {
		wt, err := w.s.Watch(ctx, example, store.WatchOptions{})
		if err != nil {
			w.r.log.Warn("migrate: project worker: watch failed; trying again", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range wt.ResultChan() {
			if ev.Object == nil || ev.Type == store.Bookmark {
				continue
			}
			m := ev.Object.GetObjectMeta()
			switch ev.Object.(type) {
			case *resource.Project:
				if m.IsTerminating() || !m.HasFinalizer(FinalizerProjectInstances) {
					w.enqueue(m.Name)
				}
			case *resource.VirtualClusterInstance:
				if ev.Type != store.Added {
					w.enqueue(w.r.projectOf(m.Namespace))
				}
			}
		}
		wt.Stop()
	}
}

// loop works on the queue while the store leads, and looks at every project again
// when it starts leading and every resync interval.
func (w *projectWorker) loop(ctx context.Context) {
	leadTick := time.NewTicker(leaderPoll)
	defer leadTick.Stop()
	resync := time.NewTicker(w.r.resync)
	defer resync.Stop()
	leading := false
	for {
		now := w.s.Leading()
		if now && !leading {
			w.resyncAll(ctx)
		}
		leading = now
		if leading {
			w.drain(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-leadTick.C:
		case <-resync.C:
			if leading {
				w.resyncAll(ctx)
			}
		}
	}
}

// resyncAll queues every project being deleted or lacking the finalizer.
func (w *projectWorker) resyncAll(ctx context.Context) {
	list := &resource.ProjectList{}
	if err := w.s.List(ctx, list, store.ListOptions{}); err != nil {
		if ctx.Err() == nil {
			w.r.log.Warn("migrate: project worker: list of projects failed", "err", err)
		}
		return
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.IsTerminating() || !p.HasFinalizer(FinalizerProjectInstances) {
			w.enqueue(p.Name)
		}
	}
}

// drain works on every queued project.
func (w *projectWorker) drain(ctx context.Context) {
	for ctx.Err() == nil && w.s.Leading() {
		w.mu.Lock()
		var name string
		for n := range w.queue {
			name = n
			break
		}
		delete(w.queue, name)
		w.mu.Unlock()
		if name == "" {
			return
		}
		if err := w.reconcile(ctx, name); err != nil && ctx.Err() == nil {
			w.r.log.Warn("migrate: project worker", "project", name, "err", err)
			// Look again at the next resync, or the next change.
		}
	}
}

// reconcile does what project name needs: the finalizer on a live project; on a
// project being deleted, the deletion of its instances, the status that says what
// is left, and the removal of the finalizer once nothing is.
func (w *projectWorker) reconcile(ctx context.Context, name string) error {
	p := &resource.Project{}
	if err := w.s.Get(ctx, "", name, p, store.GetOptions{}); err != nil {
		if errors.Is(err, resource.ErrNotFound) {
			return nil
		}
		return err
	}
	wopts := store.WriteOptions{FieldManager: w.r.manager}
	if !p.IsTerminating() {
		if p.HasFinalizer(FinalizerProjectInstances) {
			return nil
		}
		// A project from before the rules were installed: the update's mutating
		// hook adds the finalizer.
		err := w.s.Update(ctx, p, store.UpdateOptions{WriteOptions: wopts})
		if errors.Is(err, resource.ErrConflict) || errors.Is(err, resource.ErrNotFound) {
			w.enqueue(name)
			return nil
		}
		return err
	}
	if !p.HasFinalizer(FinalizerProjectInstances) {
		return nil
	}
	left, err := w.deleteInstances(ctx, p, wopts)
	if err != nil {
		return err
	}
	return w.finish(ctx, p, left, wopts)
}

// deleteInstances starts the deletion of every instance of p not being deleted yet
// (their finalizers and grace periods are theirs: a plain delete), and returns
// what is left in the namespace.
func (w *projectWorker) deleteInstances(ctx context.Context, p *resource.Project, wopts store.WriteOptions) ([]resource.VirtualClusterInstance, error) {
	ns := w.r.ProjectNamespace(p.Name)
	list := &resource.VirtualClusterInstanceList{}
	if err := w.s.List(ctx, list, store.ListOptions{Namespace: ns}); err != nil {
		return nil, err
	}
	deleted := false
	for i := range list.Items {
		inst := &list.Items[i]
		if inst.IsTerminating() {
			continue
		}
		uid := inst.UID
		target := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: ns, Name: inst.Name}}
		_, err := w.s.Delete(ctx, target, store.DeleteOptions{WriteOptions: wopts, Preconditions: store.Preconditions{UID: &uid}})
		switch {
		case err == nil:
			deleted = true
		case errors.Is(err, resource.ErrNotFound), errors.Is(err, resource.ErrConflict):
			// Gone or moved away meanwhile: the list below sees it.
			deleted = true
		default:
			return nil, err
		}
	}
	if !deleted {
		return list.Items, nil
	}
	list = &resource.VirtualClusterInstanceList{}
	if err := w.s.List(ctx, list, store.ListOptions{Namespace: ns}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// finish writes p's status from what is left, and removes the finalizer when
// nothing is, in one transaction on the project as it is then. No instance can
// enter the namespace of a project being deleted (the hooks and Service.Migrate
// read the project in their own transactions), so an empty list taken after the
// project was seen marked stays empty.
func (w *projectWorker) finish(ctx context.Context, seen *resource.Project, left []resource.VirtualClusterInstance, wopts store.WriteOptions) error {
	conds := deletionConditions(w.r.ProjectNamespace(seen.Name), left)
	err := w.write(ctx, seen, left, conds, wopts)
	if err != nil && len(left) == 0 && errors.Is(err, resource.ErrInvalid) {
		// A host whose schema refuses the status must still see the project go:
		// drop the finalizer without the report.
		w.r.log.Warn("migrate: project worker: status refused; removing the finalizer without it", "project", seen.Name, "err", err)
		err = w.write(ctx, seen, left, nil, wopts)
	}
	if errors.Is(err, resource.ErrNotFound) {
		return nil
	}
	if err != nil && len(left) > 0 {
		// The status is a report; a refusal of it (a host's schema, say) must not
		// stop the deletion, which goes on at the next change.
		w.r.log.Warn("migrate: project worker: status update failed", "project", seen.Name, "err", err)
		return nil
	}
	if err == nil && len(left) == 0 {
		w.r.log.Info("migrate: project worker: the project's instances are gone", "project", seen.Name)
	}
	return err
}

// write sets conds on the project seen (when it is still that project, with our
// finalizer) and, when nothing is left, removes the finalizer, in one transaction.
func (w *projectWorker) write(ctx context.Context, seen *resource.Project, left []resource.VirtualClusterInstance,
	conds []resource.Condition, wopts store.WriteOptions) error {
	return w.s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		p := &resource.Project{}
		if err := tx.Get("", seen.Name, p); err != nil {
			return err
		}
		if p.UID != seen.UID || !p.HasFinalizer(FinalizerProjectInstances) {
			return nil
		}
		// Project has a status subresource: the conditions are written through it,
		// the finalizer through the main resource, both in this transaction.
		if setConditions(&p.Status.Conditions, conds, w.s.Clock().Now()) {
			if err := tx.UpdateStatus(p, store.UpdateOptions{WriteOptions: wopts}); err != nil {
				return err
			}
			if err := tx.Get("", seen.Name, p); err != nil {
				return err
			}
		}
		if len(left) == 0 {
			p.RemoveFinalizer(FinalizerProjectInstances)
			return tx.Update(p, store.UpdateOptions{WriteOptions: wopts})
		}
		return nil
	})
}

// maxNamed is how many instances or finalizers a condition's message names.
const maxNamed = 10

// deletionConditions are the conditions of a project being deleted whose namespace
// ns still holds left.
func deletionConditions(ns string, left []resource.VirtualClusterInstance) []resource.Condition {
	if len(left) == 0 {
		return []resource.Condition{
			{Type: ConditionInstancesRemaining, Status: "False", Reason: "InstancesDeleted",
				Message: fmt.Sprintf("every virtual cluster instance in namespace %q is deleted", ns)},
			{Type: ConditionInstanceFinalizersRemaining, Status: "False", Reason: "InstancesDeleted",
				Message: "no instance waits for a finalizer"},
		}
	}
	names := make([]string, 0, len(left))
	finalizers := map[string]int{}
	for i := range left {
		names = append(names, left[i].Name)
		for _, f := range left[i].Finalizers {
			finalizers[f]++
		}
	}
	sort.Strings(names)
	cs := []resource.Condition{{Type: ConditionInstancesRemaining, Status: "True", Reason: "SomeInstancesRemain",
		Message: fmt.Sprintf("%d virtual cluster instances remain in namespace %q: %s", len(left), ns, nameList(names))}}
	if len(finalizers) == 0 {
		return append(cs, resource.Condition{Type: ConditionInstanceFinalizersRemaining, Status: "False",
			Reason: "NoFinalizers", Message: "the remaining instances wait for their grace periods, not for finalizers"})
	}
	fs := make([]string, 0, len(finalizers))
	for f, n := range finalizers {
		fs = append(fs, fmt.Sprintf("%s in %d instances", f, n))
	}
	sort.Strings(fs)
	return append(cs, resource.Condition{Type: ConditionInstanceFinalizersRemaining, Status: "True",
		Reason: "SomeFinalizersRemain", Message: "finalizers remain: " + nameList(fs)})
}

func nameList(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

// setConditions puts want into conds (by type), keeping a condition's transition
// time when its status stays; it reports whether anything changed.
func setConditions(conds *[]resource.Condition, want []resource.Condition, now time.Time) bool {
	changed := false
	for _, c := range want {
		i := -1
		for j := range *conds {
			if (*conds)[j].Type == c.Type {
				i = j
			}
		}
		if i < 0 {
			t := resource.NewTime(now)
			c.LastTransitionTime = &t
			*conds = append(*conds, c)
			changed = true
			continue
		}
		old := (*conds)[i]
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status || c.LastTransitionTime == nil {
			t := resource.NewTime(now)
			c.LastTransitionTime = &t
		}
		(*conds)[i] = c
		changed = true
	}
	return changed
}
