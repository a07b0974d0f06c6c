//go:build !linux

package tool

import "os"

// progressFile: outside Linux the progress channel is not probed, and
// Progress does nothing.
func progressFile() *os.File { return nil }

// answerFile: outside Linux fd 4 is not probed, and Ask answers
// ErrNoChannel.
func answerFile() *os.File { return nil }
