package jsonpatch

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

var classes = []error{ErrMalformed, ErrFailed, ErrTooLarge}

// requireClass checks that err is an *Error wrapping class and none of the other
// classes, and returns it.
func requireClass(t testing.TB, err error, class error) *Error {
	t.Helper()
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e, "error %v is not an *Error", err)
	for _, c := range classes {
		if c == class {
			require.ErrorIs(t, err, c, "error %v", err)
		} else {
			require.NotErrorIs(t, err, c, "error %v", err)
		}
	}
	return e
}

// classOf returns the one class err wraps, or nil when it wraps none or several.
func classOf(err error) error {
	var found error
	for _, c := range classes {
		if errors.Is(err, c) {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}
