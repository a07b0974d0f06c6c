//go:build unix && !linux

package proc

// pipeQueued cannot tell elsewhere.
func pipeQueued(pipeFile) (int, bool) { return 0, false }
