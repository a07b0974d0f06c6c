//go:build race

package main

// Under the race detector (test.sh's Bazel pass), every binary the tests
// start is built with it, and the race runtime needs cgo: mcp-stock is then
// dynamically linked by design.
func init() { raceBuild = true }
