package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// FuzzDropUnknownFields checks the pruning of unknown fields of an apply
// configuration: it never panics, and what it returns decodes strictly into the kind.
func FuzzDropUnknownFields(f *testing.F) {
	for _, s := range []string{`{"spec":{"displayName":"a","colour":1}}`, `{"metadata":{"labels":{"a":"b"},"x":[]}}`,
		`{"spec":{"allowedClusters":[{"name":"a","zone":"z"},3]}}`, `[]`, `null`, `{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}]}}`} {
		f.Add(s)
	}
	typ := reflect.TypeOf(&resource.Project{})
	f.Fuzz(func(t *testing.T, config string) {
		out, unknown, err := dropUnknownFields([]byte(config), typ)
		if err != nil {
			return
		}
		var p resource.Project
		if json.Unmarshal(out, &p) != nil {
			return // wrong types are the store's to refuse
		}
		var again []string
		_, again, err = dropUnknownFields(out, typ)
		require.NoError(t, err)
		require.Empty(t, again, "nothing unknown is left (dropped %v)", unknown)
	})
}
