package token

import (
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/httpapi"
)

// expiresColumn prints an expiry time as an RFC 3339 time, nothing when there is none.
func expiresColumn(description string, at func(resource.Object) *time.Time) httpapi.Column {
	return httpapi.Column{Name: "Expires", Type: "string", Format: "date-time", Description: description,
		Value: func(o resource.Object) any {
			if t := at(o); t != nil {
				return *t
			}
			return nil
		}}
}

// AccessKeyColumns are the columns "kubectl get accesskeys" prints after NAME, for
// [httpapi.Resource].Columns: the subject, the expiry and the age.
func AccessKeyColumns() []httpapi.Column {
	return []httpapi.Column{
		{Name: "Subject", Type: "string", JSONPath: ".spec.subject", Description: "Who the key acts for."},
		expiresColumn("When the key expires (its creation plus spec.ttl); empty for a key without a TTL.",
			func(o resource.Object) *time.Time {
				k, ok := o.(*resource.AccessKey)
				if !ok || k.Spec.TTL <= 0 || k.CreationTimestamp.IsZero() {
					return nil
				}
				t := k.CreationTimestamp.Add(time.Duration(k.Spec.TTL) * time.Second)
				return &t
			}),
		httpapi.AgeColumn,
	}
}

// TokenColumns are the columns "kubectl get directclusterendpointtokens" prints after
// NAME, for [httpapi.Resource].Columns: the expiry and the age.
func TokenColumns() []httpapi.Column {
	return []httpapi.Column{
		expiresColumn("When the token expires (status.expirationTimestamp).", func(o resource.Object) *time.Time {
			tok, ok := o.(*resource.DirectClusterEndpointToken)
			if !ok || tok.Status.ExpirationTimestamp == nil {
				return nil
			}
			t := tok.Status.ExpirationTimestamp.Time
			return &t
		}),
		httpapi.AgeColumn,
	}
}
