package resource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// StatusReason is the machine-readable reason of a failed request. Each reason has
// exactly one HTTP code ([StatusReason.Code]).
type StatusReason string

// The reasons this library returns, with their HTTP codes.
const (
	ReasonBadRequest            StatusReason = "BadRequest"            // 400
	ReasonUnauthorized          StatusReason = "Unauthorized"          // 401
	ReasonForbidden             StatusReason = "Forbidden"             // 403
	ReasonNotFound              StatusReason = "NotFound"              // 404
	ReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"      // 405
	ReasonNotAcceptable         StatusReason = "NotAcceptable"         // 406
	ReasonAlreadyExists         StatusReason = "AlreadyExists"         // 409
	ReasonConflict              StatusReason = "Conflict"              // 409
	ReasonGone                  StatusReason = "Gone"                  // 410 (deprecated form of Expired)
	ReasonExpired               StatusReason = "Expired"               // 410
	ReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge" // 413
	ReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"  // 415
	ReasonInvalid               StatusReason = "Invalid"               // 422
	ReasonTooManyRequests       StatusReason = "TooManyRequests"       // 429
	ReasonInternalError         StatusReason = "InternalError"         // 500
	ReasonServiceUnavailable    StatusReason = "ServiceUnavailable"    // 503
	ReasonTimeout               StatusReason = "Timeout"               // 504
	// ReasonUnknown is the empty reason of an error that is not a Status (500).
	ReasonUnknown StatusReason = ""
)

var reasonCodes = map[StatusReason]int32{
	ReasonBadRequest:            http.StatusBadRequest,
	ReasonUnauthorized:          http.StatusUnauthorized,
	ReasonForbidden:             http.StatusForbidden,
	ReasonNotFound:              http.StatusNotFound,
	ReasonMethodNotAllowed:      http.StatusMethodNotAllowed,
	ReasonNotAcceptable:         http.StatusNotAcceptable,
	ReasonAlreadyExists:         http.StatusConflict,
	ReasonConflict:              http.StatusConflict,
	ReasonGone:                  http.StatusGone,
	ReasonExpired:               http.StatusGone,
	ReasonRequestEntityTooLarge: http.StatusRequestEntityTooLarge,
	ReasonUnsupportedMediaType:  http.StatusUnsupportedMediaType,
	ReasonInvalid:               http.StatusUnprocessableEntity,
	ReasonTooManyRequests:       http.StatusTooManyRequests,
	ReasonInternalError:         http.StatusInternalServerError,
	ReasonServiceUnavailable:    http.StatusServiceUnavailable,
	ReasonTimeout:               http.StatusGatewayTimeout,
	ReasonUnknown:               http.StatusInternalServerError,
}

// Code returns the HTTP status code of the reason; 500 for a reason it does not know.
func (r StatusReason) Code() int32 {
	if c, ok := reasonCodes[r]; ok {
		return c
	}
	return http.StatusInternalServerError
}

// Sentinel errors, one per reason. A [*StatusError] matches the sentinel of its reason
// under [errors.Is], so callers write errors.Is(err, resource.ErrNotFound) however the
// error was wrapped.
var (
	ErrBadRequest            = errors.New("resource: bad request")
	ErrUnauthorized          = errors.New("resource: unauthorized")
	ErrForbidden             = errors.New("resource: forbidden")
	ErrNotFound              = errors.New("resource: not found")
	ErrMethodNotAllowed      = errors.New("resource: method not allowed")
	ErrNotAcceptable         = errors.New("resource: not acceptable")
	ErrAlreadyExists         = errors.New("resource: already exists")
	ErrConflict              = errors.New("resource: conflict")
	ErrExpired               = errors.New("resource: expired") // Gone and Expired both match it
	ErrRequestEntityTooLarge = errors.New("resource: request entity too large")
	ErrUnsupportedMediaType  = errors.New("resource: unsupported media type")
	ErrInvalid               = errors.New("resource: invalid")
	ErrTooManyRequests       = errors.New("resource: too many requests")
	ErrInternal              = errors.New("resource: internal error")
	ErrServiceUnavailable    = errors.New("resource: service unavailable")
	ErrTimeout               = errors.New("resource: timeout")
)

var reasonSentinels = map[StatusReason]error{
	ReasonBadRequest:            ErrBadRequest,
	ReasonUnauthorized:          ErrUnauthorized,
	ReasonForbidden:             ErrForbidden,
	ReasonNotFound:              ErrNotFound,
	ReasonMethodNotAllowed:      ErrMethodNotAllowed,
	ReasonNotAcceptable:         ErrNotAcceptable,
	ReasonAlreadyExists:         ErrAlreadyExists,
	ReasonConflict:              ErrConflict,
	ReasonGone:                  ErrExpired,
	ReasonExpired:               ErrExpired,
	ReasonRequestEntityTooLarge: ErrRequestEntityTooLarge,
	ReasonUnsupportedMediaType:  ErrUnsupportedMediaType,
	ReasonInvalid:               ErrInvalid,
	ReasonTooManyRequests:       ErrTooManyRequests,
	ReasonInternalError:         ErrInternal,
	ReasonServiceUnavailable:    ErrServiceUnavailable,
	ReasonTimeout:               ErrTimeout,
	ReasonUnknown:               ErrInternal,
}

// sentinelOrder is the order in which StatusOf tries the sentinels, so that an error
// matching several of them maps to the same reason every time (map order is random).
// Gone and Unknown are left out: their sentinels belong to Expired and InternalError.
var sentinelOrder = []StatusReason{
	ReasonBadRequest, ReasonUnauthorized, ReasonForbidden, ReasonNotFound, ReasonMethodNotAllowed,
	ReasonNotAcceptable, ReasonAlreadyExists, ReasonConflict, ReasonExpired, ReasonRequestEntityTooLarge,
	ReasonUnsupportedMediaType, ReasonInvalid, ReasonTooManyRequests, ReasonInternalError,
	ReasonServiceUnavailable, ReasonTimeout,
}

// Status values.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// Status is the wire body of every failure (and of a successful delete), exactly
// Kubernetes' metav1.Status.
type Status struct {
	TypeMeta `json:",inline"`
	// ListMeta is always empty for errors.
	ListMeta `json:"metadata"`
	// Status is "Success" or "Failure".
	Status string `json:"status,omitempty"`
	// Message is a human-readable description.
	Message string `json:"message,omitempty"`
	// Reason is the machine-readable reason; empty means unknown.
	Reason StatusReason `json:"reason,omitempty"`
	// Details carries the object and the causes, when there are any.
	Details *StatusDetails `json:"details,omitempty"`
	// Code is the HTTP status code.
	Code int32 `json:"code,omitempty"`
}

// StatusDetails names the object a Status is about and lists the causes.
type StatusDetails struct {
	// Name of the object.
	Name string `json:"name,omitempty"`
	// Group of the object's kind.
	Group string `json:"group,omitempty"`
	// Kind holds the resource name (e.g. "projects") for NotFound, AlreadyExists,
	// Conflict, Forbidden and successful deletes, and the Kind for Invalid, as
	// Kubernetes does.
	Kind string `json:"kind,omitempty"`
	// UID of the object.
	UID string `json:"uid,omitempty"`
	// Causes list the individual problems, each with a field path.
	Causes []StatusCause `json:"causes,omitempty"`
	// RetryAfterSeconds suggests when to retry.
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
}

// CauseType is the reason of one [StatusCause].
type CauseType string

// The cause types, as Kubernetes names them.
const (
	CauseFieldValueNotFound      CauseType = "FieldValueNotFound"
	CauseFieldValueRequired      CauseType = "FieldValueRequired"
	CauseFieldValueDuplicate     CauseType = "FieldValueDuplicate"
	CauseFieldValueInvalid       CauseType = "FieldValueInvalid"
	CauseFieldValueNotSupported  CauseType = "FieldValueNotSupported"
	CauseFieldValueForbidden     CauseType = "FieldValueForbidden"
	CauseFieldValueTooLong       CauseType = "FieldValueTooLong"
	CauseFieldValueTooMany       CauseType = "FieldValueTooMany"
	CauseFieldValueTypeInvalid   CauseType = "FieldValueTypeInvalid"
	CauseInternalError           CauseType = "InternalError"
	CauseFieldManagerConflict    CauseType = "FieldManagerConflict"
	CauseResourceVersionTooLarge CauseType = "ResourceVersionTooLarge"
)

// StatusCause is one problem of a failed request.
type StatusCause struct {
	// Type is the cause type (the JSON key is "reason").
	Type CauseType `json:"reason,omitempty"`
	// Message describes the problem without the field prefix.
	Message string `json:"message,omitempty"`
	// Field is the path of the field, e.g. "spec.scope.rules[0].verbs".
	Field string `json:"field,omitempty"`
}

// StatusError is an error that carries its [Status]. It matches the sentinel of its
// reason under [errors.Is] and unwraps to the error it was built from, if any.
type StatusError struct {
	// ErrStatus is the wire body.
	ErrStatus Status
	cause     error
}

// Error returns the status message.
func (e *StatusError) Error() string { return e.ErrStatus.Message }

// Status returns the wire body.
func (e *StatusError) Status() Status { return e.ErrStatus }

// Is reports whether target is the sentinel of the error's reason.
func (e *StatusError) Is(target error) bool {
	return reasonSentinels[e.ErrStatus.Reason] == target
}

// Unwrap returns the error the status was built from, if any.
func (e *StatusError) Unwrap() error { return e.cause }

// NewStatusError builds a failure with the given reason and message; its code is the
// reason's code.
func NewStatusError(reason StatusReason, message string) *StatusError {
	return &StatusError{ErrStatus: Status{
		TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     reason.Code(),
	}}
}

// WithCause returns e wrapping cause, for [errors.Unwrap]; it changes nothing on the
// wire.
func (e *StatusError) WithCause(cause error) *StatusError {
	e.cause = cause
	return e
}

func qualifiedResource(k *KindInfo) string {
	if k == nil {
		return "object"
	}
	return k.GroupResource()
}

func details(k *KindInfo, name string) *StatusDetails {
	d := &StatusDetails{Name: name}
	if k != nil {
		d.Group = k.Group
		d.Kind = k.Resource
	}
	return d
}

// NewNotFound returns 404 NotFound: `<resource> "<name>" not found`.
func NewNotFound(k *KindInfo, name string) *StatusError {
	e := NewStatusError(ReasonNotFound, fmt.Sprintf("%s %q not found", qualifiedResource(k), name))
	e.ErrStatus.Details = details(k, name)
	return e
}

// NewAlreadyExists returns 409 AlreadyExists: `<resource> "<name>" already exists`.
func NewAlreadyExists(k *KindInfo, name string) *StatusError {
	e := NewStatusError(ReasonAlreadyExists, fmt.Sprintf("%s %q already exists", qualifiedResource(k), name))
	e.ErrStatus.Details = details(k, name)
	return e
}

// NewGenerateNameConflict returns the 409 AlreadyExists of a generateName whose every
// attempt collided, with retryAfterSeconds.
func NewGenerateNameConflict(k *KindInfo, name string, retryAfterSeconds int32) *StatusError {
	e := NewStatusError(ReasonAlreadyExists, fmt.Sprintf(
		"%s %q already exists, the server was not able to generate a unique name for the object",
		qualifiedResource(k), name))
	e.ErrStatus.Details = details(k, name)
	e.ErrStatus.Details.RetryAfterSeconds = retryAfterSeconds
	return e
}

// NewConflict returns 409 Conflict:
// `Operation cannot be fulfilled on <resource> "<name>": <reason>`.
func NewConflict(k *KindInfo, name, reason string) *StatusError {
	e := NewStatusError(ReasonConflict, fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s",
		qualifiedResource(k), name, reason))
	e.ErrStatus.Details = details(k, name)
	return e
}

// OptimisticLockMessage is the reason text of a stale resourceVersion.
const OptimisticLockMessage = "the object has been modified; please apply your changes to the latest version and try again"

// NewInvalid returns 422 Invalid with one cause per field error:
// `<Kind>.<group> "<name>" is invalid: <errors>`. details.kind is the Kind.
func NewInvalid(k *KindInfo, name string, errs ErrorList) *StatusError {
	kind, group := "", ""
	if k != nil {
		kind, group = k.Kind, k.Group
	}
	qual := kind
	if group != "" {
		qual = kind + "." + group
	}
	if qual == "" {
		qual = "object"
	}
	msg := fmt.Sprintf("%s %q is invalid", qual, name)
	switch len(errs) {
	case 0:
	case 1:
		msg += ": " + errs[0].Error()
	default:
		parts := make([]string, len(errs))
		for i, fe := range errs {
			parts[i] = fe.Error()
		}
		msg += ": [" + strings.Join(parts, ", ") + "]"
	}
	e := NewStatusError(ReasonInvalid, msg)
	e.ErrStatus.Details = &StatusDetails{Name: name, Group: group, Kind: kind}
	for _, fe := range errs {
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, StatusCause{
			Type: fe.Type, Message: fe.ErrorBody(), Field: fe.Field,
		})
	}
	return e.WithCause(errs.ToAggregate())
}

// NewBadRequest returns 400 BadRequest.
func NewBadRequest(message string) *StatusError { return NewStatusError(ReasonBadRequest, message) }

// NewUnauthorized returns 401 Unauthorized.
func NewUnauthorized(message string) *StatusError {
	if message == "" {
		message = "Unauthorized"
	}
	return NewStatusError(ReasonUnauthorized, message)
}

// NewForbidden returns 403 Forbidden: `<resource> "<name>" is forbidden: <reason>`.
func NewForbidden(k *KindInfo, name, reason string) *StatusError {
	var msg string
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %s", qualifiedResource(k), reason)
	} else {
		msg = fmt.Sprintf("%s %q is forbidden: %s", qualifiedResource(k), name, reason)
	}
	e := NewStatusError(ReasonForbidden, msg)
	e.ErrStatus.Details = details(k, name)
	return e
}

// NewMethodNotAllowed returns 405 MethodNotAllowed.
func NewMethodNotAllowed(k *KindInfo, verb string) *StatusError {
	e := NewStatusError(ReasonMethodNotAllowed, fmt.Sprintf("%s is not supported on resources of kind %q",
		verb, qualifiedResource(k)))
	e.ErrStatus.Details = details(k, "")
	return e
}

// NewExpired returns 410 Expired, the answer to a resourceVersion or continue token
// older than what is kept.
func NewExpired(message string) *StatusError { return NewStatusError(ReasonExpired, message) }

// NewGone returns 410 with the deprecated reason Gone; prefer [NewExpired].
func NewGone(message string) *StatusError { return NewStatusError(ReasonGone, message) }

// NewRequestEntityTooLarge returns 413 RequestEntityTooLarge.
func NewRequestEntityTooLarge(message string) *StatusError {
	return NewStatusError(ReasonRequestEntityTooLarge, message)
}

// NewUnsupportedMediaType returns 415 UnsupportedMediaType for a content type.
func NewUnsupportedMediaType(contentType string) *StatusError {
	return NewStatusError(ReasonUnsupportedMediaType, fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got %q)", contentType))
}

// NewTooManyRequests returns 429 TooManyRequests with retryAfterSeconds.
func NewTooManyRequests(message string, retryAfterSeconds int32) *StatusError {
	e := NewStatusError(ReasonTooManyRequests, message)
	if retryAfterSeconds > 0 {
		e.ErrStatus.Details = &StatusDetails{RetryAfterSeconds: retryAfterSeconds}
	}
	return e
}

// NewInternalError returns 500 InternalError wrapping err.
func NewInternalError(err error) *StatusError {
	e := NewStatusError(ReasonInternalError, fmt.Sprintf("Internal error occurred: %v", err))
	e.ErrStatus.Details = &StatusDetails{Causes: []StatusCause{{Message: fmt.Sprint(err)}}}
	return e.WithCause(err)
}

// NewServiceUnavailable returns 503 ServiceUnavailable.
func NewServiceUnavailable(message string) *StatusError {
	return NewStatusError(ReasonServiceUnavailable, message)
}

// NewTimeout returns 504 Timeout.
func NewTimeout(message string) *StatusError { return NewStatusError(ReasonTimeout, message) }

// StatusOf maps any error to its wire Status: a [*StatusError] anywhere in the chain
// gives its own status; a bare sentinel of this package gives a status of its reason;
// a context deadline gives 504 Timeout; anything else is 500 with an empty reason and
// the error's text, as kube-apiserver answers a non-Status error. A nil error gives a
// Success status.
func StatusOf(err error) Status {
	if err == nil {
		return Status{TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: StatusSuccess, Code: http.StatusOK}
	}
	var se *StatusError
	if errors.As(err, &se) {
		st := se.ErrStatus
		st.Kind, st.APIVersion, st.Status = "Status", "v1", StatusFailure
		if st.Code == 0 {
			st.Code = st.Reason.Code()
		}
		return st
	}
	for _, reason := range sentinelOrder {
		if errors.Is(err, reasonSentinels[reason]) {
			return NewStatusError(reason, err.Error()).ErrStatus
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return NewTimeout(err.Error()).ErrStatus
	}
	return NewStatusError(ReasonUnknown, err.Error()).ErrStatus
}

// ReasonOf returns the reason [StatusOf] gives err.
func ReasonOf(err error) StatusReason { return StatusOf(err).Reason }

// CodeOf returns the HTTP code [StatusOf] gives err.
func CodeOf(err error) int { return int(StatusOf(err).Code) }

// NewNotAcceptable returns 406 NotAcceptable for a media type the server cannot write.
func NewNotAcceptable(mediaType string) *StatusError {
	return NewStatusError(ReasonNotAcceptable, fmt.Sprintf(
		"only the following media types are accepted: application/json, application/yaml (got %q)", mediaType))
}
