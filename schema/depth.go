package schema

import (
	"bytes"
	"encoding/json"

	"github.com/management-service/mgmt/resource"
)

// MaxDepth is the deepest nesting of objects and arrays an instance may have; the
// object itself is level 1. Deeper documents are refused before validation, because a
// recursive schema costs time in proportion to the depth (reliability-security §5.4).
const MaxDepth = 64

// depthExceeds reports whether the JSON text nests objects and arrays deeper than
// max. It looks only at brackets outside strings, so it is linear and allocates
// nothing; malformed JSON is left to the decoder.
func depthExceeds(data []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// depthPath returns the field path of the first value that opens nesting level
// max+1, in the notation of [resource.Path]. It is called only after [depthExceeds]
// said yes, and stops there.
func depthPath(data []byte, max int) string {
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
	render := func() string {
		var p resource.Path
		for _, f := range stack {
			switch {
			case f.array:
				p = p.Index(f.index)
			case isIdentifier(f.key):
				p = p.Child(f.key)
			default:
				p = p.Key(f.key)
			}
		}
		return p.String()
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return render()
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= max {
					return render()
				}
				stack = append(stack, frame{array: t == '[', wantKey: t == '{'})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
				stack[n-1].key = t
				stack[n-1].wantKey = false
				continue
			}
			afterValue()
		default:
			afterValue()
		}
	}
}
