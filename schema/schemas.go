package schema

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/management-service/mgmt/resource"
)

// DraftURL is the JSON Schema dialect of every schema this package compiles: draft
// 2020-12. A schema may name it in "$schema" or leave "$schema" out; any other dialect
// is refused.
const DraftURL = "https://json-schema.org/draft/2020-12/schema"

// BaseURL is the base of the in-memory URLs of the built-in schema documents, e.g.
// BaseURL + "project.json". It is a name only: nothing is ever fetched from it.
const BaseURL = "https://schemas.management.service/v1/"

// CommonURL is the in-memory document that holds the definitions shared by every
// kind under "$defs": objectMeta, clusterObjectMeta, nameRequired, ownerReference,
// managedFieldsEntry, labels, annotations, timestamp, dnsSubdomain, dnsLabel, scope,
// scopeRule and more. A host schema may "$ref" them, e.g.
// CommonURL + "#/$defs/objectMeta".
const CommonURL = BaseURL + "common.json"

// registeredBaseURL is the base of the in-memory URLs given to host-registered
// schemas.
const registeredBaseURL = "https://schemas.management.service/registered/"

//go:embed schemas/*.json
var embedded embed.FS

// builtinKinds maps each kind of decisions §1 to its embedded document.
var builtinKinds = []struct {
	kind string
	file string
}{
	{resource.KindDirectClusterEndpointToken, "directclusterendpointtoken.json"},
	{resource.KindProjectMigrateVirtualClusterInstance, "projectmigratevirtualclusterinstance.json"},
	{resource.KindProject, "project.json"},
	{resource.KindVirtualClusterInstance, "virtualclusterinstance.json"},
	{resource.KindAccessKey, "accesskey.json"},
}

// document is one parsed schema document, kept in memory under its URL.
type document struct {
	url string
	raw []byte
	doc any // decoded with json.Number, read-only once built
}

// embeddedDocuments reads and lints every embedded document, sorted by URL.
func embeddedDocuments() ([]*document, error) {
	names, err := fs.Glob(embedded, "schemas/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	docs := make([]*document, 0, len(names))
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[BaseURL+path.Base(n)] = true
	}
	for _, n := range names {
		raw, err := embedded.ReadFile(n)
		if err != nil {
			return nil, err
		}
		d, err := parseDocument(BaseURL+path.Base(n), raw, true, known)
		if err != nil {
			return nil, fmt.Errorf("schema: embedded %s: %w", n, err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}
