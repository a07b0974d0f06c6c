// Package completetest runs a completion script of package complete in a
// real bash, the way bash's programmable completion calls it, so that the
// tests of every program check what a user's shell would offer.
package completetest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Bash sources script in `bash --norc --noprofile`, changes to dir, sets
// COMP_WORDS and COMP_CWORD from line (a trailing space starts an empty
// word, as pressing tab after a space does), calls the function the script
// registered for line's first word with `complete -F`, and returns
// COMPREPLY. The test fails if bash does.
func Bash(t testing.TB, script, dir, line string) []string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed: its completion is not checked")
	}
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	for i, w := range words {
		words[i] = "'" + w + "'"
	}
	prog := script + "\ncd '" + dir + "' || exit 1\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
		"\n$(complete -p " + words[0] + " | awk '{print $3}')\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// Has reports whether got holds every one of want.
func Has(got []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}
