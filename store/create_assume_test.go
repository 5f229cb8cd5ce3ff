package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/store/storetest"
)

// TestCreate_without_the_read_answers_as_with_it runs the same creates through
// Store.Create (which assumes a name free without reading it) and through Tx.Create
// in a transaction of its own (which reads it first), on two stores with the same
// uid source and clock, and expects the same answers, uids and revisions: duplicates,
// duplicates of a terminating object, and duplicates that fail later checks too.
func TestCreate_without_the_read_answers_as_with_it(t *testing.T) {
	for _, retries := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxUpdateRetries=%d", retries), func(t *testing.T) {
			ctx := context.Background()
			open := func() *store.Store {
				be := memdb.New(memdb.Options{})
				n := 0
				s, err := store.New(be, store.Options{
					Clock:            storetest.NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)),
					NewUID:           func() string { n++; return fmt.Sprintf("uid-%d", n) },
					MaxObjectBytes:   4000,
					MaxUpdateRetries: retries,
				})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close(); _ = be.Close() })
				return s
			}
			direct, inTxn := open(), open()
			create := func(s *store.Store, viaTxn bool, obj resource.Object, opts store.CreateOptions) error {
				if viaTxn {
					return s.Txn(ctx, store.TxnOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error { return tx.Create(obj, opts) })
				}
				return s.Create(ctx, obj, opts)
			}
			project := func(name string) *resource.Project {
				return &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name}}
			}
			steps := []struct {
				name string
				obj  func() resource.Object
				opts store.CreateOptions
				then func(s *store.Store)
			}{
				{name: "new", obj: func() resource.Object { return project("a") }},
				{name: "duplicate", obj: func() resource.Object { return project("a") }},
				{name: "duplicate dry run", obj: func() resource.Object { return project("a") }, opts: store.CreateOptions{WriteOptions: store.WriteOptions{DryRun: true}}},
				{name: "duplicate with a bad field manager", obj: func() resource.Object { return project("a") },
					opts: store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: strings.Repeat("m", 200)}}},
				{name: "duplicate too large", obj: func() resource.Object {
					p := project("a")
					p.Annotations = map[string]string{"big": strings.Repeat("x", 5000)}
					return p
				}},
				{name: "new with a bad field manager", obj: func() resource.Object { return project("b") },
					opts: store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: strings.Repeat("m", 200)}}},
				{name: "new too large", obj: func() resource.Object {
					p := project("b")
					p.Annotations = map[string]string{"big": strings.Repeat("x", 5000)}
					return p
				}},
				{name: "held", obj: func() resource.Object {
					p := project("held")
					p.Finalizers = []string{"example.com/hold"}
					return p
				}, then: func(s *store.Store) {
					_, err := s.Delete(ctx, project("held"), store.DeleteOptions{})
					require.NoError(t, err)
				}},
				{name: "duplicate of a terminating object", obj: func() resource.Object { return project("held") }},
				{name: "new after", obj: func() resource.Object { return project("c") }},
				{name: "generated", obj: func() resource.Object {
					return &resource.Project{ObjectMeta: resource.ObjectMeta{GenerateName: "g-"}}
				}},
			}
			for _, st := range steps {
				var results [2]resource.Object
				var errs [2]error
				for i, s := range []*store.Store{direct, inTxn} {
					obj := st.obj()
					errs[i] = create(s, i == 1, obj, st.opts)
					results[i] = obj
					if st.then != nil {
						st.then(s)
					}
				}
				if errs[1] != nil {
					require.Error(t, errs[0], st.name)
					assert.Equal(t, errs[1].Error(), errs[0].Error(), st.name)
					continue
				}
				require.NoError(t, errs[0], st.name)
				m0, m1 := results[0].GetObjectMeta(), results[1].GetObjectMeta()
				if st.obj().GetObjectMeta().GenerateName == "" {
					assert.Equal(t, m1.Name, m0.Name, st.name)
				}
				assert.Equal(t, m1.UID, m0.UID, st.name)
				assert.Equal(t, m1.ResourceVersion, m0.ResourceVersion, st.name)
				assert.Equal(t, m1.CreationTimestamp, m0.CreationTimestamp, st.name)
			}
		})
	}
}
