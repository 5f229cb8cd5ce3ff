package migrate

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/httpapi"
)

// SubresourceName is the subresource of projects a move is posted to:
// POST …/projects/<target>/migratevirtualclusterinstance.
const SubresourceName = "migratevirtualclusterinstance"

// Subresource returns the move as the migratevirtualclusterinstance subresource of
// projects, for an httpapi server: the project on the URL is the target, and
// authorizer gives the rights of the request's caller (nil: none, every move 403).
func (s *Service) Subresource(authorizer func(user *store.UserInfo) Authorizer) httpapi.Subresource {
	return httpapi.Subresource{
		Name:        SubresourceName,
		Description: "move a VirtualClusterInstance into the project {name}",
		Create: func(ctx context.Context, req *httpapi.CreateRequest) (resource.Object, error) {
			body, ok := req.Object.(*resource.ProjectMigrateVirtualClusterInstance)
			if !ok {
				return nil, resource.NewInternalError(fmt.Errorf("migrate: decoded %T for a move", req.Object))
			}
			c := Caller{User: req.Write.User}
			if authorizer != nil {
				c.Authorizer = authorizer(req.Write.User)
			}
			return s.Migrate(ctx, req.Name, body, c, RequestOptions{DryRun: req.Write.DryRun, FieldManager: req.Write.FieldManager})
		},
	}
}
