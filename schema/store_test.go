package schema_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// TestStoreRunsTheSchemaOnEveryWrite wires the admission hook into the real store and
// checks that what the store writes passes the schemas, and that every write path
// (create, update, status update, dry runs) refuses an invalid object before storing it.
func TestStoreRunsTheSchemaOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	f := storetest.NewFixture(t, &store.Options{Validating: []store.ValidatingAdmitter{schema.NewAdmitter(nil)}})

	project := &resource.Project{Spec: resource.ProjectSpec{DisplayName: "A", AllowedClusters: []resource.AllowedCluster{{Name: "*"}}}}
	project.Name = "team-a"
	instance := &resource.VirtualClusterInstance{Spec: resource.VirtualClusterInstanceSpec{ClusterRef: resource.ClusterRef{Cluster: "c-1"}}}
	instance.Name, instance.Namespace = "vc-1", "p-team-a"
	instance.Labels = map[string]string{resource.LabelProject: "team-a"}
	key := &resource.AccessKey{Spec: resource.AccessKeySpec{Subject: "alice", KeyHash: "h", TTL: 60}}
	key.GenerateName = "key-"
	token := &resource.DirectClusterEndpointToken{Spec: resource.DirectClusterEndpointTokenSpec{TTL: 60, Scope: &resource.AccessKeyScope{
		Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}},
	}}}
	token.Name = "tok"

	t.Run("accepts what the store writes on create", func(t *testing.T) {
		for _, obj := range []resource.Object{project, instance, key, token} {
			require.NoError(t, f.Create(ctx, obj, store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: "test"}}))
		}
	})
	t.Run("accepts what the store writes on update and status update", func(t *testing.T) {
		instance.Spec.DisplayName = "renamed"
		require.NoError(t, f.Update(ctx, instance, store.UpdateOptions{}))
		instance.Status.Phase = resource.InstancePhaseReady
		require.NoError(t, f.UpdateStatus(ctx, instance, store.UpdateOptions{}))
	})

	bad := &resource.DirectClusterEndpointToken{Spec: resource.DirectClusterEndpointTokenSpec{Scope: &resource.AccessKeyScope{
		Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get*"}}},
	}}}
	bad.Name = "bad"
	for _, dry := range []bool{false, true} {
		name := "create"
		if dry {
			name = "dry-run create"
		}
		t.Run("refuses an invalid object on "+name, func(t *testing.T) {
			obj, err := resource.DeepCopy(bad)
			require.NoError(t, err)
			err = f.Create(ctx, obj, store.CreateOptions{WriteOptions: store.WriteOptions{DryRun: dry}})
			require.ErrorIs(t, err, resource.ErrInvalid)
			st := resource.StatusOf(err)
			require.Equal(t, "spec.scope.rules[0].verbs[0]", st.Details.Causes[0].Field)
			require.ErrorIs(t, f.Get(ctx, "", "bad", &resource.DirectClusterEndpointToken{}, store.GetOptions{}), resource.ErrNotFound)
		})
	}
	t.Run("refuses an invalid update and keeps the stored object", func(t *testing.T) {
		update := *project
		update.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "prod-*"}}
		err := f.Update(ctx, &update, store.UpdateOptions{})
		require.ErrorIs(t, err, resource.ErrInvalid)
		require.Equal(t, "spec.allowedClusters[0].name", resource.StatusOf(err).Details.Causes[0].Field)
		var stored resource.Project
		require.NoError(t, f.Get(ctx, "", "team-a", &stored, store.GetOptions{}))
		require.Equal(t, "*", stored.Spec.AllowedClusters[0].Name)
	})
	t.Run("refuses an invalid status update", func(t *testing.T) {
		update := *instance
		update.Status.Phase = "Running"
		err := f.UpdateStatus(ctx, &update, store.UpdateOptions{})
		require.ErrorIs(t, err, resource.ErrInvalid)
		require.Equal(t, "status.phase", resource.StatusOf(err).Details.Causes[0].Field)
	})
	t.Run("refuses an invalid dry-run update", func(t *testing.T) {
		update := *project
		update.Spec.Owner = &resource.Owner{}
		update.Spec.AllowedClusters = []resource.AllowedCluster{{Name: "A"}}
		err := f.Update(ctx, &update, store.UpdateOptions{WriteOptions: store.WriteOptions{DryRun: true}})
		require.ErrorIs(t, err, resource.ErrInvalid)
	})
}
