package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/internal/complete"
)

// completion is `mcp-call completion bash|zsh|fish`: the completion script
// made from mcp-call's flag definitions (defineFlags) and its commands
// (package internal/complete). Flags go anywhere before --, so every
// command completes them too.
func completion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "%s: completion: want one shell: %s completion bash|zsh|fish\n", prog, prog)
		return exitProtocol
	}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	defineFlags(fs, &options{})
	flags := []*flag.FlagSet{fs}
	choices := map[string][]string{"era": {client.EraAuto, client.EraLegacy, client.EraModern}}
	cmd := complete.Command{Name: prog, Flags: flags, Choices: choices}
	for _, c := range []struct{ name, summary string }{
		{"tools", "tool names"},
		{"describe", "a tool's arguments, output and hints"},
		{"call", "call a tool and print its result"},
		{"discover", "era, protocol version, server identity, capabilities"},
		{"ping", "check that the server answers"},
		{"resources", "resource URIs"},
		{"templates", "resource templates"},
		{"read", "print a resource's contents"},
		{"prompts", "prompt names"},
		{"prompt", "get a prompt and print its messages"},
		{"complete", "completion values for a prompt argument or a template variable"},
		{"raw", "send stdin's lines as they are"},
		{"script", "one call per stdin line over one connection"},
	} {
		sub := complete.Command{Name: c.name, Summary: c.summary, Flags: flags, Choices: choices}
		if c.name == "complete" {
			sub.Words = []string{"prompt", "resource"}
		}
		cmd.Sub = append(cmd.Sub, sub)
	}
	cmd.Sub = append(cmd.Sub, complete.Command{Name: "completion", Summary: "print the shell completion script", Words: complete.Shells})
	if err := complete.Write(stdout, args[0], cmd); err != nil {
		fmt.Fprintf(stderr, "%s: completion: %v\n", prog, err)
		return exitProtocol
	}
	return exitOK
}
