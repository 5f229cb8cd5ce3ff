package store_test

import (
	"context"
	"errors"
	"fmt"
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
