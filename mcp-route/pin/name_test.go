package pin

import (
	"strings"
	"testing"
)

func TestValidateUpstream(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "Git-Hub-2": true, strings.Repeat("a", 32): true,
		"": false, strings.Repeat("a", 33): false, "a_b": false, "a b": false,
		"a.b": false, "é": false, "a/b": false, "a\n": false, "a=b": false,
	} {
		if err := ValidateUpstream(name); (err == nil) != ok {
			t.Errorf("ValidateUpstream(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestIsDigest(t *testing.T) {
	good := strings.Repeat("0123456789abcdef", 4)
	for s, ok := range map[string]bool{
		good: true, good[:63]: false, good + "0": false,
		strings.ToUpper(good): false, good[:63] + "g": false, "": false,
	} {
		if isDigest(s) != ok {
			t.Errorf("isDigest(%q) = %v, want %v", s, !ok, ok)
		}
	}
}
