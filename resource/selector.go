package resource

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SelectorOperator is the operator of one selector requirement.
type SelectorOperator string

// The operators of label and field selectors. "==" is read as [SelectorEquals].
const (
	// SelectorEquals is "key=value": the label is present with that value.
	SelectorEquals SelectorOperator = "="
	// SelectorNotEquals is "key!=value": the label is absent or has another value.
	SelectorNotEquals SelectorOperator = "!="
	// SelectorIn is "key in (a,b)": the label is present with one of the values.
	SelectorIn SelectorOperator = "in"
	// SelectorNotIn is "key notin (a,b)": the label is absent or has none of the values.
	SelectorNotIn SelectorOperator = "notin"
	// SelectorExists is "key": the label is present.
	SelectorExists SelectorOperator = "exists"
	// SelectorDoesNotExist is "!key": the label is absent.
	SelectorDoesNotExist SelectorOperator = "!"
	// SelectorGreaterThan is "key>n": the label is present and holds an integer
	// greater than n.
	SelectorGreaterThan SelectorOperator = "gt"
	// SelectorLessThan is "key<n": the label is present and holds an integer less
	// than n.
	SelectorLessThan SelectorOperator = "lt"
)

// LabelRequirement is one requirement of a [LabelSelector]. Values has exactly one
// element for =, != and the integer comparisons > and < (a decimal integer there), one
// or more (sorted, without duplicates) for in and notin, and
// none for exists and !.
type LabelRequirement struct {
	// Key is the label key.
	Key string
	// Operator says how the label is compared.
	Operator SelectorOperator
	// Values are the values compared against.
	Values []string
}

// Matches reports whether labels satisfy the requirement.
func (r LabelRequirement) Matches(labels map[string]string) bool {
	v, has := labels[r.Key]
	switch r.Operator {
	case SelectorEquals:
		return has && len(r.Values) == 1 && v == r.Values[0]
	case SelectorNotEquals:
		return !has || len(r.Values) != 1 || v != r.Values[0]
	case SelectorIn:
		return has && r.hasValue(v)
	case SelectorNotIn:
		return !has || !r.hasValue(v)
	case SelectorExists:
		return has
	case SelectorDoesNotExist:
		return !has
	case SelectorGreaterThan, SelectorLessThan:
		if !has || len(r.Values) != 1 {
			return false
		}
		want, err1 := strconv.ParseInt(r.Values[0], 10, 64)
		got, err2 := strconv.ParseInt(v, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == SelectorGreaterThan {
			return got > want
		}
		return got < want
	}
	return false
}

func (r LabelRequirement) hasValue(v string) bool {
	i := sort.SearchStrings(r.Values, v)
	return i < len(r.Values) && r.Values[i] == v
}

// String returns the requirement in selector syntax: "k=v", "k!=v", "k in (a,b)",
// "k notin (a,b)", "k", "!k", "k>n" or "k<n".
func (r LabelRequirement) String() string {
	switch r.Operator {
	case SelectorEquals, SelectorNotEquals:
		v := ""
		if len(r.Values) > 0 {
			v = r.Values[0]
		}
		return r.Key + string(r.Operator) + v
	case SelectorIn, SelectorNotIn:
		return r.Key + " " + string(r.Operator) + " (" + strings.Join(r.Values, ",") + ")"
	case SelectorExists:
		return r.Key
	case SelectorDoesNotExist:
		return "!" + r.Key
	case SelectorGreaterThan, SelectorLessThan:
		op := ">"
		if r.Operator == SelectorLessThan {
			op = "<"
		}
		if len(r.Values) == 1 {
			return r.Key + op + r.Values[0]
		}
		return r.Key + op
	}
	return ""
}

func (r LabelRequirement) less(o LabelRequirement) bool {
	if r.Key != o.Key {
		return r.Key < o.Key
	}
	if r.Operator != o.Operator {
		return r.Operator < o.Operator
	}
	return strings.Join(r.Values, ",") < strings.Join(o.Values, ",")
}

func (r LabelRequirement) equal(o LabelRequirement) bool {
	if r.Key != o.Key || r.Operator != o.Operator || len(r.Values) != len(o.Values) {
		return false
	}
	for i := range r.Values {
		if r.Values[i] != o.Values[i] {
			return false
		}
	}
	return true
}

// LabelSelector selects objects by their labels: every requirement must hold. The zero
// value is the empty selector, which matches everything. Parse one with
// [ParseLabelSelector]; its requirements are kept in a canonical order (by key,
// operator, values) without duplicates, so equal selectors have equal [String] forms.
type LabelSelector struct {
	reqs []LabelRequirement
}

// NewLabelSelector builds a selector from requirements, checking keys and values with
// the label rules and putting them in canonical order. A bad requirement is a 400
// BadRequest [*StatusError].
func NewLabelSelector(reqs ...LabelRequirement) (LabelSelector, error) {
	out := make([]LabelRequirement, 0, len(reqs))
	for _, r := range reqs {
		cr, err := checkLabelRequirement(r)
		if err != nil {
			return LabelSelector{}, err
		}
		out = append(out, cr)
	}
	return LabelSelector{reqs: canonicalRequirements(out)}, nil
}

// LabelSelectorFromSet returns the selector "k1=v1,k2=v2,..." for a label set.
func LabelSelectorFromSet(set map[string]string) (LabelSelector, error) {
	reqs := make([]LabelRequirement, 0, len(set))
	for k, v := range set {
		reqs = append(reqs, LabelRequirement{Key: k, Operator: SelectorEquals, Values: []string{v}})
	}
	return NewLabelSelector(reqs...)
}

func canonicalRequirements(reqs []LabelRequirement) []LabelRequirement {
	if len(reqs) == 0 {
		return nil
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].less(reqs[j]) })
	out := reqs[:1]
	for _, r := range reqs[1:] {
		if !r.equal(out[len(out)-1]) {
			out = append(out, r)
		}
	}
	return out
}

func checkLabelRequirement(r LabelRequirement) (LabelRequirement, error) {
	p := NewPath("labelSelector")
	if errs := ValidateLabelKey(r.Key, p); len(errs) > 0 {
		return r, selectorFieldError(errs)
	}
	vals := append([]string(nil), r.Values...)
	switch r.Operator {
	case SelectorEquals, SelectorNotEquals:
		if len(vals) != 1 {
			return r, NewBadRequest(fmt.Sprintf("invalid label selector: operator %q needs exactly one value", r.Operator))
		}
	case SelectorIn, SelectorNotIn:
		if len(vals) == 0 {
			return r, NewBadRequest(fmt.Sprintf("invalid label selector: operator %q needs at least one value", r.Operator))
		}
		sort.Strings(vals)
		j := 1
		for i := 1; i < len(vals); i++ {
			if vals[i] != vals[j-1] {
				vals[j] = vals[i]
				j++
			}
		}
		vals = vals[:j]
	case SelectorExists, SelectorDoesNotExist:
		if len(vals) != 0 {
			return r, NewBadRequest(fmt.Sprintf("invalid label selector: operator %q takes no values", r.Operator))
		}
		vals = nil
	case SelectorGreaterThan, SelectorLessThan:
		// As kube-apiserver's label parser has them: one decimal int64.
		if len(vals) != 1 {
			return r, NewBadRequest("invalid label selector: for 'Gt', 'Lt' operators, exactly one value is required")
		}
		if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
			return r, NewBadRequest(fmt.Sprintf("invalid label selector: values[0]: Invalid value: %q: for 'Gt', 'Lt' operators, the value must be an integer",
				truncForMsg(vals[0])))
		}
	default:
		return r, NewBadRequest(fmt.Sprintf("invalid label selector: operator %q is not supported", r.Operator))
	}
	for _, v := range vals {
		if errs := ValidateLabelValue(v, p); len(errs) > 0 {
			return r, selectorFieldError(errs)
		}
	}
	r.Values = vals
	return r, nil
}

func selectorFieldError(errs ErrorList) error {
	return NewBadRequest("invalid label selector: " + errs[0].ErrorBody()).WithCause(errs.ToAggregate())
}

// Requirements returns a copy of the selector's requirements, in canonical order.
func (s LabelSelector) Requirements() []LabelRequirement {
	out := make([]LabelRequirement, len(s.reqs))
	for i, r := range s.reqs {
		r.Values = append([]string(nil), r.Values...)
		out[i] = r
	}
	return out
}

// Empty reports whether the selector has no requirements and so matches everything.
func (s LabelSelector) Empty() bool { return len(s.reqs) == 0 }

// Matches reports whether labels satisfy every requirement.
func (s LabelSelector) Matches(labels map[string]string) bool {
	for _, r := range s.reqs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// String returns the selector in its canonical form, e.g. "app=web,env in (dev,prod),!x";
// [ParseLabelSelector] reads it back to an equal selector.
func (s LabelSelector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// Equal reports whether s and o have the same requirements.
func (s LabelSelector) Equal(o LabelSelector) bool {
	if len(s.reqs) != len(o.reqs) {
		return false
	}
	for i := range s.reqs {
		if !s.reqs[i].equal(o.reqs[i]) {
			return false
		}
	}
	return true
}

// RequiredEquals returns the first requirement that pins a label to one value
// ("k=v", or "k in (v)"), for index lookups. ok is false when there is none.
func (s LabelSelector) RequiredEquals() (key, value string, ok bool) {
	for _, r := range s.reqs {
		if (r.Operator == SelectorEquals || r.Operator == SelectorIn) && len(r.Values) == 1 {
			return r.Key, r.Values[0], true
		}
	}
	return "", "", false
}

// selector tokens
type selTokKind int

const (
	tokEnd selTokKind = iota
	tokIdent
	tokNot      // !
	tokEq       // = or ==
	tokNotEq    // !=
	tokGt       // >
	tokLt       // <
	tokOpenPar  // (
	tokClosePar // )
	tokComma    // ,
)

type selTok struct {
	kind selTokKind
	text string
	pos  int
}

func isSelSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isSelSpecial(c byte) bool {
	return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<'
}

// lexSelector splits a label selector into tokens; identifiers are runs of characters
// that are neither white space nor one of "!=(),><".
func lexSelector(s string) []selTok {
	var toks []selTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSelSpace(c):
			i++
		case c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, selTok{tokNotEq, "!=", i})
				i += 2
			} else {
				toks = append(toks, selTok{tokNot, "!", i})
				i++
			}
		case c == '=':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, selTok{tokEq, "==", i})
				i += 2
			} else {
				toks = append(toks, selTok{tokEq, "=", i})
				i++
			}
		case c == '>':
			toks = append(toks, selTok{tokGt, ">", i})
			i++
		case c == '<':
			toks = append(toks, selTok{tokLt, "<", i})
			i++
		case c == '(':
			toks = append(toks, selTok{tokOpenPar, "(", i})
			i++
		case c == ')':
			toks = append(toks, selTok{tokClosePar, ")", i})
			i++
		case c == ',':
			toks = append(toks, selTok{tokComma, ",", i})
			i++
		default:
			j := i
			for j < len(s) && !isSelSpace(s[j]) && !isSelSpecial(s[j]) {
				j++
			}
			toks = append(toks, selTok{tokIdent, s[i:j], i})
			i = j
		}
	}
	return append(toks, selTok{tokEnd, "", len(s)})
}

func quoteTok(t selTok) string {
	if t.kind == tokEnd {
		return "end of string"
	}
	text := t.text
	if len(text) > 64 {
		text = text[:64] + "..."
	}
	return fmt.Sprintf("%q", text)
}

type selParser struct {
	toks []selTok
	i    int
}

func (p *selParser) peek() selTok { return p.toks[p.i] }

func (p *selParser) next() selTok {
	t := p.toks[p.i]
	if t.kind != tokEnd {
		p.i++
	}
	return t
}

func selSyntaxError(t selTok, expected string) error {
	return NewBadRequest(fmt.Sprintf("unable to parse label selector: found %s at position %d, expected %s",
		quoteTok(t), t.pos, expected))
}

// ParseLabelSelector parses a label selector: comma-separated requirements, each one of
// "key=value", "key==value", "key!=value", "key in (v1,v2)", "key notin (v1,v2)",
// "key" (present), "!key" (absent), "key>n" or "key<n" (an integer label compared with
// the integer n), as kube-apiserver's label parser reads them. White space around tokens is ignored; "in" and
// "notin" are operators only where an operator is expected. Keys and values follow the
// label rules; "()" is the set holding the empty value. An empty string is the empty
// selector. Errors are 400 BadRequest [*StatusError] naming the problem.
func ParseLabelSelector(s string) (LabelSelector, error) {
	p := &selParser{toks: lexSelector(s)}
	if p.peek().kind == tokEnd {
		return LabelSelector{}, nil
	}
	var reqs []LabelRequirement
	for {
		r, err := p.requirement()
		if err != nil {
			return LabelSelector{}, err
		}
		cr, err := checkLabelRequirement(r)
		if err != nil {
			return LabelSelector{}, err
		}
		reqs = append(reqs, cr)
		switch t := p.next(); t.kind {
		case tokEnd:
			return LabelSelector{reqs: canonicalRequirements(reqs)}, nil
		case tokComma:
		default:
			return LabelSelector{}, selSyntaxError(t, "',' or end of string")
		}
	}
}

func (p *selParser) requirement() (LabelRequirement, error) {
	t := p.next()
	if t.kind == tokNot {
		k := p.next()
		if k.kind != tokIdent {
			return LabelRequirement{}, selSyntaxError(k, "a label key after '!'")
		}
		return LabelRequirement{Key: k.text, Operator: SelectorDoesNotExist}, nil
	}
	if t.kind != tokIdent {
		return LabelRequirement{}, selSyntaxError(t, "a label key or '!'")
	}
	r := LabelRequirement{Key: t.text}
	op := p.peek()
	switch {
	case op.kind == tokEnd || op.kind == tokComma:
		r.Operator = SelectorExists
		return r, nil
	case op.kind == tokEq || op.kind == tokNotEq:
		p.next()
		r.Operator = SelectorEquals
		if op.kind == tokNotEq {
			r.Operator = SelectorNotEquals
		}
		v := p.peek()
		switch v.kind {
		case tokIdent:
			p.next()
			r.Values = []string{v.text}
		case tokEnd, tokComma:
			r.Values = []string{""}
		default:
			return r, selSyntaxError(v, "a label value")
		}
		return r, nil
	case op.kind == tokGt || op.kind == tokLt:
		p.next()
		r.Operator = SelectorGreaterThan
		if op.kind == tokLt {
			r.Operator = SelectorLessThan
		}
		v := p.next()
		if v.kind != tokIdent {
			return r, selSyntaxError(v, "an integer value")
		}
		r.Values = []string{v.text}
		return r, nil
	case op.kind == tokIdent && (op.text == "in" || op.text == "notin"):
		p.next()
		r.Operator = SelectorIn
		if op.text == "notin" {
			r.Operator = SelectorNotIn
		}
		vals, err := p.valueSet()
		if err != nil {
			return r, err
		}
		r.Values = vals
		return r, nil
	default:
		return r, selSyntaxError(op, "'=', '==', '!=', '>', '<', 'in', 'notin', ',' or end of string")
	}
}

// valueSet reads "(v1, v2, ...)". Elements may be empty: "()" and "(,a)" hold "".
func (p *selParser) valueSet() ([]string, error) {
	if t := p.next(); t.kind != tokOpenPar {
		return nil, selSyntaxError(t, "'('")
	}
	var vals []string
	for {
		v := ""
		if t := p.peek(); t.kind == tokIdent {
			p.next()
			v = t.text
		}
		vals = append(vals, v)
		switch t := p.next(); t.kind {
		case tokComma:
		case tokClosePar:
			return vals, nil
		default:
			return nil, selSyntaxError(t, "',' or ')'")
		}
	}
}

// Field selector fields every kind supports.
const (
	// FieldMetadataName selects on metadata.name.
	FieldMetadataName = "metadata.name"
	// FieldMetadataNamespace selects on metadata.namespace.
	FieldMetadataNamespace = "metadata.namespace"
)

// FieldRequirement is one requirement of a [FieldSelector]: Field compared with Value
// by Operator ([SelectorEquals] or [SelectorNotEquals]).
type FieldRequirement struct {
	// Field is metadata.name or metadata.namespace.
	Field string
	// Operator is = or !=.
	Operator SelectorOperator
	// Value is compared with the field.
	Value string
}

func (r FieldRequirement) matches(name, namespace string) bool {
	v := name
	if r.Field == FieldMetadataNamespace {
		v = namespace
	}
	if r.Operator == SelectorNotEquals {
		return v != r.Value
	}
	return v == r.Value
}

// FieldSelector selects objects by metadata.name and metadata.namespace: every
// requirement must hold. The zero value matches everything.
type FieldSelector struct {
	reqs []FieldRequirement
}

// ParseFieldSelector parses a field selector: comma-separated "field=value",
// "field==value" or "field!=value" terms, where field is metadata.name or
// metadata.namespace. In a value, "\," "\=" and "\\" stand for ",", "=" and "\".
// White space around fields and values is ignored and empty terms are skipped. Any
// other field is 400 BadRequest "field label not supported: <field>"; a malformed term
// is 400 BadRequest too.
func ParseFieldSelector(s string) (FieldSelector, error) {
	var reqs []FieldRequirement
	for _, term := range splitUnescaped(s, ',') {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		i := strings.IndexByte(term, '=')
		if i < 0 {
			return FieldSelector{}, NewBadRequest(fmt.Sprintf("invalid field selector: %s: no operator, expected '=', '==' or '!='", truncForMsg(term)))
		}
		op, field, rest := SelectorEquals, term[:i], term[i+1:]
		switch {
		case i > 0 && term[i-1] == '!':
			op, field = SelectorNotEquals, term[:i-1]
		case strings.HasPrefix(rest, "="):
			rest = rest[1:]
		}
		field = strings.TrimSpace(field)
		if field != FieldMetadataName && field != FieldMetadataNamespace {
			return FieldSelector{}, NewBadRequest("field label not supported: " + truncForMsg(field))
		}
		val, err := unescapeFieldValue(strings.TrimSpace(rest))
		if err != nil {
			return FieldSelector{}, NewBadRequest(fmt.Sprintf("invalid field selector: %s: %v", truncForMsg(term), err)).WithCause(err)
		}
		reqs = append(reqs, FieldRequirement{Field: field, Operator: op, Value: val})
	}
	sort.SliceStable(reqs, func(i, j int) bool {
		a, b := reqs[i], reqs[j]
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Operator != b.Operator {
			return a.Operator < b.Operator
		}
		return a.Value < b.Value
	})
	return FieldSelector{reqs: reqs}, nil
}

func truncForMsg(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return s
}

// splitUnescaped splits s at every sep that is not escaped by a backslash.
func splitUnescaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unescapeFieldValue(v string) (string, error) {
	if !strings.ContainsAny(v, `\=,`) {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 >= len(v) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
			switch v[i] {
			case '\\', ',', '=':
				b.WriteByte(v[i])
			default:
				return "", fmt.Errorf("invalid escape sequence \\%c", v[i])
			}
		case '=', ',':
			return "", fmt.Errorf("unescaped %c in value", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func escapeFieldValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`).Replace(v)
}

// Requirements returns a copy of the selector's requirements.
func (s FieldSelector) Requirements() []FieldRequirement {
	return append([]FieldRequirement(nil), s.reqs...)
}

// Empty reports whether the selector has no requirements and so matches everything.
func (s FieldSelector) Empty() bool { return len(s.reqs) == 0 }

// Matches reports whether an object with this name and namespace satisfies every
// requirement.
func (s FieldSelector) Matches(name, namespace string) bool {
	for _, r := range s.reqs {
		if !r.matches(name, namespace) {
			return false
		}
	}
	return true
}

// RequiredValue returns the value field must equal ("field=value"), for direct
// lookups; ok is false when no such requirement exists.
func (s FieldSelector) RequiredValue(field string) (value string, ok bool) {
	for _, r := range s.reqs {
		if r.Field == field && r.Operator == SelectorEquals {
			return r.Value, true
		}
	}
	return "", false
}

// String returns the selector in canonical form, e.g. "metadata.name=a,metadata.namespace!=b".
func (s FieldSelector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.Field + string(r.Operator) + escapeFieldValue(r.Value)
	}
	return strings.Join(parts, ",")
}
