package httpapi

import (
	"encoding/json"
	"net/http"
	"runtime"
	"sort"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
)

// Version is what /version reports. The server speaks the wire API of Kubernetes 1.32
// for the kinds it serves (a kubectl of that generation expects no more), so it says
// so in major and minor; gitVersion names this package. Change it before New to
// report another.
var Version = map[string]string{
	"major":        "1",
	"minor":        "32",
	"gitVersion":   "v1.32.0+mgmt",
	"gitCommit":    "",
	"gitTreeState": "",
	"buildDate":    "",
	"goVersion":    runtime.Version(),
	"compiler":     runtime.Compiler,
	"platform":     runtime.GOOS + "/" + runtime.GOARCH,
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

// document is a non-resource document, encoded once.
type document struct {
	body []byte
	// hash, for an OpenAPI document: its Etag, and the hash clients put in its URL.
	hash string
}

// buildDocuments encodes the discovery and OpenAPI documents once: kubectl and
// client-go read them to map kinds to resources (legacy discovery, application/json)
// and to learn the kinds' fields.
func (s *Server) buildDocuments(reg *schema.Registry) error {
	s.docs = map[string]*document{}
	var err error
	put := func(path string, v any) {
		if err != nil {
			return
		}
		var b []byte
		b, err = json.Marshal(v)
		s.docs[path] = &document{body: b}
	}
	// No core group: /api lists no version, so that kubectl and client-go never ask for
	// its resources (their cached discovery takes an empty list for an error). /api/v1
	// is served all the same, empty, for the clients that read it without asking /api
	// first (the Python client's DynamicClient, whose lookups by kind fail on a 404).
	put("/api", map[string]any{"kind": "APIVersions", "versions": []string{}, "serverAddressByClientCIDRs": []any{}})
	put("/api/v1", map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{}})
	put("/version", Version)
	var groups []apiGroup
	openapiIndex := map[string]any{}
	for _, g := range s.groups {
		gv := groupVersionForDiscovery{GroupVersion: g.groupVersion(), Version: g.version}
		group := apiGroup{Name: g.name, Versions: []groupVersionForDiscovery{gv}, PreferredVersion: gv}
		groups = append(groups, group)
		group.Kind, group.APIVersion = "APIGroup", "v1"
		put("/apis/"+g.name, group)
		put("/apis/"+g.groupVersion(), map[string]any{"kind": "APIResourceList", "apiVersion": "v1",
			"groupVersion": g.groupVersion(), "resources": discoveryResources(g)})
		if err != nil {
			return err
		}
		doc, err := buildOpenAPI(reg, g, s.base, s.cfg.Title)
		if err != nil {
			return err
		}
		path := "/openapi/v3/apis/" + g.groupVersion()
		s.docs[path] = doc
		// A server-relative URL that is not rooted at /openapi/v3 is used as it is by
		// every client-go version; one rooted there would lose the base path on older
		// ones.
		openapiIndex["apis/"+g.groupVersion()] = map[string]any{"serverRelativeURL": s.base + path + "?hash=" + doc.hash}
	}
	put("/apis", map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
	put("/openapi/v3", map[string]any{"paths": openapiIndex})
	paths := []string{"/healthz", "/livez", "/readyz"}
	for p := range s.docs {
		paths = append(paths, p)
	}
	for p := range s.cfg.Public {
		paths = append(paths, p)
	}
	for p := range s.cfg.NonResource {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	put("/", map[string][]string{"paths": paths})
	return err
}

// discoveryResources lists a group's resources and subresources for discovery.
func discoveryResources(g *servedGroup) []apiResource {
	var res []apiResource
	for _, sr := range g.resources {
		k := sr.kind
		categories := sr.categories
		res = append(res, apiResource{Name: k.Resource, SingularName: strings.ToLower(k.Kind), Namespaced: k.Namespaced,
			Kind: k.Kind, Verbs: sr.verbs, ShortNames: sr.shortNames, Categories: categories})
		if len(sr.statusVerbs) > 0 {
			res = append(res, apiResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.Kind,
				Verbs: sr.statusVerbs})
		}
		for _, sub := range sr.subList {
			res = append(res, apiResource{Name: k.Resource + "/" + sub.Name, Namespaced: k.Namespaced,
				Kind: sub.kind.Kind, Verbs: []string{"create"}})
		}
	}
	return res
}

// serveNonResource serves discovery, /version, the OpenAPI documents and the extra
// non-resource endpoints of the configuration.
func (s *Server) serveNonResource(w http.ResponseWriter, r *http.Request, ri *route) {
	if h, ok := s.cfg.NonResource[ri.nonResource]; ok {
		h.ServeHTTP(w, r)
		return
	}
	doc, ok := s.docs[ri.nonResource]
	if !ok {
		s.writeError(w, r, notFound())
		return
	}
	if doc.hash != "" {
		w.Header().Set("Etag", `"`+doc.hash+`"`)
		if r.URL.Query().Get("hash") == doc.hash {
			w.Header().Set("Cache-Control", "public, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		if match := r.Header.Get("If-None-Match"); match == `"`+doc.hash+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	// These documents are JSON only, as kube-apiserver serves them to JSON clients.
	if mt, _ := negotiate(r.Header.Get("Accept")); mt != resource.MediaTypeJSON && !acceptsJSONAnywhere(r) {
		s.writeError(w, r, resource.NewNotAcceptable(r.Header.Get("Accept")))
		return
	}
	writeJSON(w, http.StatusOK, doc.body)
}

// acceptsJSONAnywhere reports whether Accept names application/json in any form
// (discovery clients ask for aggregated discovery first, with parameters).
func acceptsJSONAnywhere(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return a == "" || strings.Contains(a, "application/json") || strings.Contains(a, "*/*")
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", resource.MediaTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
