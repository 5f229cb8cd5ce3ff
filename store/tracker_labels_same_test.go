package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelabel(t *testing.T) {
	cases := []struct {
		name   string
		before map[string]string // encoded with labelsOf
		after  map[string]string
		ok     bool // relabel answers (no key added)
	}{
		{"both empty", nil, nil, true},
		{"empty and nil", map[string]string{}, nil, true},
		{"unchanged", map[string]string{"a": "1", "b": ""}, map[string]string{"b": "", "a": "1"}, true},
		{"a value changed", map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"a": "1", "b": "x", "c": "3"}, true},
		{"a label removed", map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"a": "1", "c": "3"}, true},
		{"every label removed", map[string]string{"a": "1"}, map[string]string{}, true},
		{"a label added", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false},
		{"a key replaced", map[string]string{"a": "1"}, map[string]string{"b": "1"}, false},
		{"an empty value added", map[string]string{}, map[string]string{"a": ""}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := relabel(labelsOf(c.before), c.after)
			assert.Equal(t, c.ok, ok)
			if ok {
				assert.Equal(t, labelsOf(c.after), got, "the same encoding as from scratch")
			}
		})
	}
	_, ok := relabel("a\x00", map[string]string{"a": ""})
	assert.False(t, ok, "a torn encoding is not used")
}

// FuzzRelabel holds relabel to labelsOf whenever it answers.
func FuzzRelabel(f *testing.F) {
	f.Add("a", "1", "b", "2", "a", "3", uint8(3))
	f.Add("a", "", "b", "", "c", "", uint8(5))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string, mask uint8) {
		before := map[string]string{k1: v1, k2: v2}
		after := map[string]string{}
		if mask&1 != 0 {
			after[k1] = v1
		}
		if mask&2 != 0 {
			after[k2] = v2
		}
		if mask&4 != 0 {
			after[k3] = v3
		}
		for _, m := range []map[string]string{before, after} {
			for k, v := range m {
				if containsNUL(k) || containsNUL(v) {
					return // label keys and values never hold NUL
				}
			}
		}
		if got, ok := relabel(labelsOf(before), after); ok {
			assert.Equal(t, labelsOf(after), got)
		} else {
			for k := range after {
				if _, had := before[k]; !had {
					return // a key was added: relabel may decline
				}
			}
			assert.Fail(t, "relabel declined without an added key")
		}
	})
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
