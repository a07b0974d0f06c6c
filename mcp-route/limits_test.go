package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/proc"
)

// privScript tries, as a tool, what capabilities and namespaces give
// (one "NAME ok" or "NAME refused" line each), and what every tool may
// do. PY is a python3 in the system directories, "" for none.
const privScript = `#!/bin/sh
try() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n ok"; else echo "$n refused"; fi; }
try unshare-user unshare -U true
try unshare-mount unshare -m true
CHROOT=chroot
for c in /usr/sbin/chroot /sbin/chroot; do [ -x $c ] && CHROOT=$c; done
try chroot $CHROOT / true
mkdir -p mnt
try mount mount -t tmpfs none mnt
umount mnt 2>/dev/null
try file-work sh -c 'echo x > work && [ "$(cat work)" = x ] && rm work'
if [ -n "$MCP_ARG_PY" ]; then
"$MCP_ARG_PY" - "$MCP_ARG_BPF" <<'PY'
import ctypes, os, socket, sys
for name, args in [("raw-socket", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("packet-socket", (socket.AF_PACKET, socket.SOCK_RAW, 0)),
                   ("udp-socket", (socket.AF_INET, socket.SOCK_DGRAM, 0)),
                   ("unix-socket", (socket.AF_UNIX, socket.SOCK_STREAM, 0))]:
    try:
        socket.socket(*args).close()
        print(name, "ok")
    except OSError:
        print(name, "refused")
libc = ctypes.CDLL(None, use_errno=True)
# bpf(BPF_MAP_CREATE, NULL, 0): EPERM is the refusal; without the
# filter, root gets EFAULT or EINVAL for the missing attributes.
r = libc.syscall(int(sys.argv[1]), 0, 0, 0)
print("bpf", "refused" if r < 0 and ctypes.get_errno() == 1 else "ok")
PY
fi
`

// TestConfineNoPrivilege: a confined tool of a root mcp-route cannot make
// namespaces, chroot, mount, open raw or packet sockets nor call bpf, and
// under --no-network cannot open a UDP socket; its file work and a Unix
// socket work. With --confine off the same tool (as root) gets through,
// so the refusals are the confinement's. The TCP counterpart (a connect
// allowed without --no-network) is TestConfineNoNetwork's.
func TestConfineNoPrivilege(t *testing.T) {
	confinetest.Need(t, 1)
	if !noNetworkFilter {
		t.Skipf("no seccomp filter for %s", runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attacks are what a root tool could do")
	}
	f := newConfineFixture(t)
	if err := os.WriteFile(filepath.Join(f.tools, "priv"), []byte(privScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.tools, "priv.json"), []byte(`{"description":"tries privileged calls"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"bpf": map[string]int{"amd64": 321, "arm64": 280}[runtime.GOARCH]}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err == nil {
		args["py"] = py
	} else {
		t.Logf("no %s: the socket and bpf attacks are not tried", py)
	}
	lines := func(s string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(s, "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				m[k] = v
			}
		}
		return m
	}
	check := func(name string, got map[string]string, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if _, tried := got[k]; !tried && args["py"] == nil && strings.Contains("raw-socket packet-socket udp-socket unix-socket bpf", k) {
				continue
			}
			if got[k] != v {
				t.Errorf("%s: %s %q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
	}
	refused := map[string]string{
		"unshare-user": "refused", "unshare-mount": "refused", "chroot": "refused", "mount": "refused",
		"raw-socket": "refused", "packet-socket": "refused", "bpf": "refused",
		"file-work": "ok", "unix-socket": "ok",
	}
	confined := f.start(t, "--confine", "require")
	got := lines(confined.call("priv", args))
	check("confined", got, refused)
	if got["udp-socket"] != "ok" && args["py"] != nil {
		t.Errorf("confined without --no-network: a UDP socket was refused: %v", got)
	}
	noNet := f.start(t, "--confine", "require", "--no-network")
	refused["udp-socket"] = "refused"
	check("confined, --no-network", lines(noNet.call("priv", args)), refused)

	off := f.start(t, "--confine", "off")
	check("--confine off", lines(off.call("priv", args)), map[string]string{
		"unshare-user": "ok", "unshare-mount": "ok", "chroot": "ok",
		"raw-socket": "ok", "packet-socket": "ok", "udp-socket": "ok", "bpf": "ok", "file-work": "ok",
	})
}

// The tools of TestLimits. bomb forks a binary tree of shells 8 deep
// (511 processes without a limit: bounded, so a limit that fails cannot
// take the machine down; each leaf sleeps a second). hog touches 200 MiB.
// fair runs 50 processes and touches 100 MiB. quick answers.
const (
	bombScript = `#!/bin/sh
b() { [ "$1" -gt 0 ] || exec sleep 1.0137; b $(($1-1)) & b $(($1-1)) & wait; }
b 8 2>/dev/null; echo done
`
	hogScript = `#!/bin/sh
dd if=/dev/zero of=/dev/null bs=200M count=1 2>/dev/null && echo survived
`
	fairScript = `#!/bin/sh
i=0; while [ $i -lt 50 ]; do sleep 1.0137 & i=$((i+1)); done
dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null || echo "dd failed"
wait; echo fair
`
	quickScript = `#!/bin/sh
echo quick
`
)

// TestLimits: through the real binary, confined (the fork on the confined
// thread) and not, a fork bomb and a memory hog end as isError results
// naming the limit they hit, while a call made at the same time is
// answered and mcp-route serves on; nothing of them is left afterwards. A
// tool whose run object raises the limits runs 50 processes and touches
// 100 MiB.
func TestLimits(t *testing.T) {
	if support := proc.LimitSupport(); !strings.Contains(support, "pids: cgroup") || !strings.Contains(support, "memory: cgroup") {
		t.Skipf("no cgroup pids and memory controllers to use here: %s", support)
	}
	for _, mode := range []string{"require", "off"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "require" {
				confinetest.Need(t, 1)
			}
			f := newConfineFixture(t)
			for name, script := range map[string]string{"bomb": bombScript, "hog": hogScript, "fair": fairScript, "quick": quickScript} {
				if err := os.WriteFile(filepath.Join(f.tools, name), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				def := `{"description":"` + name + `"}`
				if name == "fair" {
					def = `{"description":"fair","run":{"limitPids":100,"limitMem":"256MiB"}}`
				}
				if err := os.WriteFile(filepath.Join(f.tools, name+".json"), []byte(def), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := f.start(t, "--confine", mode, "--limit-pids", "32", "--limit-mem", "64MiB", "--max-procs", "8")
			t.Cleanup(func() { killLeftovers(f.tools) })
			// All at once: the bomb and the hog run while quick is asked.
			ids := map[int]string{}
			for _, name := range []string{"bomb", "hog", "quick"} {
				p.id++
				ids[p.id] = name
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, p.id, name))
			}
			got := map[string]codec.CallToolResult{}
			for len(got) < len(ids) {
				l, err := p.r.ReadFrame()
				if err != nil {
					t.Fatalf("answers so far %v: %v\nstderr:\n%s", got, err, p.stderr)
				}
				var m struct {
					ID     int
					Result codec.CallToolResult
				}
				if json.Unmarshal(l, &m) == nil && ids[m.ID] != "" {
					got[ids[m.ID]] = m.Result
				}
			}
			text := func(r codec.CallToolResult) string {
				var b strings.Builder
				for _, c := range r.Content {
					b.WriteString(c.Text)
				}
				return b.String()
			}
			for name, want := range map[string]string{"bomb": "process limit of 32 reached (--limit-pids)", "hog": "memory limit of 64MiB reached (--limit-mem)"} {
				if r := got[name]; !r.IsError || !strings.HasPrefix(text(r), want) {
					t.Errorf("%s: isError %v, %q; want isError %q", name, r.IsError, text(r), want)
				}
			}
			if r := got["quick"]; r.IsError || strings.TrimSpace(text(r)) != "quick" {
				t.Errorf("quick, beside them: isError %v, %q", r.IsError, text(r))
			}
			if out := p.call("fair", nil); out != "fair" {
				t.Errorf("fair (50 processes, 100 MiB under run.limitPids 100, run.limitMem 256MiB): %q", out)
			}
			if out := p.call("quick", nil); out != "quick" {
				t.Errorf("quick, after: %q", out)
			}
			if left := leftovers(f.tools); len(left) > 0 {
				t.Errorf("processes left after the calls: %v", left)
			}
		})
	}
}

// leftovers are the live processes of the tools in dir (their command
// line names a script there, or the leaves' sleep 1.0137).
func leftovers(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(cl) == 0 { // gone, or a zombie
			continue
		}
		s := strings.ReplaceAll(string(cl), "\x00", " ")
		if strings.Contains(s, dir+"/") || strings.Contains(s, "sleep 1.0137") {
			left = append(left, fmt.Sprintf("%d %s", pid, s))
		}
	}
	return left
}

// killLeftovers kills what leftovers finds, bounded, so that a failed
// limit leaves nothing running after the test.
func killLeftovers(dir string) {
	for i := 0; i < 50; i++ {
		left := leftovers(dir)
		if len(left) == 0 {
			return
		}
		for _, l := range left {
			pid, _ := strconv.Atoi(strings.Fields(l)[0])
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
