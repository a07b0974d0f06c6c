package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mcpipe/mcpipe/internal/complete"
	"github.com/mcpipe/mcpipe/mcp-route/confinement"
	"github.com/mcpipe/mcpipe/mcp-route/scaffold"
)

// completionMain is `mcp-route completion bash|zsh|fish`: the completion
// script of mcp-route and its subcommands, generated from server, the
// server's flag definitions (package internal/complete), on stdout.
func completionMain(server *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "%s: completion: want one shell: %s completion bash|zsh|fish\n", prog, prog)
		return 2
	}
	pf := flag.NewFlagSet("pin", flag.ContinueOnError)
	pinFlags(pf)
	nf := flag.NewFlagSet("new", flag.ContinueOnError)
	newFlags(nf)
	choices := map[string][]string{
		"confine":    {string(confinement.Auto), string(confinement.Require), string(confinement.Off)},
		"log-format": {"text", "json"},
		"lang":       scaffold.Languages,
	}
	cmd := complete.Command{Name: prog, Flags: []*flag.FlagSet{server}, Choices: choices, Sub: []complete.Command{
		{Name: "new", Summary: "write a tool skeleton", Flags: []*flag.FlagSet{nf}, Choices: choices},
		{Name: "pin", Summary: "review and pin the upstreams' tool definitions", Flags: []*flag.FlagSet{server, pf}, Choices: choices},
		{Name: "completion", Summary: "print the shell completion script", Words: complete.Shells},
	}}
	if err := complete.Write(stdout, args[0], cmd); err != nil {
		fmt.Fprintf(stderr, "%s: completion: %v\n", prog, err)
		return 2
	}
	return 0
}
