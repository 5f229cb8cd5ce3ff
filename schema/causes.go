package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/management-service/mgmt/resource"
)

// maxCauses is the largest number of causes one Invalid error lists; the rest are
// counted in a last cause.
const maxCauses = 100

// maxShownValue is the longest string value quoted in a message, in bytes.
const maxShownValue = 64

// Keywords whose failure is best explained by the description of the schema that
// holds them: the descriptions of string formats are written as rules.
var describedKeywords = map[string]bool{
	"pattern": true, "format": true, "const": true, "not": true, "maxContains": true,
	"minContains": true, "anyOf": true, "oneOf": true,
}

// stepKind says how one instance step was taken: into a declared property, a map
// entry, a property name or an array item.
type stepKind int

const (
	stepField stepKind = iota // a declared property: .name
	stepKey                   // a map entry: [key]
	stepIndex                 // an array item: [i]
	stepName                  // a property name under propertyNames: [key]
)

// causeBuilder turns the leaves of a jsonschema.ValidationError tree into field
// errors with Kubernetes-style paths.
type causeBuilder struct {
	docs     map[string]any // schema documents by URL
	instance any
	out      resource.ErrorList
}

// fieldErrors returns the deduplicated, sorted field errors of ve, at most maxCauses
// of them plus one that counts the rest.
func fieldErrors(ve *jsonschema.ValidationError, docs map[string]any, instance any) resource.ErrorList {
	b := &causeBuilder{docs: docs, instance: instance}
	b.walk(ve)
	list := b.out
	sort.SliceStable(list, func(i, j int) bool {
		if c := naturalCompare(list[i].Field, list[j].Field); c != 0 {
			return c < 0
		}
		return list[i].Error() < list[j].Error()
	})
	out := list[:0]
	for i, fe := range list {
		if i > 0 && fe.Error() == list[i-1].Error() {
			continue
		}
		out = append(out, fe)
	}
	if len(out) > maxCauses {
		rest := len(out) - maxCauses
		out = append(out[:maxCauses:maxCauses], &resource.FieldError{
			Type:   resource.CauseFieldValueTooMany,
			Detail: fmt.Sprintf("%d more errors not shown", rest),
		})
	}
	return out
}

func (b *causeBuilder) walk(e *jsonschema.ValidationError) {
	kw := lastToken(e.KeywordLocation)
	switch {
	case kw == "anyOf" || kw == "oneOf" || kw == "minContains":
		b.leaf(e) // the causes are the alternatives that failed: explain once
	case len(e.Causes) > 0:
		for _, c := range e.Causes {
			b.walk(c)
		}
	default:
		b.leaf(e)
	}
}

func (b *causeBuilder) add(fe *resource.FieldError) { b.out = append(b.out, fe) }

// leaf converts one failed keyword into field errors.
func (b *causeBuilder) leaf(e *jsonschema.ValidationError) {
	inst := splitPointer(e.InstanceLocation)
	steps := stepKinds(splitPointer(e.KeywordLocation))
	if len(steps) == len(inst)+1 {
		steps = steps[:len(inst)] // the failing keyword itself was counted as a step
	}
	if len(steps) != len(inst) {
		steps = nil
	}
	docURL, frag := splitLocation(e.AbsoluteKeywordLocation)
	doc := b.docs[docURL]
	node, _ := lookup(doc, frag)
	kw, holderToks := "", frag
	falseSchema := node == false && endsAtSubschema(frag)
	if falseSchema && len(steps) > 0 && steps[len(steps)-1] == stepKey {
		steps[len(steps)-1] = stepField // a property no schema allows: an unknown field
	}
	path, value := b.instancePath(inst, steps)
	switch {
	case falseSchema:
		kw = "false"
	case len(frag) >= 3 && frag[len(frag)-3] == "dependentRequired":
		kw, holderToks = "dependentRequired", frag[:len(frag)-3]
	case len(frag) > 0:
		kw, holderToks = frag[len(frag)-1], frag[:len(frag)-1]
	}
	holder, _ := lookup(doc, holderToks)
	hm, _ := holder.(map[string]any)
	detail := func(generic string) string {
		if d := ruleDescription(doc, frag); d != "" {
			return d
		}
		if kw == "not" && hm != nil {
			if sub, ok := hm["not"].(map[string]any); ok {
				if d, ok := sub["description"].(string); ok && d != "" {
					return d // the forbidden schema says what it forbids
				}
			}
		}
		if describedKeywords[kw] && hm != nil {
			if d, ok := hm["description"].(string); ok && d != "" {
				return d
			}
		}
		return generic
	}
	shown := showValue(value)
	if hm != nil && hm["writeOnly"] == true {
		shown = nil // a secret: never echoed
	}

	switch kw {
	case "type":
		b.add(&resource.FieldError{Type: resource.CauseFieldValueTypeInvalid, Field: path.String(),
			BadValue: jsonType(value), Detail: "must be of type " + strings.Join(typeNames(hm["type"]), " or ")})
	case "required":
		obj, _ := value.(map[string]any)
		for _, name := range stringList(hm["required"]) {
			if _, ok := obj[name]; !ok {
				b.add(resource.Required(path.Child(name), detail("")))
			}
		}
	case "dependentRequired":
		obj, _ := value.(map[string]any)
		dep := frag[len(frag)-2]
		deps, _ := hm["dependentRequired"].(map[string]any)
		for _, name := range stringList(deps[dep]) {
			if _, ok := obj[name]; !ok {
				b.add(resource.Required(path.Child(name), detail(dep+" is set")))
			}
		}
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		for _, name := range unknownProperties(hm, obj) {
			b.add(resource.Forbidden(path.Child(name), "unknown field"))
		}
	case "false":
		msg := "must not be set"
		if k := lastToken(e.KeywordLocation); k == "additionalProperties" || k == "unevaluatedProperties" {
			msg = "unknown field"
		}
		b.add(resource.Forbidden(path, msg))
	case "enum":
		allowed := make([]string, 0)
		if list, ok := hm["enum"].([]any); ok {
			for _, a := range list {
				if s, ok := a.(string); ok {
					allowed = append(allowed, s)
				} else {
					allowed = append(allowed, compactJSON(a))
				}
			}
		}
		b.add(resource.NotSupported(path, shown, allowed))
	case "const":
		b.add(invalid(path, shown, detail("must be "+literalJSON(hm["const"]))))
	case "pattern":
		b.add(invalid(path, shown, detail(fmt.Sprintf("must match the regular expression %q", hm["pattern"]))))
	case "format":
		b.add(invalid(path, shown, detail(fmt.Sprintf("must be a valid %s", hm["format"]))))
	case "minLength":
		n := number(hm["minLength"])
		if s, _ := value.(string); s == "" && n == "1" {
			b.add(resource.Required(path, detail("")))
		} else {
			b.add(invalid(path, shown, detail("must have at least "+n+" characters")))
		}
	case "maxLength":
		n := number(hm["maxLength"])
		if n == "0" {
			b.add(resource.Forbidden(path, detail("must be empty")))
		} else {
			b.add(&resource.FieldError{Type: resource.CauseFieldValueTooLong, Field: path.String(),
				Detail: detail("must have at most " + n + " characters")})
		}
	case "minimum":
		b.add(invalid(path, shown, detail("must be greater than or equal to "+number(hm[kw]))))
	case "exclusiveMinimum":
		b.add(invalid(path, shown, detail("must be greater than "+number(hm[kw]))))
	case "maximum":
		b.add(invalid(path, shown, detail("must be less than or equal to "+number(hm[kw]))))
	case "exclusiveMaximum":
		b.add(invalid(path, shown, detail("must be less than "+number(hm[kw]))))
	case "multipleOf":
		b.add(invalid(path, shown, detail("must be a multiple of "+number(hm[kw]))))
	case "minItems":
		n := number(hm[kw])
		if list, _ := value.([]any); len(list) == 0 {
			b.add(resource.Required(path, detail("must have at least "+n+" items")))
		} else {
			b.add(invalid(path, nil, detail("must have at least "+n+" items")))
		}
	case "maxItems":
		list, _ := value.([]any)
		b.add(&resource.FieldError{Type: resource.CauseFieldValueTooMany, Field: path.String(),
			BadValue: len(list), Detail: detail("must have at most " + number(hm[kw]) + " items")})
	case "minProperties":
		b.add(invalid(path, nil, detail("must have at least "+number(hm[kw])+" entries")))
	case "maxProperties":
		obj, _ := value.(map[string]any)
		msg := "must have at most " + number(hm[kw]) + " entries"
		if number(hm[kw]) == "0" {
			msg = "must be {}"
		}
		b.add(&resource.FieldError{Type: resource.CauseFieldValueTooMany, Field: path.String(),
			BadValue: len(obj), Detail: detail(msg)})
	case "uniqueItems":
		list, _ := value.([]any)
		if j := firstDuplicate(list); j >= 0 {
			var dup any
			if hm["writeOnly"] != true {
				dup = showValue(list[j])
			}
			b.add(&resource.FieldError{Type: resource.CauseFieldValueDuplicate, Field: path.Index(j).String(), BadValue: dup})
		} else {
			b.add(&resource.FieldError{Type: resource.CauseFieldValueDuplicate, Field: path.String(), Detail: e.Message})
		}
	case "maxContains":
		b.add(invalid(path, nil, detail("at most "+number(hm[kw])+" items may match the 'contains' schema")))
	case "minContains":
		n := "1"
		if hm != nil && hm[kw] != nil {
			n = number(hm[kw])
		}
		b.add(invalid(path, nil, detail("at least "+n+" items must match the 'contains' schema")))
	case "not":
		b.add(invalid(path, shown, detail("is not allowed by the schema")))
	case "anyOf":
		b.add(invalid(path, shown, detail("must match at least one of the allowed forms")))
	case "oneOf":
		b.add(invalid(path, shown, detail("must match exactly one of the allowed forms")))
	default:
		b.add(invalid(path, shown, detail(e.Message)))
	}
}

func invalid(p resource.Path, value any, detail string) *resource.FieldError {
	return &resource.FieldError{Type: resource.CauseFieldValueInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// instancePath renders the instance steps as a field path and returns the value
// found there; under propertyNames the value is the property name itself.
func (b *causeBuilder) instancePath(inst []string, steps []stepKind) (p resource.Path, value any) {
	value = b.instance
	for i, tok := range inst {
		kind, isName := stepField, false
		switch cur := value.(type) {
		case []any:
			kind = stepIndex
			value = nil
			if n, err := strconv.Atoi(tok); err == nil && n >= 0 && n < len(cur) {
				value = cur[n]
			}
		case map[string]any:
			switch {
			case steps != nil && steps[i] == stepName:
				kind, isName = stepKey, true // the name is validated, not its value
			case steps != nil:
				kind = steps[i]
			case !isIdentifier(tok):
				kind = stepKey
			}
			if isName {
				value = tok
			} else {
				value = cur[tok]
			}
		default:
			value = nil
		}
		switch kind {
		case stepIndex:
			n, _ := strconv.Atoi(tok)
			p = p.Index(n)
		case stepKey:
			p = p.Key(tok)
		default:
			if isIdentifier(tok) {
				p = p.Child(tok)
			} else {
				p = p.Key(tok) // "spec.a.b" would be ambiguous for the field "a.b"
			}
		}
	}
	return p, value
}

// stepKinds reads, from a keyword location, how each instance step was taken.
func stepKinds(toks []string) []stepKind {
	var steps []stepKind
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "properties":
			steps = append(steps, stepField)
			i++
		case "patternProperties":
			steps = append(steps, stepKey)
			i++
		case "additionalProperties", "unevaluatedProperties":
			steps = append(steps, stepKey)
		case "propertyNames":
			steps = append(steps, stepName)
		case "items", "contains", "unevaluatedItems":
			steps = append(steps, stepIndex)
		case "prefixItems":
			steps = append(steps, stepIndex)
			i++
		case "allOf", "anyOf", "oneOf", "dependentSchemas", "dependentRequired", "$defs":
			i++
		}
	}
	return steps
}

// endsAtSubschema reports whether the JSON-pointer tokens frag, read from the root of
// a schema document, lead to a subschema rather than into the value of a keyword: a
// false found there is the boolean schema false, which jsonschema/v5 reports at its
// own location, with no keyword after it. "additionalProperties": false is the
// exception: v5 keeps it as a keyword of the schema that holds it, and reports the
// properties it refuses at that schema's instance.
func endsAtSubschema(frag []string) bool {
	keyword := ""
	for i := 0; i < len(frag); i++ {
		tok := frag[i]
		switch {
		case schemaMapKeywords[tok] || schemaListKeywords[tok]:
			i++ // the name or index of one subschema
			if i == len(frag) {
				return false // the map or list itself
			}
			keyword = ""
		case schemaKeywords[tok]:
			keyword = tok
		default:
			return false // a keyword's value, or inside it
		}
	}
	return keyword != "additionalProperties"
}

// firstDuplicate returns the index of the first item of list equal, as JSON values, to
// an earlier one (numbers compare by value: 1 and 1.0 are equal), or -1. It is the
// item jsonschema/v5's uniqueItems reports.
func firstDuplicate(list []any) int {
	seen := make(map[string]bool, len(list))
	var key []byte
	for i, item := range list {
		key = canonicalJSON(key[:0], item)
		if seen[string(key)] {
			return i
		}
		seen[string(key)] = true
	}
	return -1
}

// canonicalJSON appends to dst an encoding of v that is the same for JSON values
// jsonschema/v5 finds equal, and differs otherwise: object members sorted by name,
// numbers as exact fractions.
func canonicalJSON(dst []byte, v any) []byte {
	switch t := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(t))
		for name := range t {
			names = append(names, name)
		}
		sort.Strings(names)
		dst = append(dst, '{')
		for _, name := range names {
			dst = strconv.AppendQuote(dst, name)
			dst = canonicalJSON(append(dst, ':'), t[name])
			dst = append(dst, ',')
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for _, item := range t {
			dst = append(canonicalJSON(dst, item), ',')
		}
		return append(dst, ']')
	case string:
		return strconv.AppendQuote(dst, t)
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(t)); ok {
			return append(append(dst, '#'), r.RatString()...)
		}
		return append(append(dst, '#'), t...)
	default: // bool, nil
		return fmt.Append(dst, t)
	}
}

// ruleDescription returns the description of the innermost "then"/"else" schema the
// failing keyword sits in: such a schema is a rule, and its description says it.
func ruleDescription(doc any, frag []string) string {
	var found string
	node := doc
	for i := 0; i < len(frag); i++ {
		m, ok := node.(map[string]any)
		if !ok {
			break
		}
		tok := frag[i]
		node = m[tok]
		if schemaMapKeywords[tok] || schemaListKeywords[tok] {
			if i+1 < len(frag) {
				i++
				switch sub := node.(type) {
				case map[string]any:
					node = sub[frag[i]]
				case []any:
					n, err := strconv.Atoi(frag[i])
					if err != nil || n < 0 || n >= len(sub) {
						return found
					}
					node = sub[n]
				}
			}
			continue
		}
		if tok == "then" || tok == "else" {
			if sm, ok := node.(map[string]any); ok {
				if d, ok := sm["description"].(string); ok && d != "" {
					found = d
				}
			}
		}
	}
	return found
}

// unknownProperties lists, sorted, the names of obj that neither "properties" nor
// "patternProperties" of the schema m declare.
func unknownProperties(m map[string]any, obj map[string]any) []string {
	props, _ := m["properties"].(map[string]any)
	var patterns []*regexp.Regexp
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for p := range pp {
			if re, err := regexp.Compile(p); err == nil {
				patterns = append(patterns, re)
			}
		}
	}
	var out []string
next:
	for name := range obj {
		if _, ok := props[name]; ok {
			continue
		}
		for _, re := range patterns {
			if re.MatchString(name) {
				continue next
			}
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// splitLocation splits an absolute keyword location into the document URL and the
// unescaped JSON-pointer tokens of its fragment.
func splitLocation(loc string) (string, []string) {
	u, frag, _ := strings.Cut(loc, "#")
	return u, splitPointer(frag)
}

// splitPointer splits a JSON pointer as the library writes it (each token escaped
// with ~0, ~1 and then URL path escaping) into its tokens.
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		p = strings.ReplaceAll(p, "~1", "/")
		parts[i] = strings.ReplaceAll(p, "~0", "~")
	}
	return parts
}

func lastToken(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[i+1:]
	}
	return ptr
}

// lookup follows JSON-pointer tokens through a decoded document.
func lookup(doc any, toks []string) (any, bool) {
	node := doc
	for _, t := range toks {
		switch cur := node.(type) {
		case map[string]any:
			v, ok := cur[t]
			if !ok {
				return nil, false
			}
			node = v
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(cur) {
				return nil, false
			}
			node = cur[n]
		default:
			return nil, false
		}
	}
	return node, true
}

// literal is a value shown in a message as it is, without quotes.
type literal string

// showValue returns what a message shows of an instance value: strings (cut to
// maxShownValue bytes), numbers, booleans and null; nothing for objects and arrays.
func showValue(v any) any {
	switch t := v.(type) {
	case string:
		if len(t) > maxShownValue {
			cut := maxShownValue
			for cut > 0 && !isRuneStart(t[cut]) {
				cut--
			}
			return t[:cut] + "..."
		}
		return t
	case json.Number:
		return literal(t)
	case bool:
		return literal(strconv.FormatBool(t))
	case nil:
		return literal("null")
	default:
		return nil
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func jsonType(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func typeNames(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// number renders a numeric schema value as written in the schema.
func number(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return fmt.Sprint(v)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func literalJSON(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return compactJSON(v)
}

var identifierRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func isIdentifier(s string) bool { return identifierRE.MatchString(s) }

// naturalCompare orders strings with their digit runs compared as numbers, so that
// rules[2] sorts before rules[10].
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if na != nb {
				return strings.Compare(na, nb)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
