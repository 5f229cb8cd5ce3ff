package resource

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a field path such as "spec.scope.rules[0].verbs", built step by step.
// The zero value is the root.
type Path struct {
	s string
}

// NewPath returns the path of a top-level field, or of a nested one when more names
// are given: NewPath("metadata", "labels").
func NewPath(name string, more ...string) Path {
	p := Path{s: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child returns the path of a field under p.
func (p Path) Child(name string) Path {
	if p.s == "" {
		return Path{s: name}
	}
	return Path{s: p.s + "." + name}
}

// Index returns the path of the i-th element of the list at p.
func (p Path) Index(i int) Path { return Path{s: p.s + "[" + strconv.Itoa(i) + "]"} }

// Key returns the path of a map entry at p: metadata.labels[app].
func (p Path) Key(k string) Path { return Path{s: p.s + "[" + k + "]"} }

// String returns the path as text.
func (p Path) String() string { return p.s }

// FieldError is one validation problem at one field.
type FieldError struct {
	// Type is the kind of problem; it becomes the cause's reason.
	Type CauseType
	// Field is the path of the field.
	Field string
	// BadValue is the offending value, shown in the message; nil leaves it out.
	BadValue any
	// Detail explains the problem.
	Detail string
}

// Error returns "<field>: <body>".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.ErrorBody()
	}
	return e.Field + ": " + e.ErrorBody()
}

// ErrorBody returns the message without the field prefix, in Kubernetes' wording:
// `Invalid value: "x": detail`, `Required value: detail`, and so on.
func (e *FieldError) ErrorBody() string {
	var s string
	switch e.Type {
	case CauseFieldValueRequired:
		s = "Required value"
	case CauseFieldValueForbidden:
		s = "Forbidden"
	case CauseFieldValueTooLong:
		s = "Too long"
	case CauseFieldValueTooMany:
		s = "Too many"
	case CauseFieldValueNotSupported:
		s = "Unsupported value"
	case CauseFieldValueDuplicate:
		s = "Duplicate value"
	case CauseFieldValueNotFound:
		s = "Not found"
	case CauseInternalError:
		s = "Internal error"
	case CauseFieldValueTypeInvalid:
		s = "Invalid value"
	default:
		s = "Invalid value"
	}
	if e.BadValue != nil && e.Type != CauseFieldValueRequired && e.Type != CauseFieldValueForbidden &&
		e.Type != CauseFieldValueTooLong && e.Type != CauseInternalError {
		s += ": " + formatBadValue(e.BadValue)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func formatBadValue(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case fmt.Stringer:
		return strconv.Quote(t.String())
	default:
		return fmt.Sprintf("%v", v)
	}
}

// Invalid returns a FieldValueInvalid error.
func Invalid(p Path, value any, detail string) *FieldError {
	return &FieldError{Type: CauseFieldValueInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// Required returns a FieldValueRequired error.
func Required(p Path, detail string) *FieldError {
	return &FieldError{Type: CauseFieldValueRequired, Field: p.String(), Detail: detail}
}

// Forbidden returns a FieldValueForbidden error.
func Forbidden(p Path, detail string) *FieldError {
	return &FieldError{Type: CauseFieldValueForbidden, Field: p.String(), Detail: detail}
}

// TooLong returns a FieldValueTooLong error naming the limit.
func TooLong(p Path, value any, limit int) *FieldError {
	return &FieldError{Type: CauseFieldValueTooLong, Field: p.String(), BadValue: value,
		Detail: fmt.Sprintf("must have at most %d bytes", limit)}
}

// NotSupported returns a FieldValueNotSupported error listing the allowed values.
func NotSupported(p Path, value any, allowed []string) *FieldError {
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	return &FieldError{Type: CauseFieldValueNotSupported, Field: p.String(), BadValue: value,
		Detail: "supported values: " + strings.Join(quoted, ", ")}
}

// Duplicate returns a FieldValueDuplicate error.
func Duplicate(p Path, value any) *FieldError {
	return &FieldError{Type: CauseFieldValueDuplicate, Field: p.String(), BadValue: value}
}

// ErrorList is a list of field errors; nil or empty means valid.
type ErrorList []*FieldError

// ToAggregate returns the list as one error (nil when empty), joined with [errors.Join].
func (l ErrorList) ToAggregate() error {
	if len(l) == 0 {
		return nil
	}
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}
