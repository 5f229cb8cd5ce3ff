package store

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// FuzzHasGranularLists checks the quick test of hasGranularLists against the walk
// it stands in for: on compact JSON, whenever the walk finds a non-empty set or map
// list, the quick test does too (it may find more, never less).
func FuzzHasGranularLists(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"finalizers":["a"]}}`, `{"metadata":{"finalizers":[]}}`,
		`{"metadata":{"annotations":{"x":"\"finalizers\":[1]"}},"spec":{"allowedClusters":[{"name":"a"}]}}`,
		`{"spec":{"allowedClusters":[]},"status":{"conditions":[{"type":"R"}]}}`,
		`{"metadata":{"ownerReferences":[{"uid":"u"}],"managedFields":[{"manager":"m"}]}}`,
		`{"a":[["finalizers"]],"metadata":{"finalizers":null}}`,
	} {
		f.Add(s)
	}
	var c kindTypes
	k := &resource.KindInfo{Group: "management.service", Version: "v1", Kind: "Project"}
	kt, err := c.get(k, equivTypes{})
	require.NoError(f, err)
	listed, err := c.get(&resource.KindInfo{Kind: "Other"}, nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, doc string) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(doc)) != nil || !json.Valid(buf.Bytes()) {
			return
		}
		b := buf.Bytes()
		for _, kt := range []*kindType{kt, listed} {
			if walkGranular(kt.granular, b) {
				assert.True(t, mayHaveList(kt.listNames, b), "%s", b)
				assert.True(t, hasGranularLists(kt, b), "%s", b)
			}
		}
	})
}

// TestHasGranularLists names the cases trackFields tells apart.
func TestHasGranularLists(t *testing.T) {
	var c kindTypes
	kt, err := c.get(&resource.KindInfo{Kind: "Project"}, equivTypes{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"finalizers", "ownerReferences", "zones"}, kt.listNames)
	for doc, want := range map[string]bool{
		`{"metadata":{"finalizers":["a"]}}`:                         true,
		`{"metadata":{"finalizers":[]}}`:                            false,
		`{"metadata":{"ownerReferences":[{"uid":"u"}]}}`:            true,
		`{"spec":{"zones":["z"]}}`:                                  true,
		`{"spec":{"clusters":["c"]}}`:                               false,
		`{"metadata":{"labels":{"finalizers":"[1]"}}}`:              false,
		`{"metadata":{"annotations":{"a":"\"finalizers\":[1]"}}}`:   false,
		`{"spec":{"finalizers":["a"]}}`:                             false,
		`{"metadata":{"managedFields":[{"f":1}]},"kind":"Project"}`: false,
	} {
		assert.Equal(t, want, hasGranularLists(kt, []byte(doc)), doc)
	}
}
