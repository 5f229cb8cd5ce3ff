package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// CaseResult is the outcome of one case.
type CaseResult struct {
	Name string `json:"name"`
	Area string `json:"area"`
	// Same is true when no difference was found.
	Same bool `json:"same"`
	// Error is a failure to run the case (a server unreachable, a setup step
	// refused), which counts as a difference.
	Error       string       `json:"error,omitempty"`
	Differences []Difference `json:"differences,omitempty"`
	// Kube and Ours are the normalised answers (in the JSON output).
	Kube []StepResult `json:"kube,omitempty"`
	Ours []StepResult `json:"ours,omitempty"`
}

// Bugs counts the differences no exception justifies.
func (r *CaseResult) Bugs() int {
	n := 0
	for _, d := range r.Differences {
		if d.Verdict == VerdictBug {
			n++
		}
	}
	if r.Error != "" {
		n++
	}
	return n
}

// Summary is the table the suite prints.
type Summary struct {
	Cases     int `json:"cases"`
	Same      int `json:"same"`
	Different int `json:"different"`
	// WithBugs are the different cases with at least one unjustified difference;
	// the others differ only where an exception applies.
	WithBugs  int `json:"withBugs"`
	Justified int `json:"justifiedOnly"`
	// Differences counts every difference, by verdict.
	Differences map[string]int `json:"differences"`
	// Areas counts cases and different cases per area.
	Areas map[string][2]int `json:"areas"`
}

// Summarize counts the results.
func Summarize(rs []CaseResult) Summary {
	s := Summary{Differences: map[string]int{}, Areas: map[string][2]int{}}
	for _, r := range rs {
		s.Cases++
		a := s.Areas[r.Area]
		a[0]++
		if r.Same {
			s.Same++
		} else {
			s.Different++
			a[1]++
			if r.Bugs() > 0 {
				s.WithBugs++
			} else {
				s.Justified++
			}
		}
		s.Areas[r.Area] = a
		for _, d := range r.Differences {
			s.Differences[d.Verdict]++
		}
		if r.Error != "" {
			s.Differences["error"]++
		}
	}
	return s
}

// PrintText writes the human report: each different case with its differences and
// verdicts, then the table.
func PrintText(w io.Writer, rs []CaseResult) {
	for _, r := range rs {
		if r.Same {
			continue
		}
		fmt.Fprintf(w, "DIFF %s (area %s)\n", r.Name, r.Area)
		if r.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", r.Error)
		}
		for _, d := range r.Differences {
			v := d.Verdict
			if d.Exception != "" {
				v += " [" + d.Exception + "]"
			}
			fmt.Fprintf(w, "    %-10s %s\n        kube: %s\n        ours: %s\n", v, d.Path, d.Kube, d.Ours)
		}
	}
	printDistinct(w, rs)
	s := Summarize(rs)
	fmt.Fprintln(w)
	areas := make([]string, 0, len(s.Areas))
	for a := range s.Areas {
		areas = append(areas, a)
	}
	sort.Strings(areas)
	fmt.Fprintln(w, "area        cases  different")
	for _, a := range areas {
		fmt.Fprintf(w, "%-10s  %5d  %9d\n", a, s.Areas[a][0], s.Areas[a][1])
	}
	var verdicts []string
	for v, n := range s.Differences {
		verdicts = append(verdicts, fmt.Sprintf("%s %d", v, n))
	}
	sort.Strings(verdicts)
	fmt.Fprintf(w, "differences by verdict: %s\n", strings.Join(verdicts, ", "))
	fmt.Fprintf(w, "%d cases, %d same, %d different (%d with a bug, %d only with accepted exceptions)\n",
		s.Cases, s.Same, s.Different, s.WithBugs, s.Justified)
}

// PrintJSON writes the results and the summary as one JSON document.
func PrintJSON(w io.Writer, rs []CaseResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"summary": Summarize(rs), "cases": rs, "exceptions": exceptionsJSON()})
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// printDistinct lists the unjustified differences once each, grouped by what
// differs (the path without its step label and list indices) and the two values,
// with the cases that show it: the list to hand out.
func printDistinct(w io.Writer, rs []CaseResult) {
	type group struct {
		key   string
		cases []string
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range rs {
		for _, d := range r.Differences {
			if d.Verdict != VerdictBug {
				continue
			}
			path := d.Path
			if i := strings.IndexByte(path, '.'); i >= 0 {
				path = path[i+1:]
			}
			path = indexRE.ReplaceAllString(path, "[]")
			key := fmt.Sprintf("%s\n        kube: %s\n        ours: %s", path, d.Kube, d.Ours)
			g, ok := groups[key]
			if !ok {
				g = &group{key: key}
				groups[key] = g
				order = append(order, key)
			}
			if len(g.cases) == 0 || g.cases[len(g.cases)-1] != r.Name {
				g.cases = append(g.cases, r.Name)
			}
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d distinct unjustified differences:\n", len(order))
	for _, k := range order {
		g := groups[k]
		fmt.Fprintf(w, "  - %s\n        in %d case(s): %s\n", g.key, len(g.cases), strings.Join(g.cases, ", "))
	}
}
