package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The fast path of validation.
//
// The library validates every value through a generic walk that allocates for each
// one (a map of the members of every object, at every schema it meets, and the
// location strings of its errors): on a create it was a third of the server's CPU,
// and an object of 40,000 labels took most of a second. Most writes are valid, and
// for a valid one nothing of that work is used. So each validator also compiles its
// schema, once, into a tree of fastNodes that answers only "valid or not", without
// allocating, for the keywords it knows exactly as the library applies them; a
// schema that uses anything else at some place is handed, at that place, to the
// library itself (a delegated node), and a schema whose meaning depends on the
// dynamic scope ($dynamicRef, $recursiveRef) gets no fast path at all.
//
// The fast path answers "valid" exactly when the library would; when it answers
// "not valid" (or gives up), the library validates the whole object again and its
// answer, with its error messages, is the one given. So the fast path can cost
// time, never a different answer, as long as each keyword below does what the
// library does: TestFast_agrees_with_the_library and FuzzFastValidate check that.

// fastTypes are the JSON types a "type" keyword allows, as bits.
const (
	typeNull = 1 << iota
	typeBoolean
	typeNumber
	typeInteger
	typeString
	typeArray
	typeObject
)

// fastNode is one compiled schema.
type fastNode struct {
	lib      *jsonschema.Schema
	delegate bool  // validated by the library (lib.Validate)
	always   *bool // a boolean schema

	types  uint8
	consts []any // one value, when "const" is set (string, bool or nil)
	enum   []any // string, bool or nil values

	minProps, maxProps int
	required           []string
	props              map[string]*fastNode
	propNames          *fastNode
	patternProps       []patternProp
	addlAllowed        *bool
	addl               *fastNode
	depRequired        map[string][]string

	minItems, maxItems       int
	prefixItems              []*fastNode
	items                    *fastNode
	contains                 *fastNode
	minContains, maxContains int

	minLen, maxLen int
	pattern        func(string) bool

	numeric                               bool // a number keyword is set
	minimum, maximum, exMin, exMax, mulOf *big.Rat

	ref, not, ifNode, thenNode, elseNode *fastNode
	allOf, anyOf, oneOf                  []*fastNode
}

type patternProp struct {
	re   *regexp.Regexp
	node *fastNode
}

// errNoFastPath says a schema depends on the dynamic scope.
var errNoFastPath = fmt.Errorf("schema: no fast path")

// compileFast compiles s, or returns errNoFastPath.
func compileFast(s *jsonschema.Schema) (*fastNode, error) {
	c := fastCompiler{nodes: map[*jsonschema.Schema]*fastNode{}}
	n := c.node(s)
	if c.dynamic {
		return nil, errNoFastPath
	}
	return n, nil
}

type fastCompiler struct {
	nodes   map[*jsonschema.Schema]*fastNode
	dynamic bool
}

func simpleValue(v any) bool {
	switch v.(type) {
	case nil, bool, string:
		return true
	}
	return false
}

// needsLibrary reports whether s uses a keyword the fast path does not apply
// itself (or applies it in a way it cannot reproduce exactly).
func needsLibrary(s *jsonschema.Schema) bool {
	if s.Format != "" || s.ContentEncoding != "" || s.ContentMediaType != "" || s.ContentSchema != nil ||
		len(s.Dependencies) > 0 || len(s.DependentSchemas) > 0 || s.RegexProperties ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil || len(s.Extensions) > 0 ||
		s.Items != nil || s.AdditionalItems != nil || s.UniqueItems {
		return true
	}
	if len(s.Constant) > 0 && !simpleValue(s.Constant[0]) {
		return true
	}
	for _, e := range s.Enum {
		if !simpleValue(e) {
			return true
		}
	}
	for _, t := range s.Types {
		switch t {
		case "null", "boolean", "number", "integer", "string", "array", "object":
		default:
			return true
		}
	}
	return false
}

// children lists every schema s refers to, for the scan for dynamic references.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.DynamicRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.PrefixItems...)
	for _, c := range s.Properties {
		out = append(out, c)
	}
	for _, c := range s.PatternProperties {
		out = append(out, c)
	}
	for _, c := range s.DependentSchemas {
		out = append(out, c)
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*jsonschema.Schema); ok {
			out = append(out, c)
		}
	}
	for _, x := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := x.(type) {
		case *jsonschema.Schema:
			out = append(out, x)
		case []*jsonschema.Schema:
			out = append(out, x...)
		}
	}
	return out
}

func (c *fastCompiler) node(s *jsonschema.Schema) *fastNode {
	if s == nil {
		return nil
	}
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := &fastNode{lib: s}
	c.nodes[s] = n
	if s.RecursiveRef != nil || s.DynamicRef != nil || s.RecursiveAnchor || s.DynamicAnchor != "" {
		c.dynamic = true
	}
	if needsLibrary(s) {
		n.delegate = true
		// A delegated schema is validated out of its dynamic scope: scan it too.
		for _, ch := range children(s) {
			c.node(ch)
		}
		return n
	}
	n.always = s.Always
	for _, t := range s.Types {
		n.types |= map[string]uint8{"null": typeNull, "boolean": typeBoolean, "number": typeNumber,
			"integer": typeInteger, "string": typeString, "array": typeArray, "object": typeObject}[t]
	}
	if len(s.Constant) > 0 {
		n.consts = s.Constant[:1]
	}
	n.enum = s.Enum
	n.minProps, n.maxProps, n.required = s.MinProperties, s.MaxProperties, s.Required
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for k, p := range s.Properties {
			n.props[k] = c.node(p)
		}
	}
	n.propNames = c.node(s.PropertyNames)
	for re, p := range s.PatternProperties {
		n.patternProps = append(n.patternProps, patternProp{re: re, node: c.node(p)})
	}
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.addlAllowed = &a
	case *jsonschema.Schema:
		n.addl = c.node(a)
	}
	n.depRequired = s.DependentRequired
	n.minItems, n.maxItems = s.MinItems, s.MaxItems
	for _, p := range s.PrefixItems {
		n.prefixItems = append(n.prefixItems, c.node(p))
	}
	n.items = c.node(s.Items2020)
	n.contains, n.minContains, n.maxContains = c.node(s.Contains), s.MinContains, s.MaxContains
	n.minLen, n.maxLen = s.MinLength, s.MaxLength
	if s.Pattern != nil {
		n.pattern = matcherFor(s.Pattern)
	}
	n.minimum, n.maximum, n.exMin, n.exMax, n.mulOf = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum, s.MultipleOf
	n.numeric = n.minimum != nil || n.maximum != nil || n.exMin != nil || n.exMax != nil || n.mulOf != nil
	n.ref, n.not = c.node(s.Ref), c.node(s.Not)
	n.ifNode, n.thenNode, n.elseNode = c.node(s.If), c.node(s.Then), c.node(s.Else)
	for _, x := range s.AllOf {
		n.allOf = append(n.allOf, c.node(x))
	}
	for _, x := range s.AnyOf {
		n.anyOf = append(n.anyOf, c.node(x))
	}
	for _, x := range s.OneOf {
		n.oneOf = append(n.oneOf, c.node(x))
	}
	return n
}

// matcherFor returns re.MatchString, or a function that answers the same faster:
// strings.Contains for a literal pattern.
func matcherFor(re *regexp.Regexp) func(string) bool {
	if lit, complete := re.LiteralPrefix(); complete {
		return func(s string) bool { return strings.Contains(s, lit) }
	}
	if m := knownPattern(re.String()); m != nil {
		return m
	}
	return re.MatchString
}

// fastRun is one validation on the fast path.
type fastRun struct {
	aborted bool // a loop without progress: the library decides (and reports it)
}

// maxInPlace bounds the schemas applied in place to one value ($ref, allOf, ...),
// one after the other: beyond, a reference loops, and the library reports it.
const maxInPlace = 256

func jsonTypeBits(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case json.Number:
		if _, ok := plainInt(v); ok {
			return typeNumber | typeInteger
		}
		if r, ok := new(big.Rat).SetString(string(v)); ok && r.IsInt() {
			return typeNumber | typeInteger
		}
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

// valid reports whether the library accepts v against n; depth counts the schemas
// applied in place to v so far.
func (n *fastNode) valid(r *fastRun, v any, depth int) bool {
	if r.aborted {
		return false
	}
	if depth > maxInPlace {
		r.aborted = true
		return false
	}
	if n.delegate {
		return n.lib.Validate(v) == nil
	}
	if n.always != nil {
		return *n.always
	}
	if n.types != 0 {
		var t uint8
		switch v.(type) {
		case string:
			t = typeString
		case map[string]any:
			t = typeObject
		default:
			t = jsonTypeBits(v)
		}
		if t == 0 {
			r.aborted = true // not a JSON value: the library panics, and says so
			return false
		}
		if n.types&t == 0 {
			return false
		}
	}
	if len(n.consts) > 0 && !simpleEquals(v, n.consts[0]) {
		return false
	}
	if len(n.enum) > 0 {
		found := false
		for _, e := range n.enum {
			if simpleEquals(v, e) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if !n.validObject(r, v) {
			return false
		}
	case []any:
		if !n.validArray(r, v) {
			return false
		}
	case string:
		if n.minLen != -1 || n.maxLen != -1 {
			l := utf8.RuneCountInString(v)
			if n.minLen != -1 && l < n.minLen || n.maxLen != -1 && l > n.maxLen {
				return false
			}
		}
		if n.pattern != nil && !n.pattern(v) {
			return false
		}
	case json.Number:
		if n.numeric && !n.validNumber(v) {
			return false
		}
	case nil, bool:
	default:
		r.aborted = true // not a value decodeJSON makes: the library decides
		return false
	}
	if n.ref != nil && !n.ref.valid(r, v, depth+1) {
		return false
	}
	if n.not != nil && n.not.valid(r, v, depth+1) {
		return false
	}
	for _, x := range n.allOf {
		if !x.valid(r, v, depth+1) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, x := range n.anyOf {
			if x.valid(r, v, depth+1) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, x := range n.oneOf {
			if x.valid(r, v, depth+1) {
				matched++
			}
		}
		if matched != 1 {
			return false
		}
	}
	if n.ifNode != nil {
		if n.ifNode.valid(r, v, depth+1) {
			if n.thenNode != nil && !n.thenNode.valid(r, v, depth+1) {
				return false
			}
		} else if n.elseNode != nil && !n.elseNode.valid(r, v, depth+1) {
			return false
		}
	}
	return !r.aborted
}

func (n *fastNode) validObject(r *fastRun, v map[string]any) bool {
	if n.minProps != -1 && len(v) < n.minProps || n.maxProps != -1 && len(v) > n.maxProps {
		return false
	}
	for _, p := range n.required {
		if _, ok := v[p]; !ok {
			return false
		}
	}
	for name, deps := range n.depRequired {
		if _, ok := v[name]; ok {
			for _, p := range deps {
				if _, ok := v[p]; !ok {
					return false
				}
			}
		}
	}
	if len(n.props) <= len(v) {
		for name, p := range n.props {
			if pv, ok := v[name]; ok && !p.valid(r, pv, 0) {
				return false
			}
		}
	} else {
		for name, pv := range v {
			if p, ok := n.props[name]; ok && !p.valid(r, pv, 0) {
				return false
			}
		}
	}
	if n.propNames == nil && len(n.patternProps) == 0 && n.addlAllowed == nil && n.addl == nil {
		return true
	}
	for name, pv := range v {
		if n.propNames != nil && !n.propNames.valid(r, name, 0) {
			return false
		}
		evaluated := false
		if n.props != nil {
			_, evaluated = n.props[name]
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(name) {
				evaluated = true
				if !pp.node.valid(r, pv, 0) {
					return false
				}
			}
		}
		if evaluated {
			continue
		}
		if n.addlAllowed != nil && !*n.addlAllowed {
			return false
		}
		if n.addl != nil && !n.addl.valid(r, pv, 0) {
			return false
		}
	}
	return true
}

func (n *fastNode) validArray(r *fastRun, v []any) bool {
	if n.minItems != -1 && len(v) < n.minItems || n.maxItems != -1 && len(v) > n.maxItems {
		return false
	}
	for i, item := range v {
		switch {
		case i < len(n.prefixItems):
			if !n.prefixItems[i].valid(r, item, 0) {
				return false
			}
		case n.items != nil:
			if !n.items.valid(r, item, 0) {
				return false
			}
		}
	}
	if n.contains != nil && (n.minContains != -1 || n.maxContains != -1) {
		matched := 0
		for _, item := range v {
			if n.contains.valid(r, item, 0) {
				matched++
			}
		}
		if n.minContains != -1 && matched < n.minContains || n.maxContains != -1 && matched > n.maxContains {
			return false
		}
	}
	return true
}

// plainInt returns the value of a number written as an integer that fits in an
// int64 (no fraction, no exponent).
func plainInt(v json.Number) (int64, bool) {
	s := string(v)
	if s == "" || strings.ContainsAny(s, ".eE") {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// int64Bound returns r as an int64 when it is an integer that fits.
func int64Bound(r *big.Rat) (int64, bool) {
	if r == nil || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// validIntNumber is validNumber for a plain integer i, when every bound is an int64
// (else it reports false for decided).
func (n *fastNode) validIntNumber(i int64) (valid, decided bool) {
	if n.mulOf != nil {
		return false, false
	}
	check := func(r *big.Rat, ok func(b int64) bool) bool {
		if r == nil {
			return true
		}
		b, fits := int64Bound(r)
		if !fits {
			decided = false
			return true
		}
		return ok(b)
	}
	decided = true
	valid = check(n.minimum, func(b int64) bool { return i >= b }) &&
		check(n.exMin, func(b int64) bool { return i > b }) &&
		check(n.maximum, func(b int64) bool { return i <= b }) &&
		check(n.exMax, func(b int64) bool { return i < b })
	return valid && decided, decided
}

func (n *fastNode) validNumber(v json.Number) bool {
	if i, ok := plainInt(v); ok {
		if valid, decided := n.validIntNumber(i); decided {
			return valid
		}
	}
	num, ok := new(big.Rat).SetString(string(v))
	if !ok {
		return false // the library would compare a nil number: let it answer
	}
	if n.minimum != nil && num.Cmp(n.minimum) < 0 || n.exMin != nil && num.Cmp(n.exMin) <= 0 ||
		n.maximum != nil && num.Cmp(n.maximum) > 0 || n.exMax != nil && num.Cmp(n.exMax) >= 0 {
		return false
	}
	if n.mulOf != nil && !new(big.Rat).Quo(num, n.mulOf).IsInt() {
		return false
	}
	return true
}

// simpleEquals is the library's equality of a JSON value and c, a string, bool or
// nil.
func simpleEquals(v, c any) bool {
	switch c := c.(type) {
	case nil:
		return v == nil
	case bool:
		b, ok := v.(bool)
		return ok && b == c
	case string:
		s, ok := v.(string)
		return ok && s == c
	}
	return false
}
