package resource_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

func TestParseLabelSelector(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		canonical string
	}{
		{"an empty selector selects everything", "", ""},
		{"white space alone is the empty selector", "  \t ", ""},
		{"equality is kept", "app=web", "app=web"},
		{"double equals is read as equals", "app==web", "app=web"},
		{"inequality is kept", "app!=web", "app!=web"},
		{"set values are sorted and deduplicated", "env in (prod, dev,prod)", "env in (dev,prod)"},
		{"notin is kept", "env notin (a)", "env notin (a)"},
		{"a bare key is an existence test", "app", "app"},
		{"a bang is an absence test", "!app", "!app"},
		{"requirements are sorted by key", "z=1,a=2,!m", "a=2,!m,z=1"},
		{"white space around tokens is ignored", "  a = b ,  c in ( x , y )  ", "a=b,c in (x,y)"},
		{"an empty value is allowed", "a=", "a="},
		{"empty parentheses hold the empty value", "a in ()", "a in ()"},
		{"an empty element of a set is kept", "a in (,b)", "a in (,b)"},
		{"a prefixed key is allowed", "management.service/project=a", "management.service/project=a"},
		{"in and notin are keys where a key is expected", "in in (notin),notin", "in in (notin),notin"},
		{"identical requirements are merged", "a=b,a=b", "a=b"},
		{"greater than an integer", "a>1", "a>1"},
		{"less than an integer, spaced", " a < 5 ", "a<5"},
		{"comparisons sort with the others", "b<2,a>1,a=3", "a=3,a>1,b<2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := resource.ParseLabelSelector(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.canonical, sel.String())
			assert.Equal(t, tc.canonical == "", sel.Empty())
			again, err := resource.ParseLabelSelector(sel.String())
			require.NoError(t, err)
			assert.True(t, sel.Equal(again))
		})
	}
}

func TestParseLabelSelectorErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		message string
	}{
		{"a trailing comma is a syntax error", "a=b,", "expected a label key"},
		{"a missing closing parenthesis is a syntax error", "a in (b", "expected ',' or ')'"},
		{"in without a set is a syntax error", "a in", "expected '('"},
		{"a value after an absence test is a syntax error", "!a=b", "expected ',' or end of string"},
		{"two values are a syntax error", "a=b c", "expected ',' or end of string"},
		{"an unknown operator is a syntax error", "a ~ 1", `found "~"`},
		{"> needs an integer", "a>b", "the value must be an integer"},
		{"< needs a value", "a<", "expected an integer value"},
		{"> takes one value", "a>(1)", "expected an integer value"},
		{"a negative integer is not a label value", "a<-5", "a valid label must"},
		{"> of a number beyond int64", "a>99999999999999999999", "the value must be an integer"},
		{"a bang without a key is a syntax error", "!", "expected a label key after '!'"},
		{"a key that is not a qualified name is rejected", "a/b/c=d", "qualified name"},
		{"a label value longer than 63 is invalid", "a=" + strings.Repeat("v", 64), "no more than 63"},
		{"a value with a slash is invalid", "a in (x/y)", "a valid label"},
		{"an operator where a value belongs is a syntax error", "a=!", "expected a label value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resource.ParseLabelSelector(tc.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, resource.ErrBadRequest))
			assert.Equal(t, 400, resource.CodeOf(err))
			assert.Contains(t, err.Error(), tc.message)
		})
	}
}

func TestLabelSelectorMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "env": "prod", "empty": "", "n": "2", "neg": "-1"}
	tests := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"app=web", true},
		{"app=db", false},
		{"missing=x", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=x", true},
		{"env in (dev,prod)", true},
		{"env in (dev)", false},
		{"missing in (x)", false},
		{"env notin (dev)", true},
		{"env notin (prod)", false},
		{"missing notin (x)", true},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{"empty=", true},
		{"empty in ()", true},
		{"app=web,env=prod", true},
		{"app=web,env=dev", false},
		{"n>1", true},
		{"n>2", false},
		{"n<3", true},
		{"n<2", false},
		{"neg<0", true},
		{"app>1", false},
		{"missing<1", false},
		{"missing>1", false},
	}
	for _, tc := range tests {
		name := "selector " + tc.sel + " matches"
		if !tc.want {
			name = "selector " + tc.sel + " does not match"
		}
		t.Run(name, func(t *testing.T) {
			sel, err := resource.ParseLabelSelector(tc.sel)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sel.Matches(labels))
		})
	}
}

func TestLabelSelectorHelpers(t *testing.T) {
	t.Run("RequiredEquals finds a pinned label", func(t *testing.T) {
		sel, err := resource.ParseLabelSelector("!x,management.service/project=a,b in (c,d)")
		require.NoError(t, err)
		k, v, ok := sel.RequiredEquals()
		require.True(t, ok)
		assert.Equal(t, "management.service/project", k)
		assert.Equal(t, "a", v)
	})
	t.Run("RequiredEquals accepts a single-value set", func(t *testing.T) {
		sel, err := resource.ParseLabelSelector("a in (b)")
		require.NoError(t, err)
		k, v, ok := sel.RequiredEquals()
		assert.True(t, ok)
		assert.Equal(t, []string{"a", "b"}, []string{k, v})
	})
	t.Run("RequiredEquals is false without a pinned label", func(t *testing.T) {
		sel, err := resource.ParseLabelSelector("a!=b,c in (d,e)")
		require.NoError(t, err)
		_, _, ok := sel.RequiredEquals()
		assert.False(t, ok)
	})
	t.Run("a selector from a set matches that set", func(t *testing.T) {
		sel, err := resource.LabelSelectorFromSet(map[string]string{"b": "2", "a": "1"})
		require.NoError(t, err)
		assert.Equal(t, "a=1,b=2", sel.String())
		assert.True(t, sel.Matches(map[string]string{"a": "1", "b": "2", "c": "3"}))
	})
	t.Run("a selector from a set with a bad value is rejected", func(t *testing.T) {
		_, err := resource.LabelSelectorFromSet(map[string]string{"a": "-"})
		assert.True(t, errors.Is(err, resource.ErrBadRequest))
	})
	t.Run("requirements are a copy", func(t *testing.T) {
		sel, err := resource.ParseLabelSelector("a in (x,y)")
		require.NoError(t, err)
		reqs := sel.Requirements()
		reqs[0].Values[0] = "changed"
		assert.Equal(t, "a in (x,y)", sel.String())
	})
	t.Run("the zero selector is empty and matches everything", func(t *testing.T) {
		var sel resource.LabelSelector
		assert.True(t, sel.Empty())
		assert.True(t, sel.Matches(nil))
	})
}

func TestParseFieldSelector(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		canonical string
		matches   [][2]string // name, namespace pairs that match
		misses    [][2]string
	}{
		{"an empty selector selects everything", "", "", [][2]string{{"a", "b"}}, nil},
		{"name equality selects by name", "metadata.name=a", "metadata.name=a", [][2]string{{"a", "x"}}, [][2]string{{"b", "x"}}},
		{"double equals is read as equals", "metadata.name==a", "metadata.name=a", [][2]string{{"a", ""}}, [][2]string{{"b", ""}}},
		{"namespace inequality excludes a namespace", "metadata.namespace!=p-a", "metadata.namespace!=p-a",
			[][2]string{{"a", "p-b"}, {"a", ""}}, [][2]string{{"a", "p-a"}}},
		{"terms are combined", "metadata.namespace=p-a, metadata.name=x", "metadata.name=x,metadata.namespace=p-a",
			[][2]string{{"x", "p-a"}}, [][2]string{{"x", "p-b"}, {"y", "p-a"}}},
		{"empty terms are skipped", ",metadata.name=a,", "metadata.name=a", [][2]string{{"a", ""}}, nil},
		{"escaped characters are part of the value", `metadata.name=a\,b\=c\\`, `metadata.name=a\,b\=c\\`,
			[][2]string{{`a,b=c\`, ""}}, [][2]string{{"a", ""}}},
		{"an empty value matches the empty namespace", "metadata.namespace=", "metadata.namespace=",
			[][2]string{{"a", ""}}, [][2]string{{"a", "x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := resource.ParseFieldSelector(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.canonical, sel.String())
			assert.Equal(t, tc.canonical == "", sel.Empty())
			for _, m := range tc.matches {
				assert.True(t, sel.Matches(m[0], m[1]), "%v", m)
			}
			for _, m := range tc.misses {
				assert.False(t, sel.Matches(m[0], m[1]), "%v", m)
			}
			again, err := resource.ParseFieldSelector(sel.String())
			require.NoError(t, err)
			assert.Equal(t, sel.Requirements(), again.Requirements())
		})
	}
	t.Run("RequiredValue finds an exact name", func(t *testing.T) {
		sel, err := resource.ParseFieldSelector("metadata.namespace!=x,metadata.name=a")
		require.NoError(t, err)
		v, ok := sel.RequiredValue(resource.FieldMetadataName)
		assert.True(t, ok)
		assert.Equal(t, "a", v)
		_, ok = sel.RequiredValue(resource.FieldMetadataNamespace)
		assert.False(t, ok)
	})
}

func TestParseFieldSelectorErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		message string
	}{
		{"an unknown field is not supported", "spec.ttl=1", "field label not supported: spec.ttl"},
		{"a label-style term is not supported", "app=web", "field label not supported: app"},
		{"a term without an operator is invalid", "metadata.name", "no operator"},
		{"an unescaped equals sign in a value is invalid", "metadata.name=a=b", "unescaped ="},
		{"a bad escape is invalid", `metadata.name=a\x`, "invalid escape sequence"},
		{"a trailing backslash is invalid", `metadata.name=a\`, "trailing backslash"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resource.ParseFieldSelector(tc.in)
			require.Error(t, err)
			assert.Equal(t, resource.ReasonBadRequest, resource.ReasonOf(err))
			assert.Equal(t, 400, resource.CodeOf(err))
			assert.Contains(t, err.Error(), tc.message)
		})
	}
}
