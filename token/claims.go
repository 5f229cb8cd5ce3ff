package token

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
)

// TokenType is the value of the JWS header "typ" of every token this package signs
// (RFC 8725 §3.11 explicit typing). A verifier refuses any other value, so that a JWT
// minted for another purpose by a key it trusts cannot be replayed as one of ours.
// "application/dcet+jwt" is accepted as the same type.
const TokenType = "dcet+jwt"

// ClaimName is the name of the private claim: {uid, name, kind, gen, rec, scope, key,
// kuid}.
const ClaimName = "management.service"

// Claims are the verified contents of a token.
//
// On the wire the token's payload is
//
//	{"iss":…, "sub":…, "aud":… (optional), "iat":…, "nbf":…, "exp":…, "jti":…,
//	 "management.service": {"uid":…, "name":…, "kind":…, "gen":…, "rec":…, "scope":…}}
//
// with the times as integer seconds since the epoch. "scope" is absent when the token
// has no restriction beyond its subject's rights (a nil scope), and present (possibly
// empty) otherwise; its encoding is described at [ManagementClaim].
type Claims struct {
	// Issuer is "iss", the issuer's URL.
	Issuer string
	// Subject is "sub": "<kind>:<name>" of the caller the token was issued to (just
	// "<name>" when the caller has no kind).
	Subject string
	// Audience is "aud": the connected clusters or endpoints the token is bound to;
	// empty when it is not bound.
	Audience []string
	// IssuedAt is "iat".
	IssuedAt time.Time
	// NotBefore is "nbf"; the issuer sets it to IssuedAt.
	NotBefore time.Time
	// Expiry is "exp"; the record's status.expirationTimestamp has the same value.
	Expiry time.Time
	// ID is "jti": the uid of the DirectClusterEndpointToken record.
	ID string
	// Management is the private claim "management.service".
	Management ManagementClaim
	// KeyID is the header's "kid": the key that signed the token.
	KeyID string
	// Algorithm is the header's "alg".
	Algorithm Algorithm
}

// Scope returns the granted scope, ready for [policy.Evaluate] or [policy.Compile]:
// nil means no restriction beyond the subject's own rights.
func (c *Claims) Scope() *resource.AccessKeyScope { return c.Management.Scope }

// Evaluate decides req against the token's scope (see [policy.Evaluate]). It only
// narrows: the subject must still have the right to do what the scope allows.
func (c *Claims) Evaluate(req policy.Request) policy.Decision {
	return policy.Evaluate(c.Management.Scope, req)
}

// ManagementClaim is the private claim "management.service": who the token was issued
// to, and what it may do.
//
// On the wire, "scope" is the [resource.AccessKeyScope] in a compact form, so that a
// ten-entry scope fits in a token of less than 1 KiB: the field names are those of
// AccessKeyScope, but an entry of projects is the project name, and an entry of
// spaces or virtualClusters is "<project>/<name>" (names are DNS-1123 subdomains or
// "*" and never contain "/"); allowServiceCli and rules are written as in
// AccessKeyScope. For example
//
//	{"projects":["web"],"virtualClusters":["web/dev","ops/*"]}
//
// is the scope {projects: [{project: web}], virtualClusters: [{project: web,
// virtualCluster: dev}, {project: ops, virtualCluster: "*"}]}.
type ManagementClaim struct {
	// UID is "uid", the caller's uid.
	UID string
	// Name is "name", the caller's name.
	Name string
	// Kind is "kind", the caller's kind (for example "User", "Team" or "AccessKey").
	Kind string
	// Generation is "gen", the caller's token generation when the token was issued. An
	// online check refuses the token once the subject's generation is higher.
	Generation int64
	// Record is "rec", the name of the DirectClusterEndpointToken record whose uid is
	// the token's jti, so that an online check can find it.
	Record string
	// Scope is "scope", the granted scope; nil means no restriction.
	Scope *resource.AccessKeyScope
	// AccessKey is "key", the name of the AccessKey the token was minted with; empty
	// (and absent on the wire) when the issuer was not told.
	AccessKey string
	// AccessKeyUID is "kuid", the uid of that AccessKey. The online check refuses the
	// token once the key of that name is gone, has another uid or is being deleted.
	AccessKeyUID string
}

// wireScope is the compact form of an AccessKeyScope in a token.
type wireScope struct {
	AllowServiceCli bool                          `json:"allowServiceCli,omitempty"`
	Projects        []string                      `json:"projects,omitempty"`
	Spaces          []string                      `json:"spaces,omitempty"`
	VirtualClusters []string                      `json:"virtualClusters,omitempty"`
	Rules           []resource.AccessKeyScopeRule `json:"rules,omitempty"`
}

func encodeScope(s *resource.AccessKeyScope) *wireScope {
	if s == nil {
		return nil
	}
	w := &wireScope{AllowServiceCli: s.AllowServiceCli, Rules: s.Rules}
	if len(s.Projects) > 0 {
		w.Projects = make([]string, len(s.Projects))
		for i, p := range s.Projects {
			w.Projects[i] = p.Project
		}
	}
	if len(s.Spaces) > 0 {
		w.Spaces = make([]string, len(s.Spaces))
		for i, p := range s.Spaces {
			w.Spaces[i] = p.Project + "/" + p.Space
		}
	}
	if len(s.VirtualClusters) > 0 {
		w.VirtualClusters = make([]string, len(s.VirtualClusters))
		for i, p := range s.VirtualClusters {
			w.VirtualClusters[i] = p.Project + "/" + p.VirtualCluster
		}
	}
	return w
}

// encodable reports whether the scope survives the compact form: no "/" in a project,
// space or virtual cluster name (a valid scope has none).
func encodable(s *resource.AccessKeyScope) bool {
	if s == nil {
		return true
	}
	for _, p := range s.Projects {
		if strings.Contains(p.Project, "/") {
			return false
		}
	}
	for _, p := range s.Spaces {
		if strings.Contains(p.Project, "/") || strings.Contains(p.Space, "/") {
			return false
		}
	}
	for _, p := range s.VirtualClusters {
		if strings.Contains(p.Project, "/") || strings.Contains(p.VirtualCluster, "/") {
			return false
		}
	}
	return true
}

func decodeScope(w *wireScope) (*resource.AccessKeyScope, error) {
	if w == nil {
		return nil, nil
	}
	s := &resource.AccessKeyScope{AllowServiceCli: w.AllowServiceCli, Rules: w.Rules}
	if len(w.Projects) > 0 {
		s.Projects = make([]resource.AccessKeyScopeProject, len(w.Projects))
		for i, p := range w.Projects {
			if strings.Contains(p, "/") {
				return nil, fmt.Errorf("scope.projects[%d] contains '/'", i)
			}
			s.Projects[i].Project = p
		}
	}
	if len(w.Spaces) > 0 {
		s.Spaces = make([]resource.AccessKeyScopeSpace, len(w.Spaces))
		for i, p := range w.Spaces {
			proj, name, ok := splitPair(p)
			if !ok {
				return nil, fmt.Errorf("scope.spaces[%d] is not \"<project>/<space>\"", i)
			}
			s.Spaces[i] = resource.AccessKeyScopeSpace{Project: proj, Space: name}
		}
	}
	if len(w.VirtualClusters) > 0 {
		s.VirtualClusters = make([]resource.AccessKeyScopeVirtualCluster, len(w.VirtualClusters))
		for i, p := range w.VirtualClusters {
			proj, name, ok := splitPair(p)
			if !ok {
				return nil, fmt.Errorf("scope.virtualClusters[%d] is not \"<project>/<virtualCluster>\"", i)
			}
			s.VirtualClusters[i] = resource.AccessKeyScopeVirtualCluster{Project: proj, VirtualCluster: name}
		}
	}
	return s, nil
}

func splitPair(s string) (string, string, bool) {
	a, b, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(b, "/") {
		return "", "", false
	}
	return a, b, true
}

// audience is "aud": one string on the wire when it has one entry, an array otherwise
// (RFC 7519 §4.1.3 allows both; both are read).
type audience []string

// MarshalJSON writes one audience as a string and several as an array.
func (a audience) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// UnmarshalJSON reads a string or an array of strings.
func (a *audience) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = audience{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*a = l
	return nil
}

// outClaims is the payload as the issuer writes it.
type outClaims struct {
	Iss string         `json:"iss"`
	Sub string         `json:"sub"`
	Aud audience       `json:"aud,omitempty"`
	Iat int64          `json:"iat"`
	Nbf int64          `json:"nbf"`
	Exp int64          `json:"exp"`
	Jti string         `json:"jti"`
	MS  *outManagement `json:"management.service"`
}

type outManagement struct {
	UID   string     `json:"uid"`
	Name  string     `json:"name"`
	Kind  string     `json:"kind"`
	Gen   int64      `json:"gen"`
	Rec   string     `json:"rec"`
	Scope *wireScope `json:"scope,omitempty"`
	Key   string     `json:"key,omitempty"`
	KUID  string     `json:"kuid,omitempty"`
}

// inClaims is the payload as the verifier reads it: pointers tell absent from zero.
type inClaims struct {
	Iss *string       `json:"iss"`
	Sub *string       `json:"sub"`
	Aud *audience     `json:"aud"`
	Iat *int64        `json:"iat"`
	Nbf *int64        `json:"nbf"`
	Exp *int64        `json:"exp"`
	Jti *string       `json:"jti"`
	MS  *inManagement `json:"management.service"`
}

type inManagement struct {
	UID   string     `json:"uid"`
	Name  string     `json:"name"`
	Kind  string     `json:"kind"`
	Gen   int64      `json:"gen"`
	Rec   string     `json:"rec"`
	Scope *wireScope `json:"scope"`
	Key   string     `json:"key"`
	KUID  string     `json:"kuid"`
}

func marshalClaims(c *Claims) ([]byte, error) {
	if !encodable(c.Management.Scope) {
		return nil, fmt.Errorf("token: the scope has a name with '/', which a valid scope never has")
	}
	out := outClaims{
		Iss: c.Issuer, Sub: c.Subject, Aud: audience(c.Audience),
		Iat: c.IssuedAt.Unix(), Nbf: c.NotBefore.Unix(), Exp: c.Expiry.Unix(), Jti: c.ID,
		MS: &outManagement{UID: c.Management.UID, Name: c.Management.Name, Kind: c.Management.Kind,
			Gen: c.Management.Generation, Rec: c.Management.Record, Scope: encodeScope(c.Management.Scope),
			Key: c.Management.AccessKey, KUID: c.Management.AccessKeyUID},
	}
	return json.Marshal(&out)
}
