package migratetest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const probeEnv = "MGMT_MIGRATETEST_PROBE"

// probeNames are subtests of TestKill9RunPatternProbe whose names are hard to select
// exactly: characters that mean something in a pattern, a space, a sibling that
// starts like another.
var probeNames = []string{"kill9", "kill99", "a.b (c)+[d]", "aXb (c)+[d]", "a.b (c)+[d] longer"}

// TestKill9RunPatternProbe is what TestKill9RunPattern runs in a child process: each
// subtest says it ran. Run directly, it does nothing.
func TestKill9RunPatternProbe(t *testing.T) {
	for _, name := range probeNames {
		t.Run(name, func(t *testing.T) {
			if os.Getenv(probeEnv) != "" {
				_, _ = os.Stdout.WriteString("PROBE " + t.Name() + "\n")
			}
		})
	}
}

// The child's -test.run pattern selects exactly the test that runs RunKill9, a
// top-level test or a subtest, whatever characters its name holds: this runs the
// test binary with the pattern of each probe and checks which tests ran.
func TestKill9RunPattern(t *testing.T) {
	if os.Getenv(probeEnv) != "" {
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	probe := regexp.MustCompile(`(?m)^PROBE (.*)$`)
	ran := func(pattern string) []string {
		cmd := exec.Command(exe, "-test.run="+pattern, "-test.count=1")
		cmd.Env = append(os.Environ(), probeEnv+"=1")
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		var names []string
		for _, m := range probe.FindAllStringSubmatch(string(out), -1) {
			names = append(names, m[1])
		}
		return names
	}
	t.Run("a top-level test", func(t *testing.T) {
		pattern := kill9RunPattern("TestKill9RunPatternProbe")
		assert.Equal(t, "^TestKill9RunPatternProbe$", pattern)
		assert.Len(t, ran(pattern), len(probeNames), "every subtest of the selected test runs")
	})
	for _, name := range probeNames {
		t.Run("the subtest "+name, func(t *testing.T) {
			// testing writes a space of a subtest's name as an underscore.
			full := "TestKill9RunPatternProbe/" + strings.ReplaceAll(name, " ", "_")
			assert.Equal(t, []string{full}, ran(kill9RunPattern(full)))
		})
	}
}
