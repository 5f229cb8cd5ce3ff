package badger_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// TestGet_CachedObjectOnlyWhenCurrent runs two stores on one backend. Each serves a
// Get from its object cache once the backend's head says the cached version is the
// current one (backend.HeadGetter); a write through the other store makes the
// cached version stale, and the read must then see the write, a deletion and a new
// object under the same name included.
func TestGet_CachedObjectOnlyWhenCurrent(t *testing.T) {
	b, err := badger.Open("", badger.Options{InMemory: true})
	require.NoError(t, err)
	defer b.Close()
	writer, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer writer.Close()
	reader, err := store.New(b, store.Options{})
	require.NoError(t, err)
	defer reader.Close()
	ctx := t.Context()

	get := func() (*resource.Project, error) {
		p := &resource.Project{}
		return p, reader.Get(ctx, "", "p", p, store.GetOptions{})
	}
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "p"}, Spec: resource.ProjectSpec{Description: "one"}}
	require.NoError(t, writer.Create(ctx, p, store.CreateOptions{}))
	for range 2 { // the second read is served from the cache the first filled
		got, err := get()
		require.NoError(t, err)
		assert.Equal(t, "one", got.Spec.Description)
		assert.Equal(t, p.ResourceVersion, got.ResourceVersion)
	}

	p.Spec.Description = "two"
	require.NoError(t, writer.Update(ctx, p, store.UpdateOptions{}))
	got, err := get()
	require.NoError(t, err)
	assert.Equal(t, "two", got.Spec.Description)
	assert.Equal(t, p.ResourceVersion, got.ResourceVersion)

	_, err = writer.Delete(ctx, p, store.DeleteOptions{})
	require.NoError(t, err)
	_, err = get()
	require.ErrorIs(t, err, resource.ErrNotFound)

	again := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "p"}, Spec: resource.ProjectSpec{Description: "three"}}
	require.NoError(t, writer.Create(ctx, again, store.CreateOptions{}))
	got, err = get()
	require.NoError(t, err)
	assert.Equal(t, "three", got.Spec.Description)
	assert.Equal(t, again.UID, got.UID)
	assert.NotEqual(t, p.UID, got.UID)

	// A change to the returned object does not reach the cache.
	got.Spec.Description = "changed by the caller"
	got, err = get()
	require.NoError(t, err)
	assert.Equal(t, "three", got.Spec.Description)
}
