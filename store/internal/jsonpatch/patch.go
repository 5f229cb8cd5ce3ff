package jsonpatch

import (
	"math"
	"slices"
	"strconv"
)

// DefaultMaxOperations is the number of operations a JSON patch may have when
// [Options.MaxOperations] is not set (kube-apiserver's maxJSONPatchOperations).
const DefaultMaxOperations = 10000

// DefaultMaxCopyBytes is the copy budget of a JSON patch when
// [Options.MaxCopyBytes] is not set: 3 MiB, kube-apiserver's JSONPatchMaxCopyBytes.
const DefaultMaxCopyBytes int64 = 3 << 20

// maxArrayShift bounds the work of array inserts and removals: the total number of
// elements that the add, remove and move operations of one patch may shift inside
// arrays (2^24: about 256 MiB of memory moved). Without it 10,000 removals from the
// middle of a 750,000-element array (a 1.5 MiB document) take tens of seconds.
// A variable only so that tests can lower it.
var maxArrayShift int64 = 1 << 24

// Options are the limits of [Apply]. The zero value gives the defaults.
type Options struct {
	// MaxOperations is the largest number of operations a patch may have; a
	// longer patch fails with [ErrTooLarge] before anything is applied. Zero or
	// less means [DefaultMaxOperations].
	MaxOperations int
	// MaxCopyBytes bounds the total size, in bytes of compact JSON (roughly: string
	// escapes are counted, separators approximately), of the values that add, copy
	// and move operations insert into the document, summed over the whole patch.
	// An operation that takes the total beyond it fails with [ErrTooLarge]. It
	// stops a short patch from growing a document exponentially by copying it into
	// itself. Zero or less means [DefaultMaxCopyBytes].
	MaxCopyBytes int64
}

// Apply applies the RFC 6902 JSON patch patch (a JSON array of operations) to the
// JSON document doc and returns the result as compact JSON with sorted keys.
//
// The operations are add, remove, replace, move, copy and test, with paths that
// are RFC 6901 JSON pointers ("~0" is "~", "~1" is "/"; "" is the whole document).
// An array index is "0" or a decimal without leading zeros, in range; "-" is the
// position after the last element and may only be used to add (append). test
// compares JSON values semantically: numbers by value ("1" equals "1.0" and
// "1e0"), objects regardless of member order, arrays element by element. Members
// of an operation that the RFC does not define for it are ignored. A move whose
// from is a proper prefix of its path (a move into its own child) is
// [ErrMalformed]; a move onto itself does nothing. Removing the whole document
// ("" as the path of remove) is [ErrFailed]. Besides the limits of opts, the
// array inserts and removals of one patch may shift at most 2^24 elements in
// total ([ErrTooLarge] beyond), which bounds the time a patch can take.
//
// doc may be any JSON value. The patch is decoded and every operation checked
// before the first is applied; the operations are then applied in order and the
// first failure stops the patch, returning an [*Error] whose Op is the index of
// that operation. See the package documentation for the error classes.
func Apply(doc, patch []byte, opts Options) ([]byte, error) {
	maxOps := opts.MaxOperations
	if maxOps <= 0 {
		maxOps = DefaultMaxOperations
	}
	budget := opts.MaxCopyBytes
	if budget <= 0 {
		budget = DefaultMaxCopyBytes
	}

	p, err := decode(patch, "patch")
	if err != nil {
		return nil, err
	}
	list, ok := p.([]any)
	if !ok {
		return nil, newErr(-1, "", ErrMalformed, nil, "patch must be a JSON array of operations, not %s", kind(p))
	}
	if len(list) > maxOps {
		return nil, newErr(-1, "", ErrTooLarge, nil, "patch has %d operations, more than the limit of %d", len(list), maxOps)
	}
	ops := make([]operation, len(list))
	for i, e := range list {
		if err := ops[i].parse(i, e); err != nil {
			return nil, err
		}
	}

	d, err := decode(doc, "document")
	if err != nil {
		return nil, err
	}
	a := applier{doc: d, budget: budget, limit: budget}
	for i := range ops {
		if err := a.apply(&ops[i]); err != nil {
			return nil, err
		}
	}
	return encode(a.doc)
}

type operation struct {
	index    int
	op       string
	path     string
	pathToks []string
	from     string
	fromToks []string
	value    any
}

func (o *operation) malformed(path, format string, args ...any) error {
	return newErr(o.index, path, ErrMalformed, nil, format, args...)
}

// parse checks the shape of the operation object e, the index-th of the patch.
func (o *operation) parse(index int, e any) error {
	o.index = index
	m, ok := e.(map[string]any)
	if !ok {
		return o.malformed("", "operation must be a JSON object, not %s", kind(e))
	}
	var err error
	if o.op, err = o.stringMember(m, "op", ""); err != nil {
		return err
	}
	if o.path, err = o.stringMember(m, "path", ""); err != nil {
		return err
	}
	if o.pathToks, ok = parsePointer(o.path); !ok {
		return o.malformed(o.path, `%s: "path" is not a JSON pointer`, o.op)
	}
	switch o.op {
	case "add", "replace", "test":
		v, ok := m["value"]
		if !ok {
			return o.malformed(o.path, `%s: missing "value"`, o.op)
		}
		o.value = v
	case "move", "copy":
		if o.from, err = o.stringMember(m, "from", o.path); err != nil {
			return err
		}
		if o.fromToks, ok = parsePointer(o.from); !ok {
			return o.malformed(o.from, `%s: "from" is not a JSON pointer`, o.op)
		}
		if o.op == "move" && isProperPrefix(o.fromToks, o.pathToks) {
			return o.malformed(o.path, `move: "from" %q is a proper prefix of "path": a value cannot be moved into its own child`, o.from)
		}
	case "remove":
	default:
		return o.malformed(o.path, "unknown op %q", o.op)
	}
	return nil
}

func (o *operation) stringMember(m map[string]any, name, path string) (string, error) {
	v, ok := m[name]
	if !ok {
		if o.op != "" {
			return "", o.malformed(path, "%s: missing %q", o.op, name)
		}
		return "", o.malformed(path, "missing %q", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", o.malformed(path, "%q must be a string, not %s", name, kind(v))
	}
	return s, nil
}

type applier struct {
	doc    any
	budget int64 // bytes that add, copy and move may still insert
	limit  int64 // MaxCopyBytes, for error messages
	shifts int64 // array elements shifted so far, at most maxArrayShift
}

// shift records that an array operation moves n elements and reports whether that
// stays within maxArrayShift.
func (a *applier) shift(n int) bool {
	a.shifts += int64(n)
	return a.shifts <= maxArrayShift
}

func (a *applier) tooMuchShifting(o *operation, path string) error {
	return newErr(o.index, path, ErrTooLarge, nil,
		"%s: the array inserts and removals of the patch would move more than %d elements", o.op, maxArrayShift)
}

func (a *applier) failed(o *operation, path, format string, args ...any) error {
	return newErr(o.index, path, ErrFailed, nil, o.op+": "+format, args...)
}

func (a *applier) apply(o *operation) error {
	switch o.op {
	case "add":
		if err := a.charge(o, o.value, true); err != nil {
			return err
		}
		return a.add(o, o.path, o.pathToks, o.value)
	case "remove":
		_, err := a.remove(o, o.path, o.pathToks)
		return err
	case "replace":
		if err := a.charge(o, o.value, false); err != nil {
			return err
		}
		return a.replace(o, o.value)
	case "move":
		if slices.Equal(o.fromToks, o.pathToks) {
			if _, msg := get(a.doc, o.fromToks); msg != "" {
				return a.failed(o, o.from, `"from": %s`, msg)
			}
			return nil
		}
		v, err := a.remove(o, o.from, o.fromToks)
		if err != nil {
			return err
		}
		if err := a.charge(o, v, true); err != nil {
			return err
		}
		return a.add(o, o.path, o.pathToks, v)
	case "copy":
		v, msg := get(a.doc, o.fromToks)
		if msg != "" {
			return a.failed(o, o.from, `"from": %s`, msg)
		}
		if err := a.charge(o, v, true); err != nil {
			return err
		}
		return a.add(o, o.path, o.pathToks, clone(v))
	case "test":
		v, msg := get(a.doc, o.pathToks)
		if msg != "" {
			return a.failed(o, o.path, "%s", msg)
		}
		if !equal(v, o.value) {
			return a.failed(o, o.path, "the value at the path is not equal to the given value")
		}
		return nil
	}
	return o.malformed(o.path, "unknown op %q", o.op) // parse refuses these already
}

// charge checks that inserting v at the operation's path keeps the document within
// MaxDepth and, when count is set, takes v's size from the copy budget.
func (a *applier) charge(o *operation, v any, count bool) error {
	limit := int64(math.MaxInt64)
	if count {
		limit = a.budget
	}
	size, depth, over := measure(v, limit)
	if over {
		return newErr(o.index, o.path, ErrTooLarge, nil,
			"%s: the values inserted by add, copy and move exceed the limit of %d bytes", o.op, a.limit)
	}
	if len(o.pathToks)+depth > MaxDepth {
		return newErr(o.index, o.path, ErrTooLarge, nil, "%s: the result would be nested deeper than %d", o.op, MaxDepth)
	}
	if count {
		a.budget -= size
	}
	return nil
}

func (a *applier) add(o *operation, path string, toks []string, v any) error {
	if len(toks) == 0 {
		a.doc = v
		return nil
	}
	doc, msg := mutate(a.doc, toks, func(parent any, tok string) (any, string) {
		switch n := parent.(type) {
		case map[string]any:
			n[tok] = v
			return n, ""
		case []any:
			i, msg := arrayIndex(tok, len(n), true)
			if msg != "" {
				return nil, msg
			}
			if !a.shift(len(n) - i) {
				return nil, shiftMsg
			}
			return slices.Insert(n, i, v), ""
		default:
			return nil, "cannot add a member to " + kind(parent)
		}
	})
	if msg == shiftMsg {
		return a.tooMuchShifting(o, path)
	}
	if msg != "" {
		return a.failed(o, path, "%s", msg)
	}
	a.doc = doc
	return nil
}

// shiftMsg is the leaf message for going over maxArrayShift.
const shiftMsg = "\x00shift"

func (a *applier) remove(o *operation, path string, toks []string) (any, error) {
	if len(toks) == 0 {
		return nil, a.failed(o, path, "cannot remove the whole document")
	}
	var removed any
	doc, msg := mutate(a.doc, toks, func(parent any, tok string) (any, string) {
		switch n := parent.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, "member " + strconv.Quote(tok) + " not found"
			}
			removed = v
			delete(n, tok)
			return n, ""
		case []any:
			i, msg := arrayIndex(tok, len(n), false)
			if msg != "" {
				return nil, msg
			}
			removed = n[i]
			if i < len(n)/2 { // shift the shorter front part right
				if !a.shift(i) {
					return nil, shiftMsg
				}
				copy(n[1:i+1], n[:i])
				n[0] = nil
				return n[1:], ""
			}
			if !a.shift(len(n) - 1 - i) {
				return nil, shiftMsg
			}
			return slices.Delete(n, i, i+1), ""
		default:
			return nil, "cannot remove a member of " + kind(parent)
		}
	})
	if msg == shiftMsg {
		return nil, a.tooMuchShifting(o, path)
	}
	if msg != "" {
		if o.op == "move" {
			return nil, a.failed(o, path, `"from": %s`, msg)
		}
		return nil, a.failed(o, path, "%s", msg)
	}
	a.doc = doc
	return removed, nil
}

func (a *applier) replace(o *operation, v any) error {
	if len(o.pathToks) == 0 {
		a.doc = v
		return nil
	}
	doc, msg := mutate(a.doc, o.pathToks, func(parent any, tok string) (any, string) {
		switch n := parent.(type) {
		case map[string]any:
			if _, ok := n[tok]; !ok {
				return nil, "member " + strconv.Quote(tok) + " not found"
			}
			n[tok] = v
			return n, ""
		case []any:
			i, msg := arrayIndex(tok, len(n), false)
			if msg != "" {
				return nil, msg
			}
			n[i] = v
			return n, ""
		default:
			return nil, "cannot replace a member of " + kind(parent)
		}
	})
	if msg != "" {
		return a.failed(o, o.path, "%s", msg)
	}
	a.doc = doc
	return nil
}

// get returns the value at the pointer toks, or a message saying why there is none.
func get(doc any, toks []string) (any, string) {
	cur := doc
	for _, tok := range toks {
		switch n := cur.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, "member " + strconv.Quote(tok) + " not found"
			}
			cur = v
		case []any:
			i, msg := arrayIndex(tok, len(n), false)
			if msg != "" {
				return nil, msg
			}
			cur = n[i]
		default:
			return nil, "cannot look up " + strconv.Quote(tok) + " in " + kind(cur)
		}
	}
	return cur, ""
}

// mutate walks node down to the parent of the last token of toks (len(toks) > 0)
// and calls leaf with that parent and the last token. leaf returns the parent as
// changed (a slice may have moved) or a failure message; mutate stores the new
// parent into its own parent and returns the new node. Nothing is changed on
// failure.
func mutate(node any, toks []string, leaf func(parent any, tok string) (any, string)) (any, string) {
	if len(toks) == 1 {
		return leaf(node, toks[0])
	}
	tok := toks[0]
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[tok]
		if !ok {
			return nil, "member " + strconv.Quote(tok) + " not found"
		}
		c, msg := mutate(child, toks[1:], leaf)
		if msg != "" {
			return nil, msg
		}
		n[tok] = c
		return n, ""
	case []any:
		i, msg := arrayIndex(tok, len(n), false)
		if msg != "" {
			return nil, msg
		}
		c, msg := mutate(n[i], toks[1:], leaf)
		if msg != "" {
			return nil, msg
		}
		n[i] = c
		return n, ""
	default:
		return nil, "cannot look up " + strconv.Quote(tok) + " in " + kind(node)
	}
}
