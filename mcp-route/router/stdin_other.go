//go:build !unix

package router

import "io"

// pollableInput: elsewhere the input is read as it is.
func pollableInput(in io.Reader) (io.Reader, func()) { return in, func() {} }

// pollableOutput: elsewhere the output is written as it is.
func pollableOutput(out io.Writer) (io.Writer, func()) { return out, func() {} }
