package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func projectKind(t *testing.T) *resource.KindInfo {
	t.Helper()
	k, ok := resource.NewScheme().KindFor(resource.GroupVersion, resource.KindProject)
	require.True(t, ok)
	return k
}

func TestStatusConstructors(t *testing.T) {
	k := projectKind(t)
	fieldErrs := resource.ErrorList{resource.Required(resource.NewPath("metadata", "name"), "name is required")}
	tests := []struct {
		name     string
		err      *resource.StatusError
		reason   resource.StatusReason
		code     int32
		sentinel error
		message  string
	}{
		{"NotFound is 404", resource.NewNotFound(k, "a"), resource.ReasonNotFound, 404, resource.ErrNotFound,
			`projects.management.service "a" not found`},
		{"AlreadyExists is 409", resource.NewAlreadyExists(k, "a"), resource.ReasonAlreadyExists, 409, resource.ErrAlreadyExists,
			`projects.management.service "a" already exists`},
		{"a generateName conflict is 409 AlreadyExists", resource.NewGenerateNameConflict(k, "a-", 1), resource.ReasonAlreadyExists, 409,
			resource.ErrAlreadyExists, "not able to generate a unique name"},
		{"Conflict is 409", resource.NewConflict(k, "a", resource.OptimisticLockMessage), resource.ReasonConflict, 409, resource.ErrConflict,
			`Operation cannot be fulfilled on projects.management.service "a": the object has been modified`},
		{"Invalid is 422", resource.NewInvalid(k, "a", fieldErrs), resource.ReasonInvalid, 422, resource.ErrInvalid,
			`Project.management.service "a" is invalid: metadata.name: Required value: name is required`},
		{"BadRequest is 400", resource.NewBadRequest("bad"), resource.ReasonBadRequest, 400, resource.ErrBadRequest, "bad"},
		{"Unauthorized is 401", resource.NewUnauthorized(""), resource.ReasonUnauthorized, 401, resource.ErrUnauthorized, "Unauthorized"},
		{"Forbidden is 403", resource.NewForbidden(k, "a", "no"), resource.ReasonForbidden, 403, resource.ErrForbidden,
			`projects.management.service "a" is forbidden: no`},
		{"MethodNotAllowed is 405", resource.NewMethodNotAllowed(k, "patch"), resource.ReasonMethodNotAllowed, 405,
			resource.ErrMethodNotAllowed, "patch is not supported"},
		{"NotAcceptable is 406", resource.NewNotAcceptable("text/html"), resource.ReasonNotAcceptable, 406, resource.ErrNotAcceptable,
			"text/html"},
		{"Expired is 410", resource.NewExpired("too old resource version"), resource.ReasonExpired, 410, resource.ErrExpired,
			"too old resource version"},
		{"Gone is 410 and matches ErrExpired", resource.NewGone("gone"), resource.ReasonGone, 410, resource.ErrExpired, "gone"},
		{"RequestEntityTooLarge is 413", resource.NewRequestEntityTooLarge("big"), resource.ReasonRequestEntityTooLarge, 413,
			resource.ErrRequestEntityTooLarge, "big"},
		{"UnsupportedMediaType is 415", resource.NewUnsupportedMediaType("text/plain"), resource.ReasonUnsupportedMediaType, 415,
			resource.ErrUnsupportedMediaType, "text/plain"},
		{"TooManyRequests is 429", resource.NewTooManyRequests("slow down", 1), resource.ReasonTooManyRequests, 429,
			resource.ErrTooManyRequests, "slow down"},
		{"InternalError is 500", resource.NewInternalError(errors.New("boom")), resource.ReasonInternalError, 500, resource.ErrInternal,
			"Internal error occurred: boom"},
		{"ServiceUnavailable is 503", resource.NewServiceUnavailable("later"), resource.ReasonServiceUnavailable, 503,
			resource.ErrServiceUnavailable, "later"},
		{"Timeout is 504", resource.NewTimeout("slow"), resource.ReasonTimeout, 504, resource.ErrTimeout, "slow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.err.Status()
			assert.Equal(t, tc.reason, st.Reason)
			assert.Equal(t, tc.code, st.Code)
			assert.Equal(t, tc.code, tc.reason.Code())
			assert.Equal(t, resource.StatusFailure, st.Status)
			assert.Equal(t, resource.TypeMeta{Kind: "Status", APIVersion: "v1"}, st.TypeMeta)
			assert.Contains(t, st.Message, tc.message)
			assert.Equal(t, st.Message, tc.err.Error())

			wrapped := fmt.Errorf("handler: %w", fmt.Errorf("store: %w", tc.err))
			assert.True(t, errors.Is(wrapped, tc.sentinel), "errors.Is through two wraps")
			var se *resource.StatusError
			require.True(t, errors.As(wrapped, &se))
			assert.Same(t, tc.err, se)
			assert.Equal(t, st, resource.StatusOf(wrapped))
			assert.Equal(t, tc.reason, resource.ReasonOf(wrapped))
			assert.Equal(t, int(tc.code), resource.CodeOf(wrapped))
			assert.False(t, errors.Is(wrapped, resource.ErrServiceUnavailable) && tc.sentinel != resource.ErrServiceUnavailable,
				"matches only its own sentinel")
		})
	}
}

func TestStatusDetails(t *testing.T) {
	k := projectKind(t)
	t.Run("NotFound names the resource in details.kind", func(t *testing.T) {
		d := resource.NewNotFound(k, "a").Status().Details
		require.NotNil(t, d)
		assert.Equal(t, resource.StatusDetails{Name: "a", Group: resource.Group, Kind: "projects"}, *d)
	})
	t.Run("Invalid names the Kind in details.kind and lists causes", func(t *testing.T) {
		errs := resource.ErrorList{
			resource.Invalid(resource.NewPath("metadata", "name"), "Bad_Name", "bad"),
			resource.Required(resource.NewPath("spec", "scope", "rules").Index(0).Child("verbs"), ""),
		}
		e := resource.NewInvalid(k, "Bad_Name", errs)
		d := e.Status().Details
		require.NotNil(t, d)
		assert.Equal(t, "Project", d.Kind)
		assert.Equal(t, []resource.StatusCause{
			{Type: resource.CauseFieldValueInvalid, Message: `Invalid value: "Bad_Name": bad`, Field: "metadata.name"},
			{Type: resource.CauseFieldValueRequired, Message: "Required value", Field: "spec.scope.rules[0].verbs"},
		}, d.Causes)
		assert.Contains(t, e.Error(), `is invalid: [metadata.name: Invalid value: "Bad_Name": bad, spec.scope.rules[0].verbs: Required value]`)
		var fe *resource.FieldError
		require.True(t, errors.As(e, &fe), "the field errors are reachable with errors.As")
		assert.Equal(t, "metadata.name", fe.Field)
	})
	t.Run("a generateName conflict asks to retry after a second", func(t *testing.T) {
		assert.Equal(t, int32(1), resource.NewGenerateNameConflict(k, "a-", 1).Status().Details.RetryAfterSeconds)
	})
	t.Run("TooManyRequests carries retryAfterSeconds", func(t *testing.T) {
		assert.Equal(t, int32(5), resource.NewTooManyRequests("x", 5).Status().Details.RetryAfterSeconds)
	})
	t.Run("InternalError unwraps to its cause", func(t *testing.T) {
		assert.True(t, errors.Is(resource.NewInternalError(io.ErrUnexpectedEOF), io.ErrUnexpectedEOF))
	})
	t.Run("WithCause keeps the reason and adds the cause", func(t *testing.T) {
		e := resource.NewBadRequest("bad").WithCause(io.EOF)
		assert.True(t, errors.Is(e, io.EOF))
		assert.True(t, errors.Is(e, resource.ErrBadRequest))
	})
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		status  string
		reason  resource.StatusReason
		code    int32
		message string
	}{
		{"nil is Success 200", nil, resource.StatusSuccess, "", 200, ""},
		{"a plain error is 500 with an empty reason", errors.New("disk on fire"), resource.StatusFailure, resource.ReasonUnknown, 500,
			"disk on fire"},
		{"a bare sentinel gets its reason", resource.ErrNotFound, resource.StatusFailure, resource.ReasonNotFound, 404,
			"resource: not found"},
		{"a wrapped sentinel gets its reason", fmt.Errorf("get x: %w", resource.ErrConflict), resource.StatusFailure,
			resource.ReasonConflict, 409, "get x: resource: conflict"},
		{"the expired sentinel is Expired, not Gone", resource.ErrExpired, resource.StatusFailure, resource.ReasonExpired, 410, ""},
		{"a context deadline is a 504 Timeout", fmt.Errorf("list: %w", context.DeadlineExceeded), resource.StatusFailure,
			resource.ReasonTimeout, 504, "deadline exceeded"},
		{"a Status without a code gets its reason's code", &resource.StatusError{ErrStatus: resource.Status{Reason: resource.ReasonForbidden}},
			resource.StatusFailure, resource.ReasonForbidden, 403, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := resource.StatusOf(tc.err)
			assert.Equal(t, "Status", st.Kind)
			assert.Equal(t, "v1", st.APIVersion)
			assert.Equal(t, tc.status, st.Status)
			assert.Equal(t, tc.reason, st.Reason)
			assert.Equal(t, tc.code, st.Code)
			assert.Contains(t, st.Message, tc.message)
		})
	}
	t.Run("an error joining two sentinels is mapped the same way every time", func(t *testing.T) {
		err := errors.Join(resource.ErrConflict, resource.ErrNotFound)
		first := resource.ReasonOf(err)
		for range 50 {
			assert.Equal(t, first, resource.ReasonOf(err))
		}
	})
}

func TestStatusWireShape(t *testing.T) {
	k := projectKind(t)
	t.Run("an Invalid status has Kubernetes' field names and order", func(t *testing.T) {
		e := resource.NewInvalid(k, "Bad_Name", resource.ErrorList{
			resource.Invalid(resource.NewPath("metadata", "name"), "Bad_Name", "bad"),
		})
		b, err := json.Marshal(resource.StatusOf(e))
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
			`"message":"Project.management.service \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": bad",`+
			`"reason":"Invalid","details":{"name":"Bad_Name","group":"management.service","kind":"Project",`+
			`"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Bad_Name\": bad","field":"metadata.name"}]},`+
			`"code":422}`, string(b))
	})
	t.Run("empty details fields are left out", func(t *testing.T) {
		b, err := json.Marshal(resource.NewBadRequest("no").Status())
		require.NoError(t, err)
		assert.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no","reason":"BadRequest","code":400}`,
			string(b))
	})
	t.Run("a Status decodes back to the same value", func(t *testing.T) {
		st := resource.NewNotFound(k, "a").Status()
		b, err := json.Marshal(st)
		require.NoError(t, err)
		var back resource.Status
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, st, back)
	})
	t.Run("a success status has no reason and code 200", func(t *testing.T) {
		b, err := json.Marshal(resource.StatusOf(nil))
		require.NoError(t, err)
		assert.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`, string(b))
	})
}
