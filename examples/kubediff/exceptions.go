package main

import "regexp"

// Verdicts of a difference.
const (
	// VerdictBug is a difference nothing justifies: the example server should
	// answer as kube-apiserver does.
	VerdictBug = "bug"
	// VerdictJustified is a difference the spec or the design decisions ask for.
	VerdictJustified = "justified"
	// VerdictReference is a difference due to the reference server: an
	// apiextensions-apiserver serving CRDs is not a whole kube-apiserver (it serves
	// no core group and no authentication or authorization APIs, and CRDs lack what
	// built-in kinds have).
	VerdictReference = "reference"
)

// Exception is a difference the suite accepts, with the reason quoted from where it
// is decided.
type Exception struct {
	// ID names it in the report.
	ID string
	// Verdict is VerdictJustified or VerdictReference.
	Verdict string
	// Case and Path match the case name and the difference's path; nil matches
	// every one.
	Case, Path *regexp.Regexp
	// Kube and Ours, when set, must match the two rendered values.
	Kube, Ours *regexp.Regexp
	// Source is where the reason is written (spec, decisions.md, issue 21).
	Source string
	// Reason is quoted from Source.
	Reason string
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// exceptions is the one table of accepted differences.
var exceptions = []Exception{}

// Classify gives each difference of a case its verdict: the first exception that
// matches, else a bug.
func Classify(caseName string, ds []Difference) {
	for i := range ds {
		ds[i].Verdict, ds[i].Exception = VerdictBug, ""
		for _, e := range exceptions {
			if e.matches(caseName, ds[i]) {
				ds[i].Verdict, ds[i].Exception = e.Verdict, e.ID
				break
			}
		}
	}
}

func (e *Exception) matches(caseName string, d Difference) bool {
	return (e.Case == nil || e.Case.MatchString(caseName)) &&
		(e.Path == nil || e.Path.MatchString(d.Path)) &&
		(e.Kube == nil || e.Kube.MatchString(d.Kube)) &&
		(e.Ours == nil || e.Ours.MatchString(d.Ours))
}

// exceptionsJSON is the table as the JSON output shows it.
func exceptionsJSON() []map[string]string {
	out := make([]map[string]string, 0, len(exceptions))
	for _, e := range exceptions {
		m := map[string]string{"id": e.ID, "verdict": e.Verdict, "source": e.Source, "reason": e.Reason}
		for k, r := range map[string]*regexp.Regexp{"case": e.Case, "path": e.Path, "kube": e.Kube, "ours": e.Ours} {
			if r != nil {
				m[k] = r.String()
			}
		}
		out = append(out, m)
	}
	return out
}
