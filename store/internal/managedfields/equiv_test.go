package managedfields

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/management-service/mgmt/resource"
)

// TestMatchesReference checks Update against the original implementation on inputs
// chosen for the byte-level comparison: spellings that decode alike, member order,
// repeated names, nesting at encoding/json's limit and large objects.
func TestMatchesReference(t *testing.T) {
	nest := func(n int, open, close, leaf string) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
	}
	var many, manyRev strings.Builder
	many.WriteString(`{"spec":{`)
	manyRev.WriteString(`{"spec":{`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			many.WriteString(",")
			manyRev.WriteString(",")
		}
		fmt.Fprintf(&many, `"k%03d":%d`, i, i)
		fmt.Fprintf(&manyRev, `"k%03d":%d`, 299-i, (299-i)%7)
	}
	many.WriteString("}}")
	manyRev.WriteString("}}")
	pairs := [][2]string{
		{`{"spec":{"a":1,"b":"x"}}`, `{"spec":{"b":"x","a":1.0}}`},
		{`{"spec":{"a":"\u00fc\/"}}`, `{"spec":{"a":"ü/"}}`},
		{`{"spec":{"a":"\ud800"}}`, "{\"spec\":{\"a\":\"\xff\"}}"},
		{`{"spec":{"a":"\ud83d\ude00"}}`, `{"spec":{"a":"😀"}}`},
		{`{"spec":{"a":1,"a":2}}`, `{"spec":{"a":2}}`},
		{`{"spec":{"a":{"x":1},"a":3}}`, `{"spec":{"a":{"x":1}}}`},
		{`{"sp\u0065c":{"a":1}}`, `{"spec":{"a":2}}`},
		{`{"spec":{"l":[1,{"b":2,"a":1}]}}`, `{"spec":{"l":[1.0,{"a":1,"b":2e0}]}}`},
		{`{"spec":{"l":[1,{"a":1,"a":2}]}}`, `{"spec":{"l":[1,{"a":2}]}}`},
		{`{"spec":{"n":9007199254740993}}`, `{"spec":{"n":9007199254740992.0}}`},
		{`{"spec":{"n":1e400}}`, `{"spec":{"n":1e400}}`},
		{`{"spec":{"n":1e400}}`, `{"spec":{"n":10e399}}`},
		{`{"spec":{"n":-0}}`, `{"spec":{"n":0}}`},
		{`{"spec":{"e":{}}}`, `{"spec":{"e":{ }}}`},
		{`{"spec":{"e":{}}}`, `{"spec":{"e":{"x":1}}}`},
		{`{"spec":{"e":"s"}}`, `{"spec":{"e":{"x":1}}}`},
		{`{"metadata":{"name":"a","labels":{"x":"1"}}}`, `{"metadata":{"labels":{"x":"1"},"name":"b"}}`},
		{`{"metadata":{"name":"a"}}`, `{"metadata":{}}`},
		{`{"metadata":{"name":"a"}}`, `{"metadata":"x"}`},
		{` {"a" : 1 } `, "\t{\"a\":1}\n"},
		{`{"a":1}`, `{"a":12}`},
		{`{"a":"x"}`, `{"a":"x" }`},
		{many.String(), manyRev.String()},
		// Nesting: encoding/json takes 10000 levels of arrays and objects, not more.
		{`{"a":` + nest(2000, `{"a":`, `}`, `1`) + `}`, `{"a":` + nest(2000, `{"a":`, `}`, `2`) + `}`},
		{`{"a":` + nest(1000, `[{"a":`, `}]`, `1`) + `}`, `{"a":` + nest(1000, `[{"a":`, `}]`, `2`) + `}`},
		{`{"a":` + nest(9999, `[`, `]`, `1`) + `}`, `{"a":` + nest(9999, `[`, `]`, `2`) + `}`},
		{`{"a":` + nest(10000, `[`, `]`, `1`) + `}`, `{"a":1}`},
		{`{"a":1}`, `{"a":` + nest(10000, `[`, `]`, `1`) + `}`},
		{`{"a":` + nest(10000, `{"a":`, `}`, `1`) + `}`, `{"a":1}`},
	}
	for i, p := range pairs {
		for _, w := range []Write{{Manager: "m", APIVersion: gv, Now: at(1)}, {Manager: "m", Now: at(1), Subresource: "status"}} {
			name := fmt.Sprintf("%d %.60s", i, p[0])
			t.Run(name, func(t *testing.T) {
				created := checkUpdate(t, nil, nil, []byte(p[0]), w)
				checkUpdate(t, created, []byte(p[0]), []byte(p[1]), Write{Manager: "n", APIVersion: gv, Now: at(2)})
				checkUpdate(t, created, []byte(p[1]), []byte(p[0]), Write{Manager: "n", APIVersion: gv, Now: at(2)})
			})
		}
	}
	deepFields := `{"f:a":` + nest(9998, `{"f:a":`, `}`, `{}`) + `}`
	tooDeep := `{"f:a":` + nest(9999, `{"f:a":`, `}`, `{}`) + `}`
	deepObj := `{"a":` + nest(9999, `{"a":`, `}`, `1`) + `}`
	_, err := Update(nil, nil, []byte(deepObj), Write{})
	assert.NoError(t, err, "10000 nested objects")
	_, err = Update(nil, []byte(deepObj), []byte(`{"a":{`+deepObj[1:]+`}`), Write{})
	assert.Error(t, err, "10001 nested objects: no error")
	for _, fv := range []string{deepFields, tooDeep} {
		entries := []resource.ManagedFieldsEntry{{Manager: "x", Operation: resource.ManagedFieldsOperationUpdate, FieldsV1: []byte(fv)}}
		checkUpdate(t, entries, []byte(`{"a":1}`), []byte(`{"a":2}`), Write{Manager: "m", Now: at(1)})
	}
}
