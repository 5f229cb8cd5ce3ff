package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// checkError fails unless err is an *Error wrapping exactly one class.
func checkError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if classOf(err) == nil {
		t.Fatalf("error %v wraps no class or several", err)
	}
}

// checkCanonical fails unless out is valid JSON that decodes within the limits
// and encodes back to the same bytes.
func checkCanonical(t *testing.T, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON: %q", out)
	}
	v, err := decode(out, "output")
	if err != nil {
		t.Fatalf("output does not decode: %v", err)
	}
	again, err := encode(v)
	if err != nil {
		t.Fatalf("output does not encode: %v", err)
	}
	if !bytes.Equal(out, again) {
		t.Fatalf("output is not canonical:\n%s\n%s", out, again)
	}
}

func FuzzApply(f *testing.F) {
	seeds := []struct{ doc, patch string }{
		{`{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`},
		{`{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`},
		{`{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`, `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`},
		{`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`},
		{`{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2.0}]`},
		{`{"/":9,"~1":10}`, `[{"op":"test","path":"/~01","value":10}]`},
		{`{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`},
		{`{"a":[1]}`, `[{"op":"copy","from":"/a","path":"/a/-"},{"op":"copy","from":"","path":"/a/0"}]`},
		{`[]`, `[{"op":"move","from":"/0","path":""}]`},
		{`{"a":1e400}`, `[{"op":"test","path":"/a","value":10e399}]`},
		{`{"a":1}`, `[{"op":"add","path":"/a","value":1,"op":"remove"}]`},
	}
	for _, s := range seeds {
		f.Add([]byte(s.doc), []byte(s.patch), uint16(0))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte, budget uint16) {
		docCopy, patchCopy := bytes.Clone(doc), bytes.Clone(patch)
		opts := Options{MaxOperations: 64, MaxCopyBytes: int64(budget)}
		out, err := Apply(doc, patch, opts)
		if !bytes.Equal(doc, docCopy) || !bytes.Equal(patch, patchCopy) {
			t.Fatal("Apply changed its arguments")
		}
		if err != nil {
			checkError(t, err)
			if out != nil {
				t.Fatal("output with an error")
			}
			return
		}
		checkCanonical(t, out)
		again, err := Apply(doc, patch, opts)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("Apply is not deterministic: %q, %v", again, err)
		}
		same, err := Apply(out, []byte(`[]`), opts)
		if err != nil || !bytes.Equal(out, same) {
			t.Fatalf("an empty patch changed the result: %q, %v", same, err)
		}
	})
}

func FuzzMergePatch(f *testing.F) {
	seeds := []struct{ doc, patch string }{
		{`{"a":"b"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`},
		{`{"a":["b"]}`, `{"a":"c"}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`},
		{`{"e":null}`, `{"a":1}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`},
		{`{"a":1}`, `{"a":{"b":null,"c":[null]}}`},
		{`{"n":1.0}`, `{"n":12345678901234567890}`},
		{`["a"]`, `["b"]`},
		{`{"a":1}`, `{"a":1,"a":2}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s.doc), []byte(s.patch))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		docCopy, patchCopy := bytes.Clone(doc), bytes.Clone(patch)
		out, err := MergePatch(doc, patch)
		if !bytes.Equal(doc, docCopy) || !bytes.Equal(patch, patchCopy) {
			t.Fatal("MergePatch changed its arguments")
		}
		if err != nil {
			checkError(t, err)
			if out != nil {
				t.Fatal("output with an error")
			}
			return
		}
		checkCanonical(t, out)
		twice, err := MergePatch(out, patch)
		if err != nil {
			t.Fatalf("applying the patch again failed: %v", err)
		}
		if !bytes.Equal(out, twice) {
			t.Fatalf("not idempotent:\nonce:  %s\ntwice: %s", out, twice)
		}
		again, err := MergePatch(doc, patch)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("MergePatch is not deterministic: %q, %v", again, err)
		}
	})
}
