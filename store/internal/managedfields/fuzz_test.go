package managedfields

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzFieldsV1RoundTrip checks that whatever ParseFieldsV1 or FromObject accepts
// encodes to valid JSON that parses back to the same set with the same bytes, and
// that neither they nor Update panic on arbitrary input.
//
// The fuzz bodies of this package keep each check's condition and call require only
// once it has failed: require's t.Helper calls would cost as much as the body.
func FuzzFieldsV1RoundTrip(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `{".":{}}`,
		`{"f:spec":{"f:ttl":{}}}`,
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:ttl":{}}}`,
		`{"f:a":{".":{},"f:b":{"f:c":{}}},"i:3":{},"i:-1":{},"v:\"x\"":{},"k:{\"b\":1,\"a\":[1,2]}":{"f:x":{}}}`,
		`{"i:007":{},"i:7":{"f:q":{}},"v:1e5":{},"v:{\"z\":null}":{}}`,
		`{"f:\u003c\u00fc\u003e":{},"f:":{}}`,
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n","labels":{"a":"b"}},"spec":{"ttl":1,"l":[1,{}],"e":{}},"status":{"s":null}}`,
		`{"spec":{"x":{"y":{"z":{}}}}}`,
		`{"f:a":1}`, `{"x:a":{}}`, `{"k:1":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseFieldsV1(data); err == nil {
			checkRoundTrip(t, s)
		}
		for _, w := range []Write{{}, {StatusSubresource: true}, {Subresource: "status"}} {
			if s, err := FromObject(data, w); err == nil {
				checkRoundTrip(t, s)
			}
		}
		entries, err := Update(nil, nil, data, Write{Manager: "m", Now: time.Unix(0, 0)})
		if err == nil && len(entries) > 0 {
			if _, err := Update(entries, data, []byte(`{}`), Write{Manager: "n", Now: time.Unix(1, 0)}); err != nil {
				require.NoError(t, err, "update of our own entries")
			}
		}
	})
}

func checkRoundTrip(t *testing.T, s Set) {
	t.Helper()
	enc := s.FieldsV1()
	if !json.Valid(enc) {
		require.Failf(t, "invalid JSON encoding", "%q", enc)
	}
	back, err := ParseFieldsV1(enc)
	if err != nil {
		require.NoError(t, err, "encoding %s does not parse", enc)
	}
	if !back.Equal(s) {
		require.Failf(t, "round trip changed the set", "%s", enc)
	}
	if again := back.FieldsV1(); !bytes.Equal(again, enc) {
		require.Failf(t, "encoding is not stable", "%s then %s", enc, again)
	}
}
