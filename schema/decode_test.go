package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// checkDecodeFast checks that decodeFast, when it decodes, gives what decodeJSON
// gives, and that it decodes whatever decodeJSON decodes.
func checkDecodeFast(t *testing.T, data []byte) {
	want, err := decodeJSON(data)
	got, ok := decodeFast(data)
	if err != nil {
		require.False(t, ok, "decodeFast decoded what decodeJSON refuses: %q", data)
		return
	}
	require.True(t, ok, "decodeFast refused what decodeJSON decodes: %q", data)
	require.Equal(t, want, got)
}

func TestDecodeFast_agrees_with_decodeJSON(t *testing.T) {
	for _, s := range []string{`{}`, `[]`, `null`, ` {"a" : [1, -2.5e3, true, false, null, "x\u00e9\n"] } `, `{"a":1,"a":{"b":[]}}`,
		`"\ud800"`, "\"\xff\"", `{"a":1}x`, `{"a":1,}`, `[1,]`, `{"a"}`, `01`, `-`, `tru`, `{"a":1} {}`, `"\u0000<>&"`, ``, ` `,
		`[[[[]]]]`, `{"k\"ey":"v"}`} {
		t.Run(s, func(t *testing.T) { checkDecodeFast(t, []byte(s)) })
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{tokenMinimal, `{"a":[1,{"b":"\u00e9"}]}`, "[\"\xed\xa0\x80\"]", `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if depthExceeds(data, MaxDepth) {
			return
		}
		checkDecodeFast(t, data)
	})
}
