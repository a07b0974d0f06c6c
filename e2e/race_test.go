//go:build race

package e2e

// Under the race detector (test.sh's Bazel pass) the binaries the tests
// start are race-built too, and their memory grows by the detector's
// shadow state: memory bounds are scaled by this much.
func init() { raceMemFactor = 4 }
