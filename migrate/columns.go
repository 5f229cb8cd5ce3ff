package migrate

import (
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/httpapi"
)

// ProjectColumns are the columns "kubectl get projects" prints after NAME, for
// [httpapi.Resource].Columns: the display name and the age.
func ProjectColumns() []httpapi.Column {
	return []httpapi.Column{
		{Name: "Display Name", Type: "string", JSONPath: ".spec.displayName", Description: "The project's human-readable name."},
		httpapi.AgeColumn,
	}
}

// InstanceColumns are the columns "kubectl get virtualclusterinstances" prints after
// NAME, for [httpapi.Resource].Columns: the project (from the namespace, prefix +
// project), the cluster, the phase and the age.
func InstanceColumns(prefix string) []httpapi.Column {
	return []httpapi.Column{
		{Name: "Project", Type: "string", Description: "The project the instance belongs to (its namespace's).",
			Value: func(o resource.Object) any {
				if p, ok := strings.CutPrefix(o.GetObjectMeta().Namespace, prefix); ok && p != "" {
					return p
				}
				return nil
			}},
		{Name: "Cluster", Type: "string", JSONPath: ".spec.clusterRef.cluster", Description: "The connected cluster the instance runs on."},
		{Name: "Phase", Type: "string", JSONPath: ".status.phase", Description: "The instance's phase."},
		httpapi.AgeColumn,
	}
}
