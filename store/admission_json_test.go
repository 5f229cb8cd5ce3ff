package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

func TestAdmissionRequest_ObjectJSON_is_json_Marshal(t *testing.T) {
	widget := resource.RawKind(resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"})
	raw := widget.New().(*resource.RawObject)
	require.NoError(t, json.Unmarshal([]byte(`{"metadata":{"name":"w","labels":{"a":"<b>"}},"spec":{"x":[1,"\u2028"]},"status":{}}`), raw))
	odd := storetest.BenchInstance(1)
	odd.Annotations["bad"] = "\xff" + strings.Repeat("é", 3) // json.Marshal's own fallback
	odd.ResourceVersion = "42"
	for name, obj := range map[string]resource.Object{
		"typed": storetest.BenchInstance(0), "generic": raw, "odd strings": odd, "nil": nil,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(obj)
			require.NoError(t, err)
			got, err := (&store.AdmissionRequest{Object: obj}).ObjectJSON()
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}
