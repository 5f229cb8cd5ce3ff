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

// exceptions is the one table of accepted differences. The first that matches a
// difference gives its verdict.
var exceptions = []Exception{
	// What the spec and the design decisions ask for.
	{
		ID: "project-finalizer", Verdict: VerdictJustified,
		Path: re(`\.metadata\.finalizers$|\.f:metadata\.f:finalizers$`), Kube: re(`^<absent>$`),
		Ours:   re(`project-instances|^\{\}$`),
		Source: "decisions.md §1",
		Reason: "deleting a project deletes its instances first, like a Kubernetes namespace (a finalizer of ours)",
	},
	{
		ID: "project-delete-marks", Verdict: VerdictJustified, Case: re(`^core/delete-project-marks$`),
		Source: "decisions.md §1",
		Reason: "deleting a project deletes its instances first, like a Kubernetes namespace (a finalizer of ours)",
	},
	{
		ID: "graceful-deletion", Verdict: VerdictJustified, Case: re(`^core/delete-grace-period$`),
		Source: "decisions.md §2; issue 21 (must hold 1)",
		Reason: "Deletion: with finalizers, or with a grace period > 0, delete only marks (`deletionTimestamp`, `deletionGracePeriodSeconds`) ... graceful deletion with a grace period for every kind",
	},
	{
		ID: "kind-from-endpoint", Verdict: VerdictJustified, Case: re(`^core/no-kind$`),
		Source: "spec (Resources and their fields); decisions.md §1",
		Reason: "Servers may infer `kind` from the endpoint ... A body without `apiVersion`/`kind` takes them from the endpoint it was sent to",
	},
	{
		ID: "project-label", Verdict: VerdictJustified, Case: re(`^core/patch-remove-label$`),
		Source: "decisions.md §1",
		Reason: "the project label is set by the server from the namespace (a disagreeing client value → 422)",
	},
	{
		ID: "accesskey-verbs", Verdict: VerdictJustified, Case: re(`^discovery/accesskeys$`), Path: re(`\.verbs$`),
		Source: "decisions.md §1 (kinds table)",
		Reason: "AccessKey | accesskeys | cluster | create/get/list/update/patch/delete; the secret is stored only as a hash",
	},
	{
		ID: "token-verbs", Verdict: VerdictJustified, Case: re(`^discovery/directclusterendpointtokens$`), Path: re(`\.verbs$`),
		Source: "decisions.md §1 (kinds table)",
		Reason: "create (returns the token once); get/list/delete of the issued-token record, which never contains the token; delete revokes",
	},
	{
		ID: "no-core-v1", Verdict: VerdictJustified, Case: re(`^discovery/api$`), Path: re(`\.versions$`),
		Kube: re(`^\["v1"\]`), Ours: re(`^\[\]$`),
		Source: "decisions.md §1; measured with kubectl 1.32.4",
		Reason: "A stock `kubectl` and client-go's dynamic client must work against the example server without special flags " +
			"(no core kind is served: with v1 listed and /api/v1 empty, `kubectl api-resources` exits 1 with " +
			"\"unable to retrieve the complete list of server APIs: v1: received empty response for: v1\")",
	},
	{
		ID: "no-protobuf", Verdict: VerdictJustified, Path: re(`\.contentType$|\.body\.protobuf$`),
		Kube:   re(`protobuf|^true$`),
		Source: "decisions.md §1",
		Reason: "JSON and YAML on the wire",
	},
	{
		ID: "strategic-merge-patch", Verdict: VerdictJustified, Case: re(`^smp/`), Path: re(`\.code$`), Kube: re(`^415`),
		Source: "issue 21",
		Reason: "kube refuses it for CRDs too, but ours are built-in kinds: support strategic merge patch for them",
	},
	{
		ID: "apply-entry-time", Verdict: VerdictJustified, Case: re(`^apply/`),
		Path: re(`\.managedFields\.[^.|]+\|Apply\|[^.]*\.time$`), Kube: re(`^<absent>$`), Ours: re(`time`),
		Source: "spec (managedFields[] entry, time)",
		Reason: "time | object (timestamp) | When the entry was added. Updated when a field is added, when the manager " +
			"changes an owned value or when it removes a field. (A manager that applies a value already in place, sharing " +
			"the field, gets an entry, so ours stamps it; kube-apiserver stamps no time when the object does not change, " +
			"and the entry keeps none until that manager changes something)",
	},
	{
		ID: "name-column-doc", Verdict: VerdictJustified, Path: re(`\.columnDefinitions\[0\]\.description$`),
		Kube: re(`^"Name must be unique within a namespace`), Ours: re(`^"Unique within a namespace`),
		Source: "spec (Common metadata object, name); README (Differences from kube-apiserver)",
		Reason: "name | string | Unique within a namespace. Needed when creating unless `generateName` is used. Cannot be updated. " +
			"(kube-apiserver describes the Name column of every kind, built-in or custom, by ObjectMeta's Go documentation of name; " +
			"ours by the schema's documentation of the same field, the spec's words: kube's prose is not copied)",
	},

	// Where the reference, apiextensions-apiserver serving CRDs, is not what a
	// whole kube-apiserver serving built-in kinds answers.
	{
		ID: "cr-list-empty-continue", Verdict: VerdictReference, Path: re(`\.metadata\.continue$`),
		Kube: re(`^""$`), Ours: re(`^<absent>$`),
		Source: "kube-apiserver",
		Reason: "a custom resource list is unstructured and carries \"continue\": \"\"; built-in lists (typed ListMeta, omitempty) leave an empty continue out, as ours do",
	},
	{
		ID: "no-garbage-collector", Verdict: VerdictReference, Path: re(`\.managedFields(\.|\[")garbage-collector\|`),
		Kube:   re(`^<absent>$`),
		Source: "apiextensions-apiserver",
		Reason: "the reference runs no garbage collector (kube-controller-manager's would write to the object as ours does)",
	},
	{
		ID: "kube-internal-error", Verdict: VerdictReference, Path: re(`\.code$`), Kube: re(`^500`),
		Source: "kube-apiserver",
		Reason: "kube-apiserver answers 500 InternalError here (an error it does not map to a Status); a 5xx is no contract to copy",
	},
	{
		ID: "kube-duplicate-cause", Verdict: VerdictReference, Case: re(`^core/(add-finalizer-while-deleting|patch-uid-change)$`),
		Path: re(`\.details\.causes\[1\]$`), Ours: re(`^<absent>$`),
		Source: "k8s.io/apiserver pkg/registry/rest/update.go (ValidateUpdate, RecordDuplicateValidationErrors)",
		Reason: "kube-apiserver validates an update's metadata twice (validateCommonFields, then the strategy's own ObjectMeta " +
			"validation), so one error is listed twice; it counts such repeats as duplicate validation errors (a metric), a " +
			"defect and no contract: ours lists each cause once",
	},
	{
		ID: "typed-decoding", Verdict: VerdictReference, Case: re(`^core/invalid-type$`), Path: re(`\.code$`),
		Kube: re(`^422 Invalid .*FieldValueTypeInvalid`), Ours: re(`^400 BadRequest`),
		Source: "kube-apiserver",
		Reason: "a CRD checks types with its schema (422); for a built-in kind, as ours are, kube-apiserver fails to decode the body: 400 BadRequest",
	},
	{
		ID: "no-crd-openapi-v3", Verdict: VerdictReference, Case: re(`^discovery/openapi-v3$`), Path: re(`hasGroupVersion$`),
		Kube: re(`^false$`), Ours: re(`^true$`),
		Source: "apiextensions-apiserver (measured)",
		Reason: "standalone, its /openapi/v3 lists paths but not the CRDs' group version; kube-apiserver publishes it, and ours does (decisions §6: OpenAPI v3 so kubectl works)",
	},
	{
		ID: "no-apis-root", Verdict: VerdictReference, Case: re(`^discovery/(apis-has-group|aggregated)$`),
		Kube:   re(`404 page not found`),
		Source: "apiextensions-apiserver",
		Reason: "standalone, it serves no /apis root (kube-apiserver's aggregator does), so there is nothing to compare",
	},
}

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
