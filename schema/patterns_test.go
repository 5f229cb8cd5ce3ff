package schema

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var knownPatterns = []string{qualifiedNamePattern, labelValuePattern, dnsSubdomainPattern, dnsLabelPattern,
	namespacePattern, apiVersionPattern, fieldsKeyPattern, digitsPattern}

func TestKnownPatterns_are_the_schemas(t *testing.T) {
	b, err := embedded.ReadFile("schemas/common.json")
	require.NoError(t, err)
	common := string(b)
	for _, p := range knownPatterns {
		quoted := strings.ReplaceAll(p, `\`, `\\`)
		assert.Contains(t, common, `"pattern": "`+quoted+`"`, "the pattern is no longer in common.json")
	}
}

func checkKnownPatterns(t *testing.T, s string) {
	for _, p := range knownPatterns {
		re := regexp.MustCompile(p)
		require.Equal(t, re.MatchString(s), knownPattern(p)(s), "%q against %s", s, p)
	}
}

func TestKnownPatterns_match_as_their_regexps(t *testing.T) {
	for _, s := range []string{"", "a", "A", "-", "a-", "-a", "a.b", "a..b", ".a", "a.", "a/b", "/b", "a/", "a//b", "a/b/c",
		"A/b", "a.b/C_d", "a-b.c-d/e.f_G", strings.Repeat("a", 63), strings.Repeat("a", 64), "p/" + strings.Repeat("a", 63),
		"p/" + strings.Repeat("a", 64), "é", "a\n", "a_b", "_a", "a_", "0", "a.-b/c",
		".", "..", "f:", "f:a", "k:{}", "x:a", "f", ".a", "/v1", "v1/", "a/b/", "\xff/v1", "v1\n", "12345678901234567890",
		"123456789012345678901", "1a", "٣"} {
		checkKnownPatterns(t, s)
	}
}

func FuzzKnownPatterns(f *testing.F) {
	for _, s := range []string{"a.b/C_d", "a..b", "x/" + strings.Repeat("z", 63), "é/a"} {
		f.Add(s)
	}
	f.Fuzz(checkKnownPatterns)
}
