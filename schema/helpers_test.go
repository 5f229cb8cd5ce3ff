package schema

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// remove, as a value in [with], deletes the field.
type removeT struct{}

var remove = removeT{}

func gvkOf(kind string) resource.GroupVersionKind {
	return resource.GroupVersionKind{Group: resource.Group, Version: resource.Version, Kind: kind}
}

func validatorOf(t testing.TB, kind string) *Validator {
	t.Helper()
	v, ok := NewRegistry().Validator(gvkOf(kind))
	require.True(t, ok, "no validator for %s", kind)
	return v
}

var segmentRE = regexp.MustCompile(`^([^\[\]]*)((?:\[\d+\])*)$`)

// with returns base (a JSON document) with the value at path replaced, or deleted
// when value is remove. path is dotted with [i] indexes: "spec.scope.rules[0].verbs".
// Missing objects on the way are created.
func with(t testing.TB, base, path string, value any) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(base))
	dec.UseNumber()
	var doc any
	require.NoError(t, dec.Decode(&doc))
	type step struct {
		key   string
		index int
	}
	var steps []step
	for _, seg := range strings.Split(path, ".") {
		m := segmentRE.FindStringSubmatch(seg)
		require.NotNil(t, m, "bad path segment %q", seg)
		steps = append(steps, step{key: m[1], index: -1})
		for _, ix := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(ix)
			steps = append(steps, step{index: n})
		}
	}
	var set func(node any, steps []step) any
	set = func(node any, steps []step) any {
		s := steps[0]
		last := len(steps) == 1
		if s.index >= 0 {
			list, _ := node.([]any)
			require.Less(t, s.index, len(list)+1, "index %d out of range in %s", s.index, path)
			if s.index == len(list) {
				list = append(list, map[string]any{})
			}
			if last {
				list[s.index] = value
				return list
			}
			list[s.index] = set(list[s.index], steps[1:])
			return list
		}
		m, _ := node.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		if last {
			if _, del := value.(removeT); del {
				delete(m, s.key)
			} else {
				m[s.key] = value
			}
			return m
		}
		m[s.key] = set(m[s.key], steps[1:])
		return m
	}
	doc = set(doc, steps)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return string(out)
}

// validCase is a document that must validate.
type validCase struct {
	name string
	doc  string
}

// invalidCase is a document that must be refused with a cause at field.
type invalidCase struct {
	name  string
	doc   string
	field string
	// message, if set, must be part of that cause's message.
	message string
}

// causesOf asserts err is a 422 Invalid StatusError and returns its causes.
func causesOf(t testing.TB, err error) []resource.StatusCause {
	t.Helper()
	require.Error(t, err)
	var se *resource.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, resource.ReasonInvalid, se.ErrStatus.Reason, "error: %v", err)
	require.EqualValues(t, 422, se.ErrStatus.Code)
	require.ErrorIs(t, err, resource.ErrInvalid)
	require.NotNil(t, se.ErrStatus.Details)
	require.NotEmpty(t, se.ErrStatus.Details.Causes)
	return se.ErrStatus.Details.Causes
}

func fields(causes []resource.StatusCause) []string {
	out := make([]string, len(causes))
	for i, c := range causes {
		out[i] = c.Field
	}
	return out
}

// runKindTable runs the valid and invalid documents of one kind as subtests.
func runKindTable(t *testing.T, kind string, valid []validCase, invalid []invalidCase) {
	v := validatorOf(t, kind)
	for _, tc := range valid {
		t.Run("accepts "+tc.name, func(t *testing.T) {
			require.NoError(t, v.ValidateJSON([]byte(tc.doc)))
		})
	}
	for _, tc := range invalid {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			causes := causesOf(t, v.ValidateJSON([]byte(tc.doc)))
			var found *resource.StatusCause
			for i := range causes {
				if causes[i].Field == tc.field {
					found = &causes[i]
					break
				}
			}
			require.NotNil(t, found, "no cause at %q; causes: %+v", tc.field, causes)
			require.NotEmpty(t, found.Message)
			if tc.message != "" {
				require.Contains(t, found.Message, tc.message)
			}
		})
	}
}

func compactDoc(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)))
	return b.String()
}
