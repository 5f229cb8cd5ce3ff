package apiserver

import (
	"encoding/json"
	"net/http"
	"runtime"
	"sort"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/token"
)

// Version is what /version reports. The server speaks the wire API of Kubernetes 1.32
// for the kinds it serves (a kubectl of that generation expects no more), so it says
// so in major and minor; gitVersion names this server.
var Version = map[string]string{
	"major":        "1",
	"minor":        "32",
	"gitVersion":   "v1.32.0+mgmt-example",
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

// buildDiscovery encodes the discovery documents once: kubectl and client-go read
// them to map kinds to resources (legacy discovery, application/json).
func (s *Server) buildDiscovery() error {
	gv := groupVersionForDiscovery{GroupVersion: resource.GroupVersion, Version: resource.Version}
	group := apiGroup{Name: resource.Group, Versions: []groupVersionForDiscovery{gv}, PreferredVersion: gv}
	var err error
	enc := func(v any) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = json.Marshal(v)
		return b
	}
	// No core group: /api lists no version.
	s.apiVersions = enc(map[string]any{"kind": "APIVersions", "versions": []string{},
		"serverAddressByClientCIDRs": []any{}})
	s.apiGroupList = enc(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []apiGroup{group}})
	g := group
	g.Kind, g.APIVersion = "APIGroup", "v1"
	s.apiGroup = enc(g)

	var res []apiResource
	names := make([]string, 0, len(s.served))
	for n := range s.served {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sr := s.served[n]
		k := sr.kind
		res = append(res, apiResource{Name: k.Resource, SingularName: strings.ToLower(k.Kind), Namespaced: k.Namespaced,
			Kind: k.Kind, Verbs: sr.verbs, ShortNames: sr.shortNames, Categories: []string{"management"}})
		if len(sr.statusVerbs) > 0 {
			res = append(res, apiResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.Kind,
				Verbs: sr.statusVerbs})
		}
		if sr.sub != "" {
			res = append(res, apiResource{Name: k.Resource + "/" + sr.sub, Namespaced: k.Namespaced,
				Kind: sr.subKind.Kind, Verbs: []string{"create"}})
		}
	}
	s.apiResourceList = enc(map[string]any{"kind": "APIResourceList", "apiVersion": "v1",
		"groupVersion": resource.GroupVersion, "resources": res})
	s.versionInfo = enc(Version)
	return err
}

// serveNonResource serves discovery, /version and the OpenAPI documents.
func (s *Server) serveNonResource(w http.ResponseWriter, r *http.Request, ri *route) {
	var body []byte
	switch ri.nonResource {
	case "/":
		body, _ = json.Marshal(map[string][]string{"paths": {
			"/.well-known/openid-configuration", "/api", "/apis", "/apis/" + resource.Group,
			"/apis/" + resource.GroupVersion, "/healthz", "/livez", "/openapi/v3", "/openid/v1/jwks",
			"/readyz", "/version"}})
	case "/version":
		body = s.versionInfo
	case "/api":
		body = s.apiVersions
	case "/apis":
		body = s.apiGroupList
	case "/apis/" + resource.Group:
		body = s.apiGroup
	case "/apis/" + resource.GroupVersion:
		body = s.apiResourceList
	case "/openapi/v3":
		body = s.openapi.index
	case "/openapi/v3/apis/" + resource.GroupVersion:
		body = s.openapi.doc
		w.Header().Set("Etag", `"`+s.openapi.hash+`"`)
		if r.URL.Query().Get("hash") == s.openapi.hash {
			w.Header().Set("Cache-Control", "public, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		if match := r.Header.Get("If-None-Match"); match == `"`+s.openapi.hash+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	default:
		s.writeError(w, r, notFound())
		return
	}
	// These documents are JSON only, as kube-apiserver serves them to JSON clients.
	if mt, _ := negotiate(r.Header.Get("Accept")); mt != resource.MediaTypeJSON && !acceptsJSONAnywhere(r) {
		s.writeError(w, r, resource.NewNotAcceptable(r.Header.Get("Accept")))
		return
	}
	writeJSON(w, http.StatusOK, body)
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

// serveOpenID serves the token issuer's JWKS and discovery document, without
// authentication: they hold public keys only, for connected clusters to verify tokens
// offline.
func (s *Server) serveOpenID(w http.ResponseWriter, r *http.Request, path string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed(nil, r.Method))
		return
	}
	switch path {
	case token.JWKSPath:
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.cfg.Issuer.Keys().JWKS())
	case token.DiscoveryPath:
		if s.cfg.Discovery == nil {
			s.writeError(w, r, notFound())
			return
		}
		b, err := s.cfg.Discovery.JSON()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		writeJSON(w, http.StatusOK, b)
	}
}
