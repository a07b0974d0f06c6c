//go:build !unix

package router

import "io"

// pollableInput: elsewhere the input is read as it is.
func pollableInput(in io.Reader) (io.Reader, func()) { return in, func() {} }
