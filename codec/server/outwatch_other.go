//go:build !unix

package server

import "io"

// watchOutput cannot watch w here: only a failed write tells that the
// client is gone.
func watchOutput(io.Writer) (<-chan error, func()) { return nil, func() {} }
