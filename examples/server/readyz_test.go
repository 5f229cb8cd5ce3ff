package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/management-service/mgmt/examples/server/internal/app"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// failingRevision is a memdb backend whose Revision fails while fail is set.
type failingRevision struct {
	*memdb.Backend
	fail atomic.Bool
}

func (b *failingRevision) Revision(ctx context.Context) (int64, error) {
	if b.fail.Load() {
		return 0, errors.New("injected backend failure")
	}
	return b.Backend.Revision(ctx)
}

// TestReadyz_follows_the_store_health checks that /readyz answers 503 while the
// store's health check fails, and ok again once it passes.
func TestReadyz_follows_the_store_health(t *testing.T) {
	b := &failingRevision{Backend: memdb.New(memdb.Options{})}
	ts := startServer(t, func(o *app.Options) {
		o.Storage = &app.Storage{Open: func(context.Context, app.Options) (backend.Backend, store.Elector, error) {
			return b, nil, nil
		}}
	})
	ready := func() response {
		return ts.serve(req{method: "GET", path: "/readyz", headers: map[string]string{"Authorization": ""}})
	}
	expectStatus(t, ready(), 200, "healthy")
	b.fail.Store(true)
	expectStatus(t, ready(), 503, "backend failing")
	b.fail.Store(false)
	expectStatus(t, ready(), 200, "healthy again")
}
