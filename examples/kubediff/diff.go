package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Absent stands for a value one side does not have.
const Absent = "<absent>"

// Difference is one place where the two servers' normalised answers differ.
type Difference struct {
	// Path locates the value: the step's label, then the JSON path, e.g.
	// "create.body.metadata.managedFields[0].fieldsV1".
	Path string `json:"path"`
	// Kube and Ours are the two values, compact JSON ("<absent>" if missing).
	Kube string `json:"kube"`
	Ours string `json:"ours"`
	// Verdict is "bug", or "justified" or "reference" with Exception set.
	Verdict string `json:"verdict"`
	// Exception names the entry of the exceptions table that justifies it.
	Exception string `json:"exception,omitempty"`
}

// Diff compares two normalised values and returns their differences, sorted by
// path. Maps are compared key by key, lists element by element (a list of a
// different length is one difference at the list's path when its elements are not
// objects, so that a missing scalar is shown whole).
func Diff(path string, kube, ours any) []Difference {
	var out []Difference
	diff(path, kube, ours, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func diff(path string, a, b any, out *[]Difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			av, ain := am[k]
			bv, bin := bm[k]
			p := joinPath(path, k)
			switch {
			case !ain:
				*out = append(*out, Difference{Path: p, Kube: Absent, Ours: render(bv)})
			case !bin:
				*out = append(*out, Difference{Path: p, Kube: render(av), Ours: Absent})
			default:
				diff(p, av, bv, out)
			}
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		if len(al) != len(bl) && !(allObjects(al) && allObjects(bl)) {
			*out = append(*out, Difference{Path: path, Kube: render(a), Ours: render(b)})
			return
		}
		for i := 0; i < len(al) || i < len(bl); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(al):
				*out = append(*out, Difference{Path: p, Kube: Absent, Ours: render(bl[i])})
			case i >= len(bl):
				*out = append(*out, Difference{Path: p, Kube: render(al[i]), Ours: Absent})
			default:
				diff(p, al[i], bl[i], out)
			}
		}
		return
	}
	if ra, rb := render(a), render(b); ra != rb {
		*out = append(*out, Difference{Path: path, Kube: ra, Ours: rb})
	}
}

func allObjects(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + fmt.Sprintf("%q", key) + "]"
	}
	return path + "." + key
}

// render is compact JSON with sorted keys, cut to a readable length.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 400 {
		s = s[:397] + "..."
	}
	return s
}
