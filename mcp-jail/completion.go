package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mcpipe/mcpipe/internal/complete"
)

// completion is `mcp-jail completion bash|zsh|fish`: the completion script
// made from fl, mcp-jail's flag definitions (package internal/complete).
func completion(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "%s: completion: want one shell: %s completion bash|zsh|fish\n", prog, prog)
		return 2
	}
	cmd := complete.Command{Name: prog, Flags: []*flag.FlagSet{fl}, Files: true, Sub: []complete.Command{
		{Name: "completion", Summary: "print the shell completion script", Words: complete.Shells},
	}}
	if err := complete.Write(stdout, args[0], cmd); err != nil {
		fmt.Fprintf(stderr, "%s: completion: %v\n", prog, err)
		return 2
	}
	return 0
}
