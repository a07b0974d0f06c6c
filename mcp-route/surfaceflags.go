package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// surfaceDirs makes the --resources or --prompts directories absolute and
// checks that each is a directory: a typo would otherwise serve nothing and
// go unnoticed.
func surfaceDirs(flagName string, vals []string, stderr io.Writer) ([]string, bool) {
	var out []string
	for _, d := range vals {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			why := "no such directory"
			if err == nil {
				why = "not a directory"
			} else if !errors.Is(err, os.ErrNotExist) {
				why = err.Error()
			}
			fmt.Fprintf(stderr, "%s: %s %s: %s\n", prog, flagName, d, why)
			return nil, false
		}
		out = append(out, abs)
	}
	return out, true
}
