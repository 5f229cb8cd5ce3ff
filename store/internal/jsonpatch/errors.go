package jsonpatch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by errors for a patch or document that is not valid JSON
// or not of the shape the operation requires. The store maps it to 400 Bad Request.
var ErrMalformed = errors.New("malformed")

// ErrFailed is wrapped by errors for a well-formed patch that cannot be applied to
// the document: a path that does not exist, an index out of range, a failed test.
// The store maps it to 422 Unprocessable Entity.
var ErrFailed = errors.New("cannot apply")

// ErrTooLarge is wrapped by errors for a patch over a limit: too many operations,
// too many bytes copied, too deep nesting, or too much shifting inside arrays.
// The store maps it to 413 Request Entity Too Large.
var ErrTooLarge = errors.New("too large")

// Error is the error returned by [MergePatch] and [Apply]. Err wraps one of
// [ErrMalformed], [ErrFailed] or [ErrTooLarge].
type Error struct {
	// Op is the index of the failing operation in the JSON patch, or -1 when the
	// error is not about a single operation (and always for MergePatch).
	Op int
	// Path is the JSON pointer that could not be used, or a pointer to the
	// offending member of the patch or document; empty when none applies (note
	// that "" is also the pointer to the whole document).
	Path string
	// Err is the cause; errors.Is(Err, ErrMalformed|ErrFailed|ErrTooLarge) holds
	// for exactly one of them.
	Err error
}

// Error returns a one-line description such as
// `jsonpatch: operation 2 (path "/a/b"): cannot apply: remove: member "b" not found`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("jsonpatch: ")
	switch {
	case e.Op >= 0 && e.Path != "":
		b.WriteString("operation " + strconv.Itoa(e.Op) + " (path " + strconv.Quote(e.Path) + "): ")
	case e.Op >= 0:
		b.WriteString("operation " + strconv.Itoa(e.Op) + ": ")
	case e.Path != "":
		b.WriteString("at " + strconv.Quote(e.Path) + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("unknown error")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// newErr builds an *Error whose cause wraps class and, when cause is not nil, cause.
func newErr(op int, path string, class error, cause error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	var err error
	if cause != nil {
		err = fmt.Errorf("%w: %s: %w", class, msg, cause)
	} else {
		err = fmt.Errorf("%w: %s", class, msg)
	}
	return &Error{Op: op, Path: path, Err: err}
}
