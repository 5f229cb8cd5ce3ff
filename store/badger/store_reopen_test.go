package badger_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// objectSummary is what a restart must keep of an object.
type objectSummary struct {
	uid, rv     string
	generation  int64
	description string
	created     string
}

func summarize(t *testing.T, s *store.Store) (map[string]objectSummary, string) {
	t.Helper()
	out := map[string]objectSummary{}
	projects := &resource.ProjectList{}
	require.NoError(t, s.List(t.Context(), projects, store.ListOptions{}))
	for _, p := range projects.Items {
		out["project/"+p.Name] = objectSummary{p.UID, p.ResourceVersion, p.Generation, p.Spec.Description, p.CreationTimestamp.String()}
	}
	instances := &resource.VirtualClusterInstanceList{}
	require.NoError(t, s.List(t.Context(), instances, store.ListOptions{}))
	for _, v := range instances.Items {
		out["vci/"+v.Namespace+"/"+v.Name] = objectSummary{v.UID, v.ResourceVersion, v.Generation, v.Spec.Description, v.CreationTimestamp.String()}
	}
	return out, projects.ResourceVersion
}

func TestStore_ReopenKeepsObjectsRevisionsAndUIDs(t *testing.T) {
	dir := t.TempDir()
	b, err := badger.Open(dir, badger.Options{})
	require.NoError(t, err)
	s, err := store.New(b, store.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	for i := range 20 {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p-%02d", i)}}
		require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
		v := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-" + p.Name, Name: "vci"}}
		require.NoError(t, s.Create(ctx, v, store.CreateOptions{}))
	}
	for i := range 10 {
		p := &resource.Project{}
		require.NoError(t, s.Get(ctx, "", fmt.Sprintf("p-%02d", i), p, store.GetOptions{}))
		p.Spec.Description = "updated " + strconv.Itoa(i)
		require.NoError(t, s.Update(ctx, p, store.UpdateOptions{}))
	}
	for i := 15; i < 20; i++ {
		_, err := s.Delete(ctx, &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: fmt.Sprintf("p-p-%02d", i), Name: "vci"}}, store.DeleteOptions{})
		require.NoError(t, err)
	}
	before, listRV := summarize(t, s)
	rev, err := b.Revision(ctx)
	require.NoError(t, err)

	// The events a watch from the first update sees before the restart.
	watchFrom := before["project/p-00"].rv
	firstUpdate, err := strconv.ParseInt(watchFrom, 10, 64)
	require.NoError(t, err)
	eventsBefore := watchProjects(t, s, strconv.FormatInt(firstUpdate-1, 10), 10)

	require.NoError(t, s.Close())
	require.NoError(t, b.Close())

	b = open(t, dir, badger.Options{})
	s, err = store.New(b, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	after, listRVAfter := summarize(t, s)
	assert.Equal(t, before, after, "every object, with its uid, resourceVersion and generation, survives")
	assert.Equal(t, listRV, listRVAfter, "the list's resourceVersion too")
	revAfter, err := b.Revision(ctx)
	require.NoError(t, err)
	assert.Equal(t, rev, revAfter)
	assert.Equal(t, eventsBefore, watchProjects(t, s, strconv.FormatInt(firstUpdate-1, 10), 10),
		"a watch from a resourceVersion before the restart resumes with the same events")

	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "after-restart"}}
	require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
	n, err := strconv.ParseInt(p.ResourceVersion, 10, 64)
	require.NoError(t, err)
	assert.Equal(t, rev+1, n, "the revision goes on from where it was")
	for _, o := range before {
		assert.NotEqual(t, o.uid, p.UID, "uids are not reused")
	}
}

// watchProjects watches Projects from rv and returns the first n events, rendered.
func watchProjects(t *testing.T, s *store.Store, rv string, n int) []string {
	t.Helper()
	w, err := s.Watch(t.Context(), &resource.Project{}, store.WatchOptions{ResourceVersion: rv})
	require.NoError(t, err)
	defer w.Stop()
	var out []string
	for len(out) < n {
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*resource.Project)
			require.True(t, ok, "event %s %T", ev.Type, ev.Object)
			out = append(out, fmt.Sprintf("%s %s uid=%s rv=%s gen=%d %q", ev.Type, p.Name, p.UID, p.ResourceVersion, p.Generation, p.Spec.Description))
		case <-time.After(30 * time.Second):
			require.FailNow(t, "watch hangs")
		}
	}
	return out
}
