package schema

import (
	"strings"

	"github.com/management-service/mgmt/resource"
)

// Hand-written matchers for the patterns of the built-in schemas that every object
// meets once per label or annotation: the regexp package takes about a microsecond
// per match there, and an object may carry tens of thousands of labels. Each
// matcher answers exactly as its regular expression does (FuzzKnownPatterns); a
// pattern not listed here keeps its regexp.

// Patterns of common.json, as written there (JSON-unescaped).
const (
	qualifiedNamePattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	labelValuePattern    = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	dnsSubdomainPattern  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	dnsLabelPattern      = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	namespacePattern     = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	apiVersionPattern    = `^([^/]*/)?[^/]+$`
	fieldsKeyPattern     = `^(\.$|[fkvi]:)`
	digitsPattern        = `^[0-9]{1,20}$`
)

// knownPattern returns the hand-written matcher of pattern, or nil.
func knownPattern(pattern string) func(string) bool {
	switch pattern {
	case qualifiedNamePattern:
		return matchQualifiedName
	case labelValuePattern:
		return func(s string) bool { return s == "" || resource.IsQualifiedNamePart(s) }
	case dnsSubdomainPattern:
		return resource.IsDNS1123Subdomain
	case dnsLabelPattern:
		return resource.IsDNS1123Label
	case namespacePattern:
		return func(s string) bool { return s == "" || resource.IsDNS1123Label(s) }
	case apiVersionPattern:
		return func(s string) bool {
			i := strings.IndexByte(s, '/')
			if i >= 0 {
				s = s[i+1:]
			}
			return s != "" && strings.IndexByte(s, '/') < 0
		}
	case fieldsKeyPattern:
		return func(s string) bool {
			return s == "." || len(s) >= 2 && s[1] == ':' && (s[0] == 'f' || s[0] == 'k' || s[0] == 'v' || s[0] == 'i')
		}
	case digitsPattern:
		return func(s string) bool {
			if s == "" || len(s) > 20 {
				return false
			}
			for i := 0; i < len(s); i++ {
				if s[i] < '0' || s[i] > '9' {
					return false
				}
			}
			return true
		}
	}
	return nil
}

// matchQualifiedName matches qualifiedNamePattern: an optional DNS-1123 subdomain and
// '/', then a name part of at most 63 characters.
func matchQualifiedName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if !resource.IsDNS1123Subdomain(s[:i]) {
				return false
			}
			s = s[i+1:]
			break
		}
	}
	return len(s) <= 63 && resource.IsQualifiedNamePart(s)
}
