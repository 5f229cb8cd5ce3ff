package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// FuzzApplyTwice applies arbitrary configurations to a Project: Apply never panics,
// fails only with a Status error, and applying a configuration that was accepted a
// second time changes nothing (same resourceVersion, same object).
func FuzzApplyTwice(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"displayName":"A"}}`,
		`{"metadata":{"labels":{"a":"b"},"finalizers":["example.com/a","example.com/b"]},"spec":{"allowedClusters":[{"name":"c1"},{"name":"c2"}]}}`,
		`{"spec":{"allowedClusters":[{"name":"c1"},{"name":"c1"}]}}`,
		`{"spec":{"owner":{"user":"u","team":"t"},"description":""}}`,
		`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u1"}]}}`,
		`{"spec":null}`, `[]`, `{"spec":{"nope":1}}`, `{"metadata":{"name":"other"}}`,
	} {
		f.Add(seed)
	}
	fx := storetest.NewFixture(f, &store.Options{FieldTypes: storetest.ApplyFieldTypes{}})
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, config string) {
		n++
		name := fmt.Sprintf("p%d", n)
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
		_, err := fx.Apply(ctx, p, []byte(config), store.ApplyOptions{WriteOptions: store.WriteOptions{FieldManager: "fuzz"}})
		if err != nil {
			var se *resource.StatusError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.NotEqual(t, resource.ReasonInternalError, se.ErrStatus.Reason, "%v", err)
			return
		}
		q := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
		created, err := fx.Apply(ctx, q, []byte(config), store.ApplyOptions{WriteOptions: store.WriteOptions{FieldManager: "fuzz"}})
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, p.ResourceVersion, q.ResourceVersion, "applying twice writes once: %s", config)
		assert.Equal(t, p, q)
		if len(p.Finalizers) > 0 {
			p.Finalizers = nil
			_ = fx.Update(ctx, p, store.UpdateOptions{})
		}
	})
}

// FuzzApplyConfigTwice builds valid-looking Project configurations from the fuzzed
// values (labels, spec fields, allowedClusters, finalizers, by a mask) and applies
// each twice, by one manager after another's configuration: the second apply of
// the same configuration must change nothing.
func FuzzApplyConfigTwice(f *testing.F) {
	f.Add(uint16(0xffff), "app", "A", "c1,c2", "example.com/f")
	f.Add(uint16(0x15), "", "", "c1,c1", "")
	f.Add(uint16(0x2a), "team", "x\u00fc", "*", "a/b,a/b")
	fx := storetest.NewFixture(f, &store.Options{FieldTypes: storetest.ApplyFieldTypes{}})
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, mask uint16, key, value, clusters, finalizers string) {
		n++
		name := fmt.Sprintf("q%d", n)
		build := func(mask uint16) []byte {
			meta := map[string]any{"name": name}
			spec := map[string]any{}
			if mask&1 != 0 {
				meta["labels"] = map[string]any{key: value}
			}
			if mask&2 != 0 {
				meta["annotations"] = map[string]any{"a": value}
			}
			if mask&4 != 0 {
				spec["displayName"] = value
			}
			if mask&8 != 0 {
				spec["owner"] = map[string]any{"user": key}
			}
			if mask&16 != 0 {
				var l []any
				for _, c := range strings.Split(clusters, ",") {
					l = append(l, map[string]any{"name": c})
				}
				spec["allowedClusters"] = l
			}
			if mask&32 != 0 && finalizers != "" {
				meta["finalizers"] = strings.Split(finalizers, ",")
			}
			cfg := map[string]any{"apiVersion": "management.service/v1", "kind": "Project", "metadata": meta}
			if mask&64 != 0 || len(spec) > 0 {
				cfg["spec"] = spec
			}
			b, err := json.Marshal(cfg)
			require.NoError(t, err)
			return b
		}
		opts := func(m string) store.ApplyOptions {
			return store.ApplyOptions{WriteOptions: store.WriteOptions{FieldManager: m}, Force: true}
		}
		p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
		if _, err := fx.Apply(ctx, p, build(mask>>8), opts("first")); err != nil {
			requireStatus(t, err)
			return
		}
		cfg := build(mask)
		if _, err := fx.Apply(ctx, p, cfg, opts("second")); err != nil {
			requireStatus(t, err)
		} else {
			q := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
			_, err := fx.Apply(ctx, q, cfg, opts("second"))
			require.NoError(t, err)
			assert.Equal(t, p.ResourceVersion, q.ResourceVersion, "applying twice writes once: %s", cfg)
			assert.Equal(t, p, q)
		}
		got := &resource.Project{}
		require.NoError(t, fx.Get(ctx, "", name, got, store.GetOptions{}))
		if len(got.Finalizers) > 0 {
			got.Finalizers = nil
			got.ManagedFields = nil
			require.NoError(t, fx.Update(ctx, got, store.UpdateOptions{}))
		}
	})
}

// requireStatus fails unless err is a Status error other than an internal one.
func requireStatus(t *testing.T, err error) {
	t.Helper()
	var se *resource.StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	require.NotEqual(t, resource.ReasonInternalError, se.ErrStatus.Reason, "%v", err)
}
