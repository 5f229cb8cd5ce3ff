package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNameColumnDoc checks that a Table's Name column is described by the schema's
// documentation of metadata.name, as kube-apiserver describes it by ObjectMeta's.
func TestNameColumnDoc(t *testing.T) {
	require.Equal(t, "Unique within a namespace. Needed when creating unless generateName is used. Cannot be updated.",
		nameColumn.Description)
	require.Empty(t, objectMetaDoc("nosuchfield"))
}
