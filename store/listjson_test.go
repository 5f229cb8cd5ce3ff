package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// listWithRaw lists the store's projects and collects their stored bytes from the
// backend at the list's revision, as the list's own reads would.
func listWithRaw(t testing.TB, s *Store, b backend.Backend) (*resource.ProjectList, *RawItems) {
	ctx := context.Background()
	list := &resource.ProjectList{}
	raw, err := s.ListRaw(ctx, list, ListOptions{})
	require.NoError(t, err)
	if len(raw.items) == 0 { // the list does not collect them (yet): read them
		rev, err := parseRV(list.ResourceVersion)
		require.NoError(t, err)
		res, err := b.Range(ctx, backend.RangeOptions{Prefix: nsPrefix(raw.k, ""), Revision: rev})
		require.NoError(t, err)
		for _, kv := range res.KVs {
			raw.add(kv.Value, kv.ModRevision)
		}
	}
	return list, raw
}

func seedProjects(t testing.TB, s *Store, n int) {
	for i := range n {
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: fmt.Sprintf("p%04d", i),
			Labels: map[string]string{"i": fmt.Sprint(i % 3)}, Annotations: map[string]string{"html": "<b>&"}},
			Spec: resource.ProjectSpec{Description: strings.Repeat("d", 700)}}
		require.NoError(t, s.Create(context.Background(), p, CreateOptions{}))
	}
}

// TestAppendListJSON_writes_what_json_Marshal_writes checks lists written from the
// stored bytes, and from the objects, against json.Marshal: whole, with items
// dropped after the list was filled, with bytes that do not belong to the items, and
// empty.
func TestAppendListJSON_writes_what_json_Marshal_writes(t *testing.T) {
	s, b := newTestStore(t, Options{})
	seedProjects(t, s, 30)
	list, raw := listWithRaw(t, s, b)
	require.Len(t, raw.items, 30)
	check := func(t *testing.T, list *resource.ProjectList, raw *RawItems) {
		t.Helper()
		want, err := json.Marshal(list)
		require.NoError(t, err)
		got, err := AppendListJSON(nil, list, raw)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
	t.Run("from the stored bytes", func(t *testing.T) { check(t, list, raw) })
	t.Run("from the objects", func(t *testing.T) { check(t, list, nil) })
	t.Run("items dropped after the list was filled", func(t *testing.T) {
		kept := *list
		kept.Items = nil
		for i, it := range list.Items {
			if i%4 != 1 {
				kept.Items = append(kept.Items, it)
			}
		}
		check(t, &kept, raw)
	})
	t.Run("bytes of other objects are not used", func(t *testing.T) {
		other := &RawItems{k: raw.k}
		for _, ri := range raw.items {
			other.add(bytes.Replace(ri.data, []byte(`"description":"d`), []byte(`"description":"X`), 1), ri.rev+1)
		}
		check(t, list, other)
	})
	t.Run("empty", func(t *testing.T) {
		check(t, &resource.ProjectList{TypeMeta: list.TypeMeta, ListMeta: list.ListMeta}, raw)
		check(t, &resource.ProjectList{TypeMeta: list.TypeMeta, Items: []resource.Project{}}, raw)
	})
}

// BenchmarkListJSON measures the encoding of a list of 1,000 ~1 KB projects: with
// encoding/json's Encoder (as the HTTP layer writes lists), with AppendListJSON
// without stored bytes (its fallback, json.Marshal), and from the stored bytes.
func BenchmarkListJSON(b *testing.B) {
	s, be := newTestStore(b, Options{})
	seedProjects(b, s, 1000)
	list, raw := listWithRaw(b, s, be)
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			require.NoError(b, enc.Encode(list))
		}
	})
	b.Run("no stored bytes (json.Marshal)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, err := AppendListJSON(nil, list, nil)
			require.NoError(b, err)
		}
	})
	b.Run("stored bytes", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			buf, err = AppendListJSON(buf[:0], list, raw)
			require.NoError(b, err)
		}
	})
}
