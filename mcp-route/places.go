package main

import (
	"fmt"
	"strings"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// place is a path tools and upstreams can reach, and the flag that gave it
// (--root, --allow-read, --allow-write, --allow-exec, --tools), or the
// built-in list it comes from (the system directories, /etc's files).
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
// starts on the same spawner) can read: every rule of the confinement's
// plan, the system directories and the files of /etc it grants included,
// each labelled by the flag that asked for it. confine is the one list of
// what is granted, so this check and the policy cannot drift apart. The
// operator's own paths come first, as given (the plan has them resolved),
// so that a refusal names them as typed. Unconfined, a tool reads more;
// these it reads either way.
// extra (the interpreter grants, the launcher profiles' places) come
// before the plan's rules, which hold them too but under a coarser label.
func readablePlaces(p confine.Policy, toolDirs []string, extra ...place) []place {
	places := []place{{"--root", p.Root}}
	for _, flag := range []struct {
		name  string
		paths []string
	}{{"--allow-read", p.AllowRead}, {"--allow-write", p.AllowWrite}, {"--allow-exec", p.AllowExec}, {"--tools", toolDirs}} {
		for _, path := range flag.paths {
			places = append(places, place{flag.name, path})
		}
	}
	places = append(places, extra...)
	for _, rl := range p.Plan().Rules {
		places = append(places, place{sourceFlag(rl.Source), rl.Path})
	}
	return places
}

// sourceFlag names the flag (or the built-in list) behind a rule's
// Source, the first when several share the rule ("root+tool").
func sourceFlag(source string) string {
	first, _, _ := strings.Cut(source, "+")
	switch first {
	case "system":
		return "the system directories (granted to every tool)"
	case "etc":
		return "the files of /etc granted to every tool"
	case "proc":
		return "the /proc files granted to every tool"
	case "device":
		return "the devices granted to every tool"
	case "root":
		return "--root"
	case "tool":
		return "--tools"
	case "tmp":
		return "the tools' TMPDIR"
	case "allow-read", "allow-write", "allow-exec":
		return "--" + first
	}
	return "the " + first + " grant"
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
	switch {
	case p.flag == "--root":
		remedy = "move it out of the root"
	case p.flag == "--tools":
		remedy = "move it out of the tools directory"
	case strings.HasPrefix(p.flag, "the interpreter grant"):
		remedy = "move it out of the interpreter's installation"
	case !strings.HasPrefix(p.flag, "--"):
		remedy = "keep it where no tool reads, such as a systemd credential (LoadCredential=, read from $CREDENTIALS_DIRECTORY) or a directory under /run (/run/secrets/mcp-route; see examples/deploy)"
	}
	return fmt.Errorf("%s: %s is inside %s %s%s, where tools and upstreams can read it: a client could read the secret with a reading tool; %s", flag, file, p.flag, p.path, as, remedy)
}
