package schema

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"sync"

	"github.com/management-service/mgmt/resource"
)

// Registry holds one compiled [Validator] per kind that has a schema: the five
// built-in kinds of management.service/v1 and every kind a host registered. It is safe
// for concurrent use.
type Registry struct {
	mu         sync.RWMutex
	validators map[resource.GroupVersionKind]*Validator
}

// builtins compiles the embedded schemas once per process; the validators are
// immutable and shared by every registry.
var builtins = sync.OnceValues(compileBuiltins)

type builtinSet struct {
	docs       []*document
	parsed     map[string]any
	known      map[string]bool
	validators map[resource.GroupVersionKind]*Validator
}

func compileBuiltins() (*builtinSet, error) {
	docs, err := embeddedDocuments()
	if err != nil {
		return nil, err
	}
	set := &builtinSet{
		docs:       docs,
		parsed:     make(map[string]any, len(docs)),
		known:      make(map[string]bool, len(docs)),
		validators: make(map[resource.GroupVersionKind]*Validator, len(builtinKinds)),
	}
	for _, d := range docs {
		set.parsed[d.url] = d.doc
		set.known[d.url] = true
	}
	for _, k := range builtinKinds {
		u := BaseURL + k.file
		s, err := compile(docs, u)
		if err != nil {
			return nil, fmt.Errorf("schema: built-in %s: %w", k.kind, err)
		}
		gvk := resource.GroupVersionKind{Group: resource.Group, Version: resource.Version, Kind: k.kind}
		var source []byte
		for _, d := range docs {
			if d.url == u {
				source = d.raw
			}
		}
		set.validators[gvk] = &Validator{gvk: gvk, info: kindInfo(gvk), schema: s, docs: set.parsed, source: source, root: u}
	}
	return set, nil
}

// kindInfo is the minimal KindInfo an Invalid error needs: group and kind.
func kindInfo(gvk resource.GroupVersionKind) *resource.KindInfo {
	return &resource.KindInfo{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

// NewRegistry returns a registry with the schemas of the five built-in kinds
// (DirectClusterEndpointToken, ProjectMigrateVirtualClusterInstance, Project,
// VirtualClusterInstance and AccessKey). The embedded schemas are compiled once per
// process; NewRegistry panics only if they do not compile, which the package's tests
// rule out.
func NewRegistry() *Registry {
	set, err := builtins()
	if err != nil {
		panic(err)
	}
	r := &Registry{validators: make(map[resource.GroupVersionKind]*Validator, len(set.validators))}
	for gvk, v := range set.validators {
		r.validators[gvk] = v
	}
	return r
}

var (
	kindRE    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,62}$`)
	versionRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	groupRE   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`)
)

// Register compiles schemaJSON, a draft 2020-12 JSON Schema, as the schema of a kind
// of the host program, and adds its validator. The document lives in memory only: it
// may "$ref" the definitions of [CommonURL] (and the other built-in documents under
// [BaseURL]) and its own parts, nothing else. Register refuses, with an error that
// matches [ErrInvalidSchema]:
//   - text that is not one JSON object or boolean, larger than [MaxSchemaSize] or
//     nested deeper than 128 levels;
//   - any keyword outside the draft 2020-12 vocabularies (a typo such as "maxLenght"
//     included), "$schema" naming another dialect or appearing below the root, "$id"
//     and "$vocabulary";
//   - a "format" the validator cannot assert;
//   - a "$ref" or "$dynamicRef" to anything that is not an in-memory document, such
//     as file:// or http(s):// (the error also matches [ErrExternalRef]);
//   - a document the draft 2020-12 metaschema rejects (wrong keyword types, invalid
//     regular expressions, ...).
//
// A kind that already has a schema, built-in or registered, is refused with
// [ErrAlreadyRegistered]. Formats are asserted ("format": "date-time" rejects
// "yesterday"). The validated object always carries "apiVersion" and "kind" (they
// are filled in from gvk when absent), so a schema that forbids additional
// properties must declare them.
func (r *Registry) Register(gvk resource.GroupVersionKind, schemaJSON []byte) error {
	if !kindRE.MatchString(gvk.Kind) || !versionRE.MatchString(gvk.Version) ||
		!groupRE.MatchString(gvk.Group) || len(gvk.Group) > 253 {
		return fmt.Errorf("schema: invalid kind %q: need a CamelCase kind, a DNS-label version and a DNS-subdomain group", gvk.String())
	}
	set, err := builtins()
	if err != nil {
		return err
	}
	r.mu.RLock()
	_, dup := r.validators[gvk]
	r.mu.RUnlock()
	if dup {
		return fmt.Errorf("%w: %s", ErrAlreadyRegistered, gvk)
	}
	group := gvk.Group
	if group == "" {
		group = "core"
	}
	u := registeredBaseURL + url.PathEscape(group) + "/" + url.PathEscape(gvk.Version) + "/" + url.PathEscape(gvk.Kind) + ".json"
	known := make(map[string]bool, len(set.known)+1)
	for k := range set.known {
		known[k] = true
	}
	known[u] = true
	raw := append([]byte(nil), schemaJSON...)
	d, err := parseDocument(u, raw, false, known)
	if err != nil {
		return fmt.Errorf("%w for %s: %w", ErrInvalidSchema, gvk, err)
	}
	docs := append(append(make([]*document, 0, len(set.docs)+1), set.docs...), d)
	s, err := compile(docs, u)
	if err != nil {
		return fmt.Errorf("%w for %s: %w", ErrInvalidSchema, gvk, err)
	}
	parsed := make(map[string]any, len(set.parsed)+1)
	for k, v := range set.parsed {
		parsed[k] = v
	}
	parsed[u] = d.doc
	v := &Validator{gvk: gvk, info: kindInfo(gvk), schema: s, docs: parsed, source: raw, root: u}

	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.validators[gvk]; dup {
		return fmt.Errorf("%w: %s", ErrAlreadyRegistered, gvk)
	}
	r.validators[gvk] = v
	return nil
}

// Validator returns the validator of a kind, and false if the kind has no schema.
func (r *Registry) Validator(gvk resource.GroupVersionKind) (*Validator, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.validators[gvk]
	return v, ok
}

// Kinds returns every kind that has a schema, sorted by group, version and kind.
func (r *Registry) Kinds() []resource.GroupVersionKind {
	r.mu.RLock()
	out := make([]resource.GroupVersionKind, 0, len(r.validators))
	for gvk := range r.validators {
		out = append(out, gvk)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}
