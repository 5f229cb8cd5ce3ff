package httpapi

import (
	"context"

	"github.com/management-service/mgmt/resource"
)

// testResources are the management API's resources, with creates that only echo
// their object: enough to route, document and discover them.
func testResources() []Resource {
	echo := func(_ context.Context, req *CreateRequest) (resource.Object, error) { return req.Object, nil }
	g, v := resource.Group, resource.Version
	return []Resource{
		{Group: g, Version: v, Resource: "projects", ShortNames: []string{"proj"},
			Subresources: []Subresource{{Name: "migratevirtualclusterinstance", Create: echo}}},
		{Group: g, Version: v, Resource: "virtualclusterinstances"},
		{Group: g, Version: v, Resource: "accesskeys", Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update"}},
		{Group: g, Version: v, Resource: "directclusterendpointtokens", Verbs: []string{"create", "delete", "deletecollection", "get", "list"}, Create: echo},
	}
}
