package jsonscan_test

import (
	"fmt"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// Find members of an object without decoding it, then report an invalid string in
// one's own words.
func Example() {
	obj := []byte(`{"kind":"Project","spec":{"displayName":"Caf\u00e9 \u003cdev\u003e"}}`)
	jsonscan.EachMember(obj, func(key, value []byte) bool {
		fmt.Printf("%s: %s\n", key, value)
		return true
	})

	name := []byte(`"Caf\u00e9"`)
	end, flags, _ := jsonscan.ScanString(name, 0)
	if flags&jsonscan.Escaped != 0 {
		fmt.Printf("decoded: %s\n", jsonscan.Unquote(name[1:end-1]))
	}
	fmt.Printf("encoded: %s\n", jsonscan.AppendQuote(nil, []byte("<dev>")))

	bad := []byte("\"tab\tinside\"")
	if at, _, err := jsonscan.ScanString(bad, 0); err != nil {
		fmt.Printf("byte %d (%q): %v\n", at, bad[at], err)
	}
	// Output:
	// kind: "Project"
	// spec: {"displayName":"Caf\u00e9 \u003cdev\u003e"}
	// decoded: Café
	// encoded: "\u003cdev\u003e"
	// byte 4 ('\t'): invalid character in string literal
}
