package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// TestAdmission_hook_reads_in_the_write_transaction checks that a hook's read through
// AdmissionRequest.Tx guards the write: a change of the object it read, made after the
// read and before the commit, makes the write run again (hook included) and see the
// change, so a rule spanning two objects cannot be slipped past by a concurrent writer.
func TestAdmission_hook_reads_in_the_write_transaction(t *testing.T) {
	ctx := context.Background()
	var s *store.Store
	var runs atomic.Int32
	hook := store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
		v, ok := req.Object.(*resource.VirtualClusterInstance)
		if !ok {
			return nil
		}
		require.NotNil(t, req.Tx)
		p := &resource.Project{}
		if err := req.Tx.Get("", "a", p); err != nil {
			return err
		}
		if runs.Add(1) == 1 {
			// A concurrent writer changes the project between the read and the commit.
			p.Spec.DisplayName = "closed"
			require.NoError(t, s.Update(context.Background(), p, store.UpdateOptions{}))
		}
		if p.Spec.DisplayName == "closed" {
			return resource.NewInvalid(req.Kind, v.Name, resource.ErrorList{
				resource.Forbidden(resource.NewPath("metadata", "namespace"), "project a is closed")})
		}
		return nil
	})
	s, _ = newMemStore(t, store.Options{Validating: []store.ValidatingAdmitter{hook}})
	require.NoError(t, s.Create(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a"}}, store.CreateOptions{}))

	err := s.Create(ctx, &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Namespace: "p-a", Name: "v"}},
		store.CreateOptions{})
	require.Error(t, err, "the write ran again and saw the closed project")
	assert.Equal(t, int32(2), runs.Load())
	assert.Equal(t, resource.ReasonInvalid, resource.ReasonOf(err), "%v", err)

	// A hook's own write through the Tx commits with the request's.
	s2, _ := newMemStore(t, store.Options{Mutating: []store.MutatingAdmitter{store.MutatingAdmitterFunc(
		func(_ context.Context, req *store.AdmissionRequest) error {
			if _, ok := req.Object.(*resource.Project); !ok || req.Operation != store.OperationCreate {
				return nil
			}
			return req.Tx.Create(&resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "for-" + req.Object.GetObjectMeta().Name},
				Spec: resource.AccessKeySpec{KeyHash: "sha256:00"}}, store.CreateOptions{})
		})}})
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "b"}}
	require.NoError(t, s2.Create(ctx, p, store.CreateOptions{}))
	k := &resource.AccessKey{}
	require.NoError(t, s2.Get(ctx, "", "for-b", k, store.GetOptions{}))
	assert.Equal(t, p.ResourceVersion, k.ResourceVersion, "one transaction, one revision")
}
