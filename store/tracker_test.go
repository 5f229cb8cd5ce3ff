package store_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// TestTracker_sees_the_writes_of_other_stores checks the index of a store (served by
// label-selector lists) over writes of its own, whose summaries it takes from the
// write, and of another store on the same backend, whose values it decodes, also
// when both write the same key.
func TestTracker_sees_the_writes_of_other_stores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := newMemStore(t, store.Options{})
	other, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer other.Close()

	names := func(s *store.Store, selector string) []string {
		t.Helper()
		require.NoError(t, s.Settle(ctx))
		l := &resource.ProjectList{}
		require.NoError(t, s.List(ctx, l, store.ListOptions{LabelSelector: selector}))
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		return out
	}
	pa := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", Labels: map[string]string{"team": "red"}}}
	require.NoError(t, a.Create(ctx, pa, store.CreateOptions{}))
	pb := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b", Labels: map[string]string{"team": "red"}}}
	require.NoError(t, other.Create(ctx, pb, store.CreateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"a", "b"}, names(s, "team=red"))
	}
	// The other store changes a's object, then a changes it back and again.
	got := &resource.Project{}
	require.NoError(t, other.Get(ctx, "", "a", got, store.GetOptions{}))
	got.Labels["team"] = "blue"
	require.NoError(t, other.Update(ctx, got, store.UpdateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"b"}, names(s, "team=red"))
		assert.Equal(t, []string{"a"}, names(s, "team=blue"))
	}
	require.NoError(t, a.Get(ctx, "", "a", pa, store.GetOptions{}))
	pa.Labels["team"] = "red"
	require.NoError(t, a.Update(ctx, pa, store.UpdateOptions{}))
	pa.Labels["team"] = "green"
	require.NoError(t, a.Update(ctx, pa, store.UpdateOptions{}))
	for _, s := range []*store.Store{a, other} {
		assert.Equal(t, []string{"b"}, names(s, "team=red"))
		assert.Equal(t, []string{"a"}, names(s, "team=green"))
		assert.Empty(t, names(s, "team=blue"))
	}
	assert.Empty(t, store.ResultProblems())
}

// TestTracker_recovers_when_its_watch_falls_behind holds the tracker's watch back
// (a slow consumer) until the backend no longer keeps what it needs next, and keeps
// writing while the tracker rebuilds its index, more revisions per page of its scan
// than the backend keeps: the index must recover, with no write lost, and the store
// must say it is healthy again.
func TestTracker_recovers_when_its_watch_falls_behind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mem := memdb.New(memdb.Options{HistoryRevisions: 50})
	defer mem.Close()
	fb := &faultBackend{Backend: mem}
	s, err := store.New(fb, store.Options{})
	require.NoError(t, err)
	defer s.Close()

	const n = 1500
	team := map[string]string{}
	setTeam := func(name, value string) {
		t.Helper()
		p := &resource.Project{}
		err := s.Get(ctx, "", name, p, store.GetOptions{})
		if errors.Is(err, resource.ErrNotFound) {
			p = &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name, Labels: map[string]string{"team": value}}}
			require.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
		} else {
			require.NoError(t, err)
			p.Labels["team"] = value
			require.NoError(t, s.Update(ctx, p, store.UpdateOptions{}))
		}
		team[name] = value
	}
	for i := range n {
		setTeam(fmt.Sprintf("p%04d", i), "red")
	}
	require.NoError(t, s.Settle(ctx))

	// The tracker's watch is held back while more than the kept history is written.
	// (The backend's watcher holds a batch of events besides its channel: write
	// well past both.)
	fb.hold()
	for i := range 700 {
		setTeam(fmt.Sprintf("p%04d", i), "blue")
	}
	// While it rebuilds, every page of its scan is followed by more writes than the
	// backend keeps, and a delete.
	var mu sync.Mutex
	pages := 0
	fb.setAfterScan(func(backend.RangeOptions) {
		mu.Lock()
		defer mu.Unlock()
		if pages++; pages > 4 {
			return
		}
		for i := range 60 {
			setTeam(fmt.Sprintf("p%04d", n-1-i), "green")
		}
		// A key the first page covers changes, after that page was read.
		setTeam(fmt.Sprintf("p%04d", pages), "yellow")
		name := fmt.Sprintf("p%04d", 200+pages)
		_, err := s.Delete(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}, store.DeleteOptions{})
		require.NoError(t, err)
		delete(team, name)
	})
	fb.release()

	require.NoError(t, s.Settle(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.Positive(t, pages, "the tracker rebuilt its index")
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, len(team), st.Objects, "no deleted object left in the index")
	for _, value := range []string{"red", "blue", "green", "yellow"} {
		var want []string
		for name, v := range team {
			if v == value {
				want = append(want, name)
			}
		}
		sort.Strings(want)
		l := &resource.ProjectList{}
		require.NoError(t, s.List(ctx, l, store.ListOptions{LabelSelector: "team=" + value}))
		var got []string
		for _, p := range l.Items {
			got = append(got, p.Name)
		}
		assert.Equal(t, want, got, value)
	}
	assert.NoError(t, s.Healthy(ctx))
}
