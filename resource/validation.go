package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of object metadata, as Kubernetes has them.
const (
	// MaxNameLength is the longest object name: a DNS-1123 subdomain.
	MaxNameLength = 253
	// MaxNamespaceLength is the longest namespace name: a DNS-1123 label.
	MaxNamespaceLength = 63
	// MaxGeneratedNamePrefixLength is how much of a generateName prefix the store keeps
	// before it appends the random suffix (63 minus 5 suffix characters).
	MaxGeneratedNamePrefixLength = 58
	// MaxAnnotationsTotalBytes is the most the annotations of one object may hold: the
	// sum of the lengths of every key and value (256 KiB).
	MaxAnnotationsTotalBytes = 262144
	// MaxLabelValueLength is the longest label value, and the longest name part of a
	// label key or other qualified name.
	MaxLabelValueLength = 63
	// MaxFieldManagerLength is the longest managedFields manager name.
	MaxFieldManagerLength = 128
	// MaxSubresourceLength is the longest managedFields subresource name.
	MaxSubresourceLength = 256
)

// Finalizers the store itself understands.
const (
	// FinalizerOrphan makes deletion orphan the object's dependents first.
	FinalizerOrphan = "orphan"
	// FinalizerForegroundDeletion makes deletion wait for the object's blocking
	// dependents to be deleted first.
	FinalizerForegroundDeletion = "foregroundDeletion"
)

const (
	dns1123LabelRegex     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainRegex = dns1123LabelRegex + "(\\." + dns1123LabelRegex + ")*"
	qualifiedNameRegex    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

	dns1123LabelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric " +
		"characters or '-', and must start and end with an alphanumeric character " +
		"(e.g. 'my-name' or '123-abc', regex used for validation is '" + dns1123LabelRegex + "')"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case " +
		"alphanumeric characters, '-' or '.', and must start and end with an alphanumeric " +
		"character (e.g. 'example.com', regex used for validation is '" + dns1123SubdomainRegex + "')"
	qualifiedNameMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must " +
		"start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc', " +
		"regex used for validation is '" + qualifiedNameRegex + "')"
	qualifiedNameFormatMsg = "a qualified name must be an optional DNS subdomain prefix and '/', " +
		"followed by a name that " + qualifiedNameMsg
	labelValueMsg = "a valid label must be an empty string or consist of alphanumeric " +
		"characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
		"(e.g. 'MyValue', 'my_value' or '12345', regex used for validation is '(" + qualifiedNameRegex + ")?')"
)

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }

// IsDNS1123Label reports whether s matches [a-z0-9]([-a-z0-9]*[a-z0-9])?, a DNS-1123
// label without its length limit (63), which callers check where it applies.
func IsDNS1123Label(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// IsDNS1123Subdomain reports whether s is dot-separated DNS-1123 labels, without the
// length limit of a subdomain (253), which callers check where it applies.
func IsDNS1123Subdomain(s string) bool {
	if s == "" {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !IsDNS1123Label(label) {
			return false
		}
	}
	return true
}

// IsQualifiedNamePart reports whether s matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9],
// the name part of a qualified name (a label key) or a label value, without a length
// limit.
func IsQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// dns1123SubdomainErrors returns the problems of s as a DNS-1123 subdomain.
func dns1123SubdomainErrors(s string) []string {
	var msgs []string
	if len(s) > MaxNameLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", MaxNameLength))
	}
	if !IsDNS1123Subdomain(s) {
		msgs = append(msgs, dns1123SubdomainMsg)
	}
	return msgs
}

// pathSegmentErrors returns why s cannot be one segment of a URL path. In prefix mode
// (generateName) only the characters are checked.
func pathSegmentErrors(s string, prefix bool) []string {
	var msgs []string
	if !prefix {
		switch s {
		case ".":
			msgs = append(msgs, "may not be '.'")
		case "..":
			msgs = append(msgs, "may not be '..'")
		}
	}
	if strings.Contains(s, "/") {
		msgs = append(msgs, "may not contain '/'")
	}
	if strings.Contains(s, "%") {
		msgs = append(msgs, "may not contain '%'")
	}
	if strings.Contains(s, "\x00") {
		msgs = append(msgs, "may not contain NUL")
	}
	return msgs
}

func invalidAll(p Path, value string, msgs []string) ErrorList {
	if len(msgs) == 0 {
		return nil
	}
	errs := make(ErrorList, 0, len(msgs))
	for _, m := range msgs {
		errs = append(errs, Invalid(p, value, m))
	}
	return errs
}

// ValidateName checks an object name: a DNS-1123 subdomain of at most [MaxNameLength]
// characters that is usable as a URL path segment (not "." or "..", no "/", "%" or
// NUL). An empty name is FieldValueRequired; every other problem is FieldValueInvalid
// at fldPath, one error per rule broken.
func ValidateName(name string, fldPath Path) ErrorList {
	if name == "" {
		return ErrorList{Required(fldPath, "name is required")}
	}
	msgs := pathSegmentErrors(name, false)
	msgs = append(msgs, dns1123SubdomainErrors(name)...)
	return invalidAll(fldPath, name, msgs)
}

// ValidateNamespaceName checks a namespace name: a DNS-1123 label of at most
// [MaxNamespaceLength] characters. An empty name is FieldValueRequired.
func ValidateNamespaceName(ns string, fldPath Path) ErrorList {
	if ns == "" {
		return ErrorList{Required(fldPath, "namespace is required")}
	}
	msgs := pathSegmentErrors(ns, false)
	if len(ns) > MaxNamespaceLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", MaxNamespaceLength))
	}
	if !IsDNS1123Label(ns) {
		msgs = append(msgs, dns1123LabelMsg)
	}
	return invalidAll(fldPath, ns, msgs)
}

// ValidateGenerateName checks a generateName prefix with the name rule in prefix mode:
// a trailing '-' is allowed (the random suffix follows it) and "." or ".." are not
// special; a prefix that no generated name could be valid with (such as "a.-") is
// refused too. The store cuts the prefix to [MaxGeneratedNamePrefixLength] characters
// before use, so only the full name limit applies here. An empty prefix is
// FieldValueRequired.
func ValidateGenerateName(prefix string, fldPath Path) ErrorList {
	if prefix == "" {
		return ErrorList{Required(fldPath, "generateName is required")}
	}
	masked := prefix
	if len(masked) > 1 && masked[len(masked)-1] == '-' {
		masked = masked[:len(masked)-1] + "a"
	}
	msgs := pathSegmentErrors(prefix, true)
	msgs = append(msgs, dns1123SubdomainErrors(masked)...)
	if len(msgs) == 0 && !IsDNS1123Subdomain(prefix+"a") {
		// e.g. "a.-": the masked form "a.a" passes, but every generated name
		// ("a.-x2b4z") would not.
		msgs = append(msgs, "names generated from this prefix would not be valid: "+dns1123SubdomainMsg)
	}
	return invalidAll(fldPath, prefix, msgs)
}

// qualifiedNameErrors returns the problems of s as a qualified name: an optional DNS-1123
// subdomain prefix (at most 253 characters) and '/', then a name part of 1 to 63
// characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func qualifiedNameErrors(s string) []string {
	var msgs []string
	name := s
	switch strings.Count(s, "/") {
	case 0:
	case 1:
		i := strings.IndexByte(s, '/')
		prefix := s[:i]
		name = s[i+1:]
		if prefix == "" {
			msgs = append(msgs, "prefix part must be non-empty")
		} else {
			if len(prefix) > MaxNameLength {
				msgs = append(msgs, fmt.Sprintf("prefix part must be no more than %d characters", MaxNameLength))
			}
			if !IsDNS1123Subdomain(prefix) {
				msgs = append(msgs, "prefix part "+dns1123SubdomainMsg)
			}
		}
	default:
		return append(msgs, qualifiedNameFormatMsg)
	}
	switch {
	case name == "":
		msgs = append(msgs, "name part must be non-empty")
	case len(name) > MaxLabelValueLength:
		msgs = append(msgs, fmt.Sprintf("name part must be no more than %d characters", MaxLabelValueLength))
	}
	if name != "" && !IsQualifiedNamePart(name) {
		msgs = append(msgs, "name part "+qualifiedNameMsg)
	}
	return msgs
}

// ValidateLabelKey checks a label key (a qualified name: an optional DNS-1123
// subdomain prefix and '/', then a name of at most 63 characters). Errors are
// FieldValueInvalid at fldPath with the key as the bad value, the way Kubernetes
// reports them at metadata.labels.
func ValidateLabelKey(k string, fldPath Path) ErrorList {
	return invalidAll(fldPath, k, qualifiedNameErrors(k))
}

// ValidateQualifiedName checks a qualified name (the label key rule); finalizer names
// and annotation keys use it.
func ValidateQualifiedName(s string, fldPath Path) ErrorList {
	return ValidateLabelKey(s, fldPath)
}

// labelValueErrors returns the problems of v as a label value.
func labelValueErrors(v string) []string {
	var msgs []string
	if len(v) > MaxLabelValueLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", MaxLabelValueLength))
	}
	if v != "" && !IsQualifiedNamePart(v) {
		msgs = append(msgs, labelValueMsg)
	}
	return msgs
}

// ValidateLabelValue checks a label value: empty, or at most [MaxLabelValueLength]
// characters matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?. Errors are
// FieldValueInvalid at fldPath.
func ValidateLabelValue(v string, fldPath Path) ErrorList {
	return invalidAll(fldPath, v, labelValueErrors(v))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidateLabels checks every key and value of a label map. Errors are at fldPath
// (usually metadata.labels), in key order.
func ValidateLabels(labels map[string]string, fldPath Path) ErrorList {
	valid := true
	for k, v := range labels { // in map order: only the errors need key order
		if len(qualifiedNameErrors(k)) > 0 || len(labelValueErrors(v)) > 0 {
			valid = false
			break
		}
	}
	if valid {
		return nil
	}
	var errs ErrorList
	for _, k := range sortedKeys(labels) {
		errs = append(errs, ValidateLabelKey(k, fldPath)...)
		errs = append(errs, ValidateLabelValue(labels[k], fldPath)...)
	}
	return errs
}

// ValidateAnnotations checks annotation keys with the label key rule after lowercasing
// them, and that all keys and values together hold at most
// [MaxAnnotationsTotalBytes] bytes (FieldValueTooLong). Values are free-form.
func ValidateAnnotations(a map[string]string, fldPath Path) ErrorList {
	valid, total := true, 0
	for k, v := range a { // in map order: only the errors need key order
		total += len(k) + len(v)
		if valid && len(qualifiedNameErrors(strings.ToLower(k))) > 0 {
			valid = false
		}
	}
	if valid && total <= MaxAnnotationsTotalBytes {
		return nil
	}
	var errs ErrorList
	total = 0
	for _, k := range sortedKeys(a) {
		total += len(k) + len(a[k])
		for _, m := range qualifiedNameErrors(strings.ToLower(k)) {
			errs = append(errs, Invalid(fldPath, k, m))
		}
	}
	if total > MaxAnnotationsTotalBytes {
		errs = append(errs, TooLong(fldPath, nil, MaxAnnotationsTotalBytes))
	}
	return errs
}

// ValidateFinalizers checks finalizer names: each a qualified name (errors at
// fldPath[i]), no duplicates (FieldValueDuplicate at the later index), and not both
// [FinalizerOrphan] and [FinalizerForegroundDeletion] (FieldValueInvalid at fldPath).
func ValidateFinalizers(f []string, fldPath Path) ErrorList {
	var errs ErrorList
	seen := make(map[string]bool, len(f))
	for i, name := range f {
		p := fldPath.Index(i)
		errs = append(errs, ValidateQualifiedName(name, p)...)
		if seen[name] {
			errs = append(errs, Duplicate(p, name))
		}
		seen[name] = true
	}
	if seen[FinalizerOrphan] && seen[FinalizerForegroundDeletion] {
		errs = append(errs, Invalid(fldPath, nil, fmt.Sprintf(
			"finalizer %s and %s cannot be both set", FinalizerOrphan, FinalizerForegroundDeletion)))
	}
	return errs
}

// apiVersionErrors returns why v does not parse as "group/version" or "version".
func apiVersionErrors(v string) []string {
	if strings.Count(v, "/") > 1 {
		return []string{"must be \"group/version\" or \"version\""}
	}
	if _, version := SplitAPIVersion(v); version == "" {
		return []string{"version must not be empty"}
	}
	return nil
}

// ValidateOwnerReferences checks owner references: apiVersion, kind, name and uid are
// each required (FieldValueRequired at fldPath[i].<field>), apiVersion must parse as
// "group/version" or "version", and at most one reference may have controller: true
// (FieldValueInvalid at fldPath).
func ValidateOwnerReferences(refs []OwnerReference, fldPath Path) ErrorList {
	var errs ErrorList
	var controllers []string
	for i, r := range refs {
		p := fldPath.Index(i)
		if r.APIVersion == "" {
			errs = append(errs, Required(p.Child("apiVersion"), "version must not be empty"))
		} else {
			errs = append(errs, invalidAll(p.Child("apiVersion"), r.APIVersion, apiVersionErrors(r.APIVersion))...)
		}
		if r.Kind == "" {
			errs = append(errs, Required(p.Child("kind"), "kind must not be empty"))
		}
		if r.Name == "" {
			errs = append(errs, Required(p.Child("name"), "name must not be empty"))
		}
		if r.UID == "" {
			errs = append(errs, Required(p.Child("uid"), "uid must not be empty"))
		}
		if r.IsController() {
			controllers = append(controllers, r.Kind+"/"+r.Name)
		}
	}
	if len(controllers) > 1 {
		errs = append(errs, Invalid(fldPath, nil, fmt.Sprintf(
			"Only one reference can have Controller set to true. Found \"true\" in references for %s",
			strings.Join(controllers, " and "))))
	}
	return errs
}

// ValidateFieldManager checks a field manager name: at most [MaxFieldManagerLength]
// bytes (FieldValueTooLong) of printable characters.
func ValidateFieldManager(manager string, fldPath Path) ErrorList {
	var errs ErrorList
	if len(manager) > MaxFieldManagerLength {
		errs = append(errs, TooLong(fldPath, manager, MaxFieldManagerLength))
	}
	if !utf8.ValidString(manager) {
		return append(errs, Invalid(fldPath, manager, "must be valid UTF-8"))
	}
	for _, r := range manager {
		if !unicode.IsPrint(r) {
			errs = append(errs, Invalid(fldPath, manager, "must only contain printable characters"))
			break
		}
	}
	return errs
}

// isJSONObject reports whether raw is one valid JSON object.
func isJSONObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// ValidateManagedFields checks managedFields entries: operation is Apply or Update
// (empty: FieldValueRequired; other: FieldValueNotSupported), fieldsType is FieldsV1
// when set, manager is at most 128 printable characters, subresource at most 256
// bytes, and fieldsV1, when set (and not null), is a JSON object.
func ValidateManagedFields(m []ManagedFieldsEntry, fldPath Path) ErrorList {
	var errs ErrorList
	for i, e := range m {
		p := fldPath.Index(i)
		switch e.Operation {
		case ManagedFieldsOperationApply, ManagedFieldsOperationUpdate:
		case "":
			errs = append(errs, Required(p.Child("operation"), ""))
		default:
			errs = append(errs, NotSupported(p.Child("operation"), e.Operation,
				[]string{ManagedFieldsOperationApply, ManagedFieldsOperationUpdate}))
		}
		if e.FieldsType != "" && e.FieldsType != FieldsTypeV1 {
			errs = append(errs, NotSupported(p.Child("fieldsType"), e.FieldsType, []string{FieldsTypeV1}))
		}
		errs = append(errs, ValidateFieldManager(e.Manager, p.Child("manager"))...)
		if len(e.Subresource) > MaxSubresourceLength {
			errs = append(errs, TooLong(p.Child("subresource"), e.Subresource, MaxSubresourceLength))
		}
		if raw := bytes.TrimSpace(e.FieldsV1); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) && !isJSONObject(raw) {
			errs = append(errs, Invalid(p.Child("fieldsV1"), nil, "must be a JSON object"))
		}
	}
	return errs
}

// ValidateObjectMeta checks the metadata of an object a client sends: a name or a
// generateName is required ("name or generateName is required" at fldPath.name), name
// and generateName follow [ValidateName] and [ValidateGenerateName], the namespace is
// Forbidden for cluster-scoped kinds and a DNS label (when set) for namespaced ones,
// generation is not negative, and labels, annotations, finalizers, ownerReferences and
// managedFields follow their rules. fldPath is usually NewPath("metadata").
func ValidateObjectMeta(meta *ObjectMeta, namespaced bool, fldPath Path) ErrorList {
	if meta == nil {
		return ErrorList{Required(fldPath, "metadata is required")}
	}
	var errs ErrorList
	switch {
	case meta.Name != "":
		errs = append(errs, ValidateName(meta.Name, metaChild(fldPath, "name"))...)
	case meta.GenerateName == "":
		errs = append(errs, Required(metaChild(fldPath, "name"), "name or generateName is required"))
	}
	if meta.GenerateName != "" {
		errs = append(errs, ValidateGenerateName(meta.GenerateName, metaChild(fldPath, "generateName"))...)
	}
	if namespaced {
		if meta.Namespace != "" {
			errs = append(errs, ValidateNamespaceName(meta.Namespace, metaChild(fldPath, "namespace"))...)
		}
	} else if meta.Namespace != "" {
		errs = append(errs, Forbidden(metaChild(fldPath, "namespace"), "not allowed on this type"))
	}
	if meta.Generation < 0 {
		errs = append(errs, Invalid(metaChild(fldPath, "generation"), meta.Generation, "must be greater than or equal to 0"))
	}
	errs = append(errs, ValidateLabels(meta.Labels, metaChild(fldPath, "labels"))...)
	errs = append(errs, ValidateAnnotations(meta.Annotations, metaChild(fldPath, "annotations"))...)
	errs = append(errs, ValidateFinalizers(meta.Finalizers, metaChild(fldPath, "finalizers"))...)
	errs = append(errs, ValidateOwnerReferences(meta.OwnerReferences, metaChild(fldPath, "ownerReferences"))...)
	errs = append(errs, ValidateManagedFields(meta.ManagedFields, metaChild(fldPath, "managedFields"))...)
	return errs
}

// metaChildren are the paths of the fields of "metadata", made once: metadata is
// validated on every write, and the paths are needed only for errors.
var metaChildren = func() map[string]Path {
	m := map[string]Path{}
	for _, f := range []string{"name", "generateName", "namespace", "generation", "labels", "annotations",
		"finalizers", "ownerReferences", "managedFields"} {
		m[f] = NewPath("metadata").Child(f)
	}
	return m
}()

// metaChild is fldPath.Child(name), without allocating when fldPath is "metadata".
func metaChild(fldPath Path, name string) Path {
	if fldPath.s == "metadata" {
		if p, ok := metaChildren[name]; ok {
			return p
		}
	}
	return fldPath.Child(name)
}
