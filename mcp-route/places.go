package main

import (
	"fmt"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// place is a path tools and upstreams can reach, and the flag that gave it
// (--root, --allow-read, --allow-write, --tools).
type place struct{ flag, path string }

// placeOf returns the first of places that resolving path goes through
// (registry.PathThrough: a link outside leading in counts), and where:
// ok false when none does.
func placeOf(path string, places []place) (p place, at string, ok bool, err error) {
	for _, p := range places {
		at, err := registry.PathThrough(path, p.path)
		if err != nil {
			return p, "", false, err
		}
		if at != "" {
			return p, at, true, nil
		}
	}
	return place{}, "", false, nil
}

// readablePlaces are the places a confined tool (and an upstream, which
// runs with --root as its working directory) can read: --root, with or
// without --readonly, the --allow-read and --allow-write paths and the
// --tools directories. Unconfined, a tool reads more; these it reads
// either way.
func readablePlaces(root string, readPaths, writePaths, toolDirs []string) []place {
	places := []place{{"--root", root}}
	for _, flag := range []struct {
		name  string
		paths []string
	}{{"--allow-read", readPaths}, {"--allow-write", writePaths}, {"--tools", toolDirs}} {
		for _, p := range flag.paths {
			places = append(places, place{flag.name, p})
		}
	}
	return places
}

// checkSecretPlace refuses a file holding a secret (flag names it: a
// bearer token, the session key, the TLS private key;
// "--upstream-token-file NAME" for an upstream's) that tools can read: a
// client could read it with any reading tool (cat, mcp-stock's read_file)
// and then present the token, forge session ids, or pose as the server. It returns one line that says what to
// do, nil when the file is out of every place.
func checkSecretPlace(flag, file string, places []place) error {
	p, at, ok, err := placeOf(file, places)
	if err != nil {
		return fmt.Errorf("%s: %s: %s %s: %v", flag, file, p.flag, p.path, err)
	}
	if !ok {
		return nil
	}
	as := ""
	if at != file {
		as = " (as " + at + ")"
	}
	remedy := "move it out, or narrow " + p.flag
	switch p.flag {
	case "--root":
		remedy = "move it out of the root"
	case "--tools":
		remedy = "move it out of the tools directory"
	default:
		if strings.HasPrefix(p.flag, "the interpreter grant") {
			remedy = "move it out of the interpreter's installation"
		}
	}
	return fmt.Errorf("%s: %s is inside %s %s%s, where tools and upstreams can read it: a client could read the secret with a reading tool; %s", flag, file, p.flag, p.path, as, remedy)
}
