package migrate_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/migrate"
	"github.com/management-service/mgmt/migrate/migratetest"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// admissionLog records the writes admission hooks see.
type admissionLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *admissionLog) Validate(_ context.Context, req *store.AdmissionRequest) error {
	obj := req.Object
	if obj == nil {
		obj = req.OldObject
	}
	m := obj.GetObjectMeta()
	user := ""
	if req.User != nil {
		user = req.User.Name
	}
	op := string(req.Operation) + " " + req.Kind.Kind + " " + m.Namespace + "/" + m.Name
	if req.Subresource != "" {
		op += "/" + req.Subresource
	}
	l.mu.Lock()
	l.ops = append(l.ops, op+" by "+user)
	l.mu.Unlock()
	return nil
}

// The host's admission hooks (the schema validator among them) see every write of a
// move, with the caller as user, and the objects of a move conform to the schemas.
func TestMigrate_AdmissionSeesTheCallerAndSchemasHold(t *testing.T) {
	log := &admissionLog{}
	s := storetest.NewFixture(t, &store.Options{Validating: []store.ValidatingAdmitter{schema.NewAdmitter(nil), log}}).Store
	e := migratetest.NewEnv(t, s)
	log.ops = nil
	who := migratetest.ScopedCaller(nil)
	who.User = &store.UserInfo{Name: "alice"}
	_, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), who, migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"DELETE VirtualClusterInstance p-a/dev by alice",
		"CREATE VirtualClusterInstance p-b/dev by alice",
		"UPDATE VirtualClusterInstance p-b/dev/status by alice",
		"CREATE ProjectMigrateVirtualClusterInstance /b.mv by alice",
	}, log.ops)
}

// A refusal of an admission hook aborts the whole move.
func TestMigrate_AdmissionRefusalChangesNothing(t *testing.T) {
	refuse := store.ValidatingAdmitterFunc(func(_ context.Context, req *store.AdmissionRequest) error {
		if req.Kind.Kind == resource.KindProjectMigrateVirtualClusterInstance {
			return resource.NewForbidden(req.Kind, "", "records are read-only today")
		}
		return nil
	})
	s := storetest.NewFixture(t, &store.Options{Validating: []store.ValidatingAdmitter{refuse}}).Store
	e := migratetest.NewEnv(t, s)
	before, rev := e.State(), e.Revision()
	_, err := e.Service.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{})
	storetest.RequireReason(t, err, resource.ReasonForbidden)
	assert.Equal(t, rev, e.Revision())
	assert.Equal(t, before, e.State())
}

// The service logs one line per move, none per refusal or dry run.
func TestMigrate_Logger(t *testing.T) {
	var buf bytes.Buffer
	s := storetest.NewFixture(t, nil).Store
	e := migratetest.NewEnv(t, s)
	svc, err := migrate.New(s, migrate.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	_, err = svc.Migrate(e.Ctx, "b", migratetest.Request("dry", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{DryRun: true})
	require.NoError(t, err)
	_, err = svc.Migrate(e.Ctx, "nope", migratetest.Request("x", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{})
	require.Error(t, err)
	assert.Empty(t, buf.String())
	_, err = svc.Migrate(e.Ctx, "b", migratetest.Request("mv", "p-a", "dev"), migratetest.Admin(), migrate.RequestOptions{})
	require.NoError(t, err)
	assert.Contains(t, buf.String(), `msg="migrated virtual cluster instance" migration=mv from=p-a/dev to=p-b/dev`)
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")))
}

// A nil request and an invalid scope are refused.
func TestMigrate_BadArguments(t *testing.T) {
	e := migratetest.NewEnv(t, storetest.NewFixture(t, nil).Store)
	_, err := e.Service.Migrate(e.Ctx, "b", nil, migratetest.Admin(), migrate.RequestOptions{})
	storetest.RequireReason(t, err, resource.ReasonBadRequest)
	_, err = migrate.ScopeAuthorizer(&resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{ResourceNames: []string{"x"}}}})
	assert.Error(t, err)
}
