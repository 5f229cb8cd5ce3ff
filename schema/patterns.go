package schema

import "strings"

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
		return func(s string) bool { return s == "" || qualifiedPart(s) }
	case dnsSubdomainPattern:
		return lowerSubdomain
	case dnsLabelPattern:
		return lowerLabel
	case namespacePattern:
		return func(s string) bool { return s == "" || lowerLabel(s) }
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

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// qualifiedPart matches [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, of any length.
func qualifiedPart(s string) bool {
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

// lowerLabel matches [a-z0-9]([-a-z0-9]*[a-z0-9])?.
func lowerLabel(s string) bool {
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

// lowerSubdomain matches lowerLabel(\.lowerLabel)*.
func lowerSubdomain(s string) bool {
	for {
		i := 0
		for i < len(s) && s[i] != '.' {
			i++
		}
		if !lowerLabel(s[:i]) {
			return false
		}
		if i == len(s) {
			return true
		}
		s = s[i+1:]
	}
}

// matchQualifiedName matches qualifiedNamePattern: an optional lowerSubdomain and
// '/', then a qualifiedPart of at most 63 characters.
func matchQualifiedName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if !lowerSubdomain(s[:i]) {
				return false
			}
			s = s[i+1:]
			break
		}
	}
	return len(s) <= 63 && qualifiedPart(s)
}
