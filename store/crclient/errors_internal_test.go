package crclient

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/management-service/mgmt/resource"
)

// Every reason of the store's errors answers the matching apierrors.IsXxx, however
// it was wrapped, with its code, causes and details kept.
func TestToAPIError(t *testing.T) {
	k := &resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"}
	tests := []struct {
		name string
		err  error
		is   func(error) bool
		code int32
	}{
		{"not found", resource.NewNotFound(k, "w"), apierrors.IsNotFound, 404},
		{"already exists", resource.NewAlreadyExists(k, "w"), apierrors.IsAlreadyExists, 409},
		{"conflict", resource.NewConflict(k, "w", "stale"), apierrors.IsConflict, 409},
		{"invalid", resource.NewInvalid(k, "w", resource.ErrorList{resource.Required(resource.NewPath("spec"), "x")}), apierrors.IsInvalid, 422},
		{"gone", resource.NewGone("old"), apierrors.IsGone, 410},
		{"expired", resource.NewExpired("old"), apierrors.IsResourceExpired, 410},
		{"bad request", resource.NewBadRequest("bad"), apierrors.IsBadRequest, 400},
		{"forbidden", resource.NewForbidden(k, "w", "no"), apierrors.IsForbidden, 403},
		{"unauthorized", resource.NewUnauthorized("who"), apierrors.IsUnauthorized, 401},
		{"method not allowed", resource.NewMethodNotAllowed(k, "create"), apierrors.IsMethodNotSupported, 405},
		{"too large", resource.NewRequestEntityTooLarge("big"), apierrors.IsRequestEntityTooLargeError, 413},
		{"unsupported media type", resource.NewUnsupportedMediaType("x/y"), apierrors.IsUnsupportedMediaType, 415},
		{"too many requests", resource.NewTooManyRequests("slow", 3), apierrors.IsTooManyRequests, 429},
		{"internal", resource.NewInternalError(errors.New("boom")), apierrors.IsInternalError, 500},
		{"unavailable", resource.NewServiceUnavailable("down"), apierrors.IsServiceUnavailable, 503},
		{"timeout", resource.NewTimeout("slow"), apierrors.IsTimeout, 504},
		{"wrapped", fmt.Errorf("ctx: %w", resource.NewNotFound(k, "w")), apierrors.IsNotFound, 404},
		{"a bare sentinel", resource.ErrConflict, apierrors.IsConflict, 409},
		{"a context deadline", context.DeadlineExceeded, apierrors.IsTimeout, 504},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := toAPIError(tt.err)
			assert.True(t, tt.is(err), "%v", err)
			var se *apierrors.StatusError
			if assert.ErrorAs(t, err, &se) {
				assert.Equal(t, tt.code, se.ErrStatus.Code)
			}
		})
	}
	inv := toAPIError(resource.NewInvalid(k, "w", resource.ErrorList{resource.Required(resource.NewPath("spec", "size"), "needed")}))
	var se *apierrors.StatusError
	assert.ErrorAs(t, inv, &se)
	if assert.NotNil(t, se.ErrStatus.Details) && assert.Len(t, se.ErrStatus.Details.Causes, 1) {
		assert.Equal(t, "spec.size", se.ErrStatus.Details.Causes[0].Field)
		assert.Equal(t, "w", se.ErrStatus.Details.Name)
	}
	assert.Nil(t, toAPIError(nil))
	plain := errors.New("not a status")
	assert.Same(t, plain, toAPIError(plain), "errors of the client's own pass as they are")
}
