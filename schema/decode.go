package schema

import (
	"encoding/json"

	"github.com/management-service/mgmt/resource/jsonscan"
)

// decodeFast decodes the JSON text data as decodeJSON does (objects as
// map[string]any, arrays as []any, numbers as json.Number, the last of duplicate
// keys winning), through the byte scanners of jsonscan rather than encoding/json's
// reflective decoder, which was half of the validation of a valid object. It
// reports false for any text it does not decode (invalid JSON, data after the
// value); the caller then takes decodeJSON, whose error is the one reported.
func decodeFast(data []byte) (any, bool) {
	return decodeFastMax(data, jsonscan.MaxDepth)
}

// decodeFastMax is decodeFast that also reports false for a document whose objects
// and arrays nest deeper than maxBrackets (the document itself is level 1), as
// depthExceeds counts them.
func decodeFastMax(data []byte, maxBrackets int) (any, bool) {
	i := jsonscan.SkipSpace(data, 0)
	v, end, ok := decodeValue(data, i, 1, maxBrackets)
	if !ok || jsonscan.SkipSpace(data, end) != len(data) {
		return nil, false
	}
	return v, true
}

// decodeValue decodes the value at b[i] (not white space), nested in depth-1
// arrays and objects, and returns the offset after it; an object or array deeper
// than maxBrackets is not decoded (false).
func decodeValue(b []byte, i, depth, maxBrackets int) (any, int, bool) {
	if i >= len(b) || depth > jsonscan.MaxDepth || depth > maxBrackets && (b[i] == '{' || b[i] == '[') {
		return nil, 0, false
	}
	switch c := b[i]; {
	case c == '"':
		s, end, ok := decodeString(b, i)
		return s, end, ok
	case c == '{':
		m := map[string]any{}
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return m, i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, 0, false
			}
			key, end, ok := decodeString(b, i)
			if !ok {
				return nil, 0, false
			}
			i = jsonscan.SkipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return nil, 0, false
			}
			i = jsonscan.SkipSpace(b, i+1)
			v, end, ok := decodeValue(b, i, depth+1, maxBrackets)
			if !ok {
				return nil, 0, false
			}
			m[key] = v
			i = jsonscan.SkipSpace(b, end)
			if i >= len(b) {
				return nil, 0, false
			}
			if b[i] == '}' {
				return m, i + 1, true
			}
			if b[i] != ',' {
				return nil, 0, false
			}
			i = jsonscan.SkipSpace(b, i+1)
		}
	case c == '[':
		a := []any{}
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return a, i + 1, true
		}
		for {
			v, end, ok := decodeValue(b, i, depth+1, maxBrackets)
			if !ok {
				return nil, 0, false
			}
			a = append(a, v)
			i = jsonscan.SkipSpace(b, end)
			if i >= len(b) {
				return nil, 0, false
			}
			if b[i] == ']' {
				return a, i + 1, true
			}
			if b[i] != ',' {
				return nil, 0, false
			}
			i = jsonscan.SkipSpace(b, i+1)
		}
	case c == '-' || c >= '0' && c <= '9':
		end, err := jsonscan.ScanNumber(b, i)
		if err != nil {
			return nil, 0, false
		}
		return json.Number(b[i:end]), end, true
	case c == 't':
		end, err := jsonscan.ScanLiteral(b, i, "true")
		return true, end, err == nil
	case c == 'f':
		end, err := jsonscan.ScanLiteral(b, i, "false")
		return false, end, err == nil
	case c == 'n':
		end, err := jsonscan.ScanLiteral(b, i, "null")
		return nil, end, err == nil
	}
	return nil, 0, false
}

// decodeString decodes the string whose opening quote is b[i].
func decodeString(b []byte, i int) (string, int, bool) {
	end, f, err := jsonscan.ScanString(b, i)
	if err != nil {
		return "", 0, false
	}
	content := b[i+1 : end-1]
	if f != 0 {
		return string(jsonscan.Unquote(content)), end, true
	}
	return string(content), end, true
}
