//go:build unix && !linux

package proc

import "os"

// pipeQueued cannot tell elsewhere.
func pipeQueued(*os.File) (int, bool) { return 0, false }
