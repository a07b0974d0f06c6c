// Package confinetest holds the one skip rule of the confinement tests:
// without Landlock they skip with the reason, unless the environment sets
// MCPIPE_REQUIRE_LANDLOCK=1 (as .ci/run does), which makes the missing
// kernel feature a failure instead.
package confinetest

import (
	"os"
	"strconv"
	"testing"
)

// RequireEnv names the variable that turns a skip into a failure.
const RequireEnv = "MCPIPE_REQUIRE_LANDLOCK"

// Feature skips t (or fails it, under MCPIPE_REQUIRE_LANDLOCK=1) unless
// ok; why says what this kernel lacks.
func Feature(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s, and %s=1 requires it", why, RequireEnv)
	}
	t.Skipf("skipped: %s (set %s=1 to make this a failure)", why, RequireEnv)
}

// Need skips t (or fails it, under MCPIPE_REQUIRE_LANDLOCK=1) when the
// kernel has no Landlock or an ABI older than min, and returns the ABI.
func Need(t testing.TB, min int) int {
	t.Helper()
	// Asked here rather than through confine.ABI, so that confine's own
	// tests can use this package.
	abi := kernelABI()
	if abi >= min && abi > 0 {
		return abi
	}
	why := "this kernel has no Landlock (or it is disabled)"
	if abi > 0 {
		why = "this kernel has Landlock ABI " + strconv.Itoa(abi) + ", the test needs " + strconv.Itoa(min)
	}
	Feature(t, false, why)
	return 0
}
