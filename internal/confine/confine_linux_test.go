package confine_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the helper program of the tests: with
// helperEnv set it does one thing and exits, instead of running tests.
const helperEnv = "CONFINE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	switch mode {
	case "inforce":
		fmt.Println(confine.InForce())
	case "connect":
		c, err := net.DialTimeout("tcp", args[0], 10*time.Second)
		if err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
	case "privileged": // what a root process could do to the system
		return privileged(args[0])
	case "x32": // an x32 system call (amd64): the filter kills, else it returns
		unix.RawSyscall(0x40000000|unix.SYS_GETPID, 0, 0, 0)
		fmt.Println("survived")
	case "connect-mptcp", "connect-mptcp-high", "listen-mptcp", "fastopen-sendto", "fastopen-sendmsg", "fastopen-connect", "io-uring", "udp":
		return sideDoor(mode, args[0])
	case "kill": // kill -KILL args[0]
		pid, _ := strconv.Atoi(args[0])
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		fmt.Println("killed")
	case "ptrace": // PTRACE_SEIZE args[0]; our exit detaches
		pid, _ := strconv.Atoi(args[0])
		if err := unix.PtraceSeize(pid); err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		fmt.Println("seized")
	case "probe-parent": // kill -0 of our parent
		if err := syscall.Kill(os.Getppid(), 0); err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		fmt.Println("signaled")
	case "kill-own": // a process we start ourselves is ours to kill
		c := exec.Command("/bin/sleep", "60")
		if err := c.Start(); err != nil {
			fmt.Println("start:", err)
			return 1
		}
		if err := c.Process.Kill(); err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		c.Wait()
		fmt.Println("killed own")
	case "environ-parent":
		return environParent(args[0])
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

// sideDoor tries one way of reaching addr (127.0.0.1:port) that does not
// go through connect(2) of a TCP socket, or that seccomp cannot see. It
// prints "connected" (or "listening", "sent", "set up") and exits 0 when
// it got through; "refused: ERR" with status 1 when refused with EACCES
// (or ENOSYS, for io_uring); "unsupported: ERR" with status 3 when the
// kernel does not offer the way at all; anything else with status 2.
func sideDoor(mode, addr string) int {
	port, _ := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
	sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	var err error
	ok, setup := "connected", true // setup: err so far is from making the socket
	switch mode {
	case "connect-mptcp", "listen-mptcp":
		var fd int
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP); err == nil {
			setup = false
			if mode == "connect-mptcp" {
				err = unix.Connect(fd, sa)
			} else if ok = "listening"; true {
				if err = unix.Bind(fd, &unix.SockaddrInet4{Addr: sa.Addr}); err == nil {
					err = unix.Listen(fd, 1)
				}
			}
		}
	case "connect-mptcp-high": // the protocol with its high 32 bits set: the kernel reads an int
		fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 1<<32|unix.IPPROTO_MPTCP)
		if errno != 0 {
			err = errno
		} else {
			setup = false
			err = unix.Connect(int(fd), sa)
		}
	case "fastopen-sendto", "fastopen-sendmsg", "fastopen-connect":
		var fd int
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err != nil {
			break
		}
		switch mode {
		case "fastopen-sendto":
			err = unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa)
		case "fastopen-sendmsg":
			_, err = unix.SendmsgN(fd, []byte("x"), nil, sa, unix.MSG_FASTOPEN)
		default:
			if err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, 1); err == nil {
				// connect(2) returns at once; the write connects.
				if err = unix.Connect(fd, sa); err == nil {
					_, err = unix.Write(fd, []byte("x"))
				}
			}
		}
		// A kernel without TFO for clients says so on the send.
		setup = errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOPROTOOPT)
	case "io-uring":
		ok = "set up"
		var params [120]byte
		if fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0); errno != 0 {
			err = errno
			// ENOSYS is also what a kernel without io_uring says; that
			// one is told apart by the unconfined run of the same mode.
			if errno == unix.ENOSYS {
				fmt.Println("refused:", err)
				return 1
			}
		} else {
			unix.Close(int(fd))
		}
	case "udp":
		ok = "sent"
		var c net.Conn
		if c, err = net.Dial("udp", addr); err == nil {
			_, err = c.Write([]byte("datagram"))
			c.Close()
		}
		setup = false
	}
	switch {
	case err == nil:
		fmt.Println(ok)
		return 0
	case errors.Is(err, unix.EACCES):
		fmt.Println("refused:", err)
		return 1
	case setup:
		fmt.Println("unsupported:", err)
		return 3
	}
	fmt.Println("failed:", err)
	return 2
}

// environParent runs with a secret in its initial environment (what
// /proc/<pid>/environ shows; os.Setenv would not change it) and reads its
// own environ from a child: unconfined, then through a spawner rooted at
// root. It prints both outcomes.
func environParent(root string) int {
	s, err := confine.NewSpawner(confine.Policy{Root: root})
	if err != nil {
		fmt.Println("spawner:", err)
		return 1
	}
	defer s.Close()
	script := `cat /proc/$PPID/environ | tr '\0' '\n' | grep CONFINE_SECRET= || echo "no environ"; cat inside`
	for _, confined := range []bool{false, true} {
		c := exec.Command("/bin/sh", "-c", script)
		c.Dir, c.Env = root, []string{"PATH=/usr/bin:/bin"}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if confined {
			err = s.Start(c)
		} else {
			err = c.Start()
		}
		if err != nil {
			fmt.Printf("confined=%v: cannot start: %v\n", confined, err)
			continue
		}
		c.Wait() // the output is what the test judges, not the status
		fmt.Printf("confined=%v: %s", confined, out.String())
	}
	return 0
}

// fixture is base/root (with "inside", a symlink out and one in) and
// base/outside/secret, all with symlinks resolved.
type fixture struct{ root, outside, secret string }

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	f.secret = filepath.Join(f.outside, "secret")
	for _, d := range []string{f.root, f.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(f.root, "inside"), []byte("inside\n"), 0o644))
	must(t, os.WriteFile(f.secret, []byte("secret\n"), 0o644))
	must(t, os.Symlink("../outside/secret", filepath.Join(f.root, "link-out")))
	must(t, os.Symlink("inside", filepath.Join(f.root, "link-in")))
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func spawner(t *testing.T, p confine.Policy) *confine.Spawner {
	t.Helper()
	confinetest.Need(t, 1)
	s, err := confine.NewSpawner(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// run runs argv in dir through s (nil: unconfined) and returns its
// combined output and exit status.
func run(t *testing.T, s *confine.Spawner, dir string, env []string, argv ...string) (string, int) {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env = dir, append([]string{"PATH=/usr/bin:/bin"}, env...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	var err error
	if s != nil {
		err = s.Start(c)
	} else {
		err = c.Start()
	}
	if err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	c.Wait()
	return out.String(), c.ProcessState.ExitCode()
}

func sh(t *testing.T, s *confine.Spawner, dir, script string) (string, int) {
	t.Helper()
	return run(t, s, dir, nil, "/bin/sh", "-c", script)
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestSpawnerReadWriteOutsideRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root})
	out, code := sh(t, s, f.root, "cat inside && echo made > new && cat new")
	if code != 0 || out != "inside\nmade\n" {
		t.Errorf("inside the root: status %d, %q", code, out)
	}
	out, code = sh(t, s, f.root, "cat "+f.secret)
	if code == 0 || strings.Contains(out, "secret\n") || !strings.Contains(out, "Permission denied") {
		t.Errorf("read outside: status %d, %q", code, out)
	}
	created := filepath.Join(f.outside, "created")
	out, code = sh(t, s, f.root, "echo x > "+created)
	if code == 0 || exists(created) || !strings.Contains(out, "Permission denied") {
		t.Errorf("write outside: status %d, %q, created: %v", code, out, exists(created))
	}
	out, code = sh(t, s, f.root, "ls ~ /root /home /proc/1 /sys >/dev/null")
	if code == 0 {
		t.Errorf("listing home, /proc and /sys: status 0, %q", out)
	}
	// The same reads unconfined work: the refusals above are the domain's.
	if out, code := sh(t, nil, f.root, "cat "+f.secret); code != 0 || out != "secret\n" {
		t.Fatalf("unconfined read: status %d, %q", code, out)
	}
}

// TestSpawnerConcurrentStarts: starts from many goroutines at once are
// all confined.
func TestSpawnerConcurrentStarts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root})
	outs := make(chan string)
	for range 16 {
		go func() {
			c := exec.Command("/bin/sh", "-c", "cat inside; cat "+f.secret+" 2>/dev/null || echo refused")
			c.Dir = f.root
			var out bytes.Buffer
			c.Stdout = &out
			if err := s.Start(c); err != nil {
				outs <- err.Error()
				return
			}
			c.Wait()
			outs <- out.String()
		}()
	}
	for range 16 {
		if out := <-outs; out != "inside\nrefused\n" {
			t.Errorf("a concurrent start: %q", out)
		}
	}
}

func TestSpawnerSymlinkOutRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root})
	if out, code := sh(t, s, f.root, "cat link-in"); code != 0 || out != "inside\n" {
		t.Errorf("symlink inside: status %d, %q", code, out)
	}
	if out, code := sh(t, s, f.root, "cat link-out"); code == 0 || strings.Contains(out, "secret\n") {
		t.Errorf("symlink out: status %d, %q", code, out)
	}
	if out, code := sh(t, nil, f.root, "cat link-out"); code != 0 || out != "secret\n" {
		t.Errorf("symlink out, unconfined: status %d, %q", code, out)
	}
}

func TestSpawnerReadOnlyRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root, ReadOnlyRoot: true})
	if out, code := sh(t, s, f.root, "cat inside"); code != 0 || out != "inside\n" {
		t.Errorf("read: status %d, %q", code, out)
	}
	for _, script := range []string{"echo x > new", "echo x >> inside", "rm inside", "mkdir d", "mv inside moved"} {
		out, code := sh(t, s, f.root, script)
		if code == 0 || exists(filepath.Join(f.root, "new")) || exists(filepath.Join(f.root, "d")) || !exists(filepath.Join(f.root, "inside")) {
			t.Errorf("%s: status %d, %q", script, code, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "inside")); string(b) != "inside\n" {
		t.Errorf("inside changed to %q", b)
	}
}

func TestSpawnerAllowReadWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := t.TempDir()
	s := spawner(t, confine.Policy{Root: f.root, AllowRead: []string{f.outside}, AllowWrite: []string{w}})
	if out, code := sh(t, s, f.root, "cat "+f.secret+" && echo y > "+w+"/new"); code != 0 || out != "secret\n" || !exists(w+"/new") {
		t.Errorf("allowed read and write: status %d, %q", code, out)
	}
	if out, code := sh(t, s, f.root, "echo x > "+f.outside+"/new"); code == 0 || exists(f.outside+"/new") {
		t.Errorf("write into an allow-read dir: status %d, %q", code, out)
	}
}

// privileged tries what capabilities and namespaces give, one line each:
// the name, then "ok" or the error. dir is a writable directory.
func privileged(dir string) int {
	say := func(what string, err error) {
		if err == nil {
			fmt.Println(what, "ok")
		} else {
			fmt.Println(what, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	unix.Capget(&hdr, &data[0])
	bnd, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_ADMIN, 0, 0, 0)
	fmt.Printf("caps effective=%#x permitted=%#x sys_admin-bounding=%d\n", data[0].Effective, data[0].Permitted, bnd)
	say("unshare-user", unix.Unshare(unix.CLONE_NEWUSER))
	say("chroot", unix.Chroot(dir))
	say("mount", unix.Mount("none", dir, "tmpfs", 0, ""))
	_, _, e := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, 0, 0)
	say("bpf", errnoErr(e))
	_, _, e = unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	say("clone3", errnoErr(e))
	c := exec.Command("/bin/true")
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	say("clone-newuser", c.Run())
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err == nil {
		unix.Close(fd)
	}
	say("packet-socket", err)
	say("write-file", os.WriteFile(dir+"/written", []byte("x"), 0o600))
	fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
	}
	say("unix-socket", err)
	return 0
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestSpawnerNoPrivilege: a confined child of a root process holds no
// capability, and the calls that reach into the system (namespaces,
// chroot, mount, bpf, packet sockets) are refused, while its file work
// and a Unix socket work. Unconfined, the same helper (as root) has the
// capabilities and gets past the filter, so the refusals are the
// confinement's.
func TestSpawnerNoPrivilege(t *testing.T) {
	t.Parallel()
	confinetest.Need(t, 1)
	f := newFixture(t)
	argv, env, exe := helperArgv(t, "privileged", f.root)
	s := spawner(t, confine.Policy{Root: f.root, ReadExec: []string{exe}})
	if r := s.Report(); !r.NoCapabilities || !r.Seccomp || !r.Complete() {
		t.Fatalf("report: %s", r)
	}
	out, code := run(t, s, f.root, env, argv...)
	if code != 0 {
		t.Fatalf("helper: status %d, %q", code, out)
	}
	want := []string{
		"caps effective=0x0 permitted=0x0 sys_admin-bounding=0",
		"unshare-user operation not permitted",
		"chroot operation not permitted",
		"mount operation not permitted",
		"bpf operation not permitted",
		"clone3 function not implemented",
		"clone-newuser fork/exec /bin/true: operation not permitted",
		"packet-socket operation not permitted",
		"write-file ok",
		"unix-socket ok",
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Errorf("confined:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if os.Geteuid() != 0 {
		return
	}
	// The counterpart, as root: without the confinement the same calls
	// get through to the kernel (the unshare of a threaded process and
	// clone3 without arguments fail with EINVAL, not by refusal).
	out, _ = run(t, nil, f.root, env, argv...)
	for _, line := range []string{"chroot ok", "packet-socket ok", "clone3 invalid argument", "unshare-user invalid argument"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("unconfined root: no %q in\n%s", line, out)
		}
	}
	if strings.Contains(out, "caps effective=0x0 ") {
		t.Errorf("unconfined root holds no capability: %s", out)
	}
}

// helperArgv runs this test binary as the helper in mode.
func helperArgv(t *testing.T, mode string, args ...string) (argv, env []string, exe string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe}, args...), []string{helperEnv + "=" + mode}, exe
}

// TestSpawnerNoNetwork: with NoNetwork a confined child reaches no TCP
// port, by connect(2) nor by the ways Landlock's TCP rules do not see
// (MPTCP, TCP Fast Open, io_uring), which the seccomp filter closes; the
// same helper through a spawner without NoNetwork gets through each way
// this kernel offers. UDP is not covered, as documented.
func TestSpawnerNoNetwork(t *testing.T) {
	t.Parallel()
	confinetest.Need(t, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback UDP socket: %v", err)
	}
	defer udp.Close()
	f := newFixture(t)
	_, _, exe := helperArgv(t, "")
	open := spawner(t, confine.Policy{Root: f.root, ReadExec: []string{exe}})
	closed := spawner(t, confine.Policy{Root: f.root, ReadExec: []string{exe}, NoNetwork: true})
	if r := closed.Report(); !r.NoNetwork || !r.Complete() {
		t.Fatalf("no-network not enforced in full on this kernel: %s", r)
	}
	for _, tc := range []struct{ mode, ok, refused string }{
		{"connect", "connected", "permission denied"},
		{"connect-mptcp", "connected", "permission denied"},
		{"connect-mptcp-high", "connected", "permission denied"},
		{"listen-mptcp", "listening", "permission denied"},
		{"fastopen-sendto", "connected", "permission denied"},
		{"fastopen-sendmsg", "connected", "permission denied"},
		{"fastopen-connect", "connected", "permission denied"},
		{"io-uring", "set up", "function not implemented"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			argv, env, _ := helperArgv(t, tc.mode, ln.Addr().String())
			out, code := run(t, open, f.root, env, argv...)
			if code == 3 {
				t.Skipf("this kernel does not offer it: %s", out)
			}
			if code != 0 || out != tc.ok+"\n" {
				t.Fatalf("without no-network: status %d, %q", code, out)
			}
			if tc.ok == "connected" {
				// The listener saw it: the way is real, not a socket
				// call that merely returned 0.
				select {
				case <-accepted:
				case <-time.After(30 * time.Second):
					t.Fatalf("without no-network the helper said %q but the listener accepted nothing", out)
				}
			}
			if out, code := run(t, closed, f.root, env, argv...); code != 1 || !strings.Contains(out, tc.refused) {
				t.Errorf("with no-network: status %d, %q", code, out)
			}
			if len(accepted) > 0 {
				t.Errorf("with no-network the listener accepted a connection")
			}
		})
	}
	t.Run("udp", func(t *testing.T) {
		argv, env, _ := helperArgv(t, "udp", udp.LocalAddr().String())
		if out, code := run(t, open, f.root, env, argv...); code != 0 || out != "sent\n" {
			t.Fatalf("UDP without no-network: status %d, %q", code, out)
		}
		buf := make([]byte, 64)
		udp.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, _, err := udp.ReadFrom(buf); err != nil || string(buf[:n]) != "datagram" {
			t.Fatalf("UDP datagram without no-network: %q, %v", buf[:n], err)
		}
		if out, code := run(t, closed, f.root, env, argv...); code != 1 || !strings.Contains(out, "permission denied") {
			t.Errorf("UDP with no-network: status %d, %q", code, out)
		}
	})
	t.Run("x32", func(t *testing.T) {
		if runtime.GOARCH != "amd64" {
			t.Skip("x32 is amd64's")
		}
		argv, env, _ := helperArgv(t, "x32", "")
		if out, code := run(t, nil, f.root, env, argv...); code != 0 || out != "survived\n" {
			t.Fatalf("x32 call unconfined: status %d, %q", code, out)
		}
		// Its numbers are not amd64's: the filter of every confined
		// process does not guess, it kills.
		for _, s := range []*confine.Spawner{open, closed} {
			if out, code := run(t, s, f.root, env, argv...); code != -1 || out != "" {
				t.Errorf("x32 call confined (no-network %v): status %d, %q", s.Policy().NoNetwork, code, out)
			}
		}
	})
	t.Run("shell", func(t *testing.T) {
		out, code := sh(t, closed, f.root, "cat inside && ls . | wc -l && echo made > new && cat new")
		if code != 0 || !strings.HasPrefix(out, "inside\n") || !strings.HasSuffix(out, "made\n") {
			t.Errorf("a shell under the filter: status %d, %q", code, out)
		}
	})
}

func TestSpawnerSignalsScoped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, _, exe := helperArgv(t, "")
	s := spawner(t, confine.Policy{Root: f.root, ReadExec: []string{exe}})
	confinetest.Feature(t, s.Report().ScopedSignals, "this kernel cannot scope signals (Landlock ABI 6 with erratum 2 fixed)")
	sibling := exec.Command("/bin/sleep", "60")
	must(t, sibling.Start())
	defer func() { sibling.Process.Kill(); sibling.Wait() }()
	argv, env, _ := helperArgv(t, "kill", strconv.Itoa(sibling.Process.Pid))
	if out, code := run(t, s, f.root, env, argv...); code == 0 || !strings.Contains(out, "operation not permitted") {
		t.Errorf("kill of an unconfined sibling: status %d, %q", code, out)
	}
	if err := sibling.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the sibling died: %v", err)
	}
	argv, env, _ = helperArgv(t, "probe-parent")
	if out, code := run(t, s, f.root, env, argv...); code == 0 || !strings.Contains(out, "operation not permitted") {
		t.Errorf("kill -0 of the test process: status %d, %q", code, out)
	}
	argv, env, _ = helperArgv(t, "kill-own")
	if out, code := run(t, s, f.root, env, argv...); code != 0 || out != "killed own\n" {
		t.Errorf("kill of its own child: status %d, %q", code, out)
	}
	argv, env, _ = helperArgv(t, "ptrace", strconv.Itoa(sibling.Process.Pid))
	if out, code := run(t, s, f.root, env, argv...); code == 0 || !strings.Contains(out, "operation not permitted") {
		t.Errorf("ptrace of an unconfined sibling: status %d, %q", code, out)
	}
	if out, code := run(t, nil, f.root, env, argv...); code != 0 || out != "seized\n" {
		t.Errorf("unconfined ptrace of the sibling: status %d, %q", code, out)
	}
	// Unconfined, the same helper kills the sibling.
	argv, env, _ = helperArgv(t, "kill", strconv.Itoa(sibling.Process.Pid))
	if out, code := run(t, nil, f.root, env, argv...); code != 0 || out != "killed\n" {
		t.Errorf("unconfined kill: status %d, %q", code, out)
	}
}

// TestSpawnerParentEnvironUnreadable: the helper, started with a secret
// in its environment, makes a spawner; its unconfined child reads the
// secret from /proc/<helper>/environ, its confined child cannot, and
// still reads the root.
func TestSpawnerParentEnvironUnreadable(t *testing.T) {
	t.Parallel()
	confinetest.Need(t, 1)
	f := newFixture(t)
	argv, env, _ := helperArgv(t, "environ-parent", f.root)
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = append(env, "CONFINE_SECRET=hunter2", "PATH=/usr/bin:/bin")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	unconfined, confined, ok := strings.Cut(got, "confined=true:")
	if !ok || !strings.Contains(unconfined, "CONFINE_SECRET=hunter2") {
		t.Fatalf("the unconfined child did not read the secret, so the test proves nothing: %q", got)
	}
	if strings.Contains(confined, "hunter2") || !strings.Contains(confined, "Permission denied") || !strings.Contains(confined, "inside\n") {
		t.Errorf("confined child: %q", confined)
	}
}

// TestInForce: confined children see it, and the process that made the
// spawner is not confined, on any thread, old or new.
func TestInForce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	argv, env, exe := helperArgv(t, "inforce")
	s := spawner(t, confine.Policy{Root: f.root, ReadExec: []string{exe}})
	if out, _ := run(t, s, f.root, env, argv...); out != "true\n" {
		t.Errorf("confined child: %q, want true", out)
	}
	confinedThreads := make(chan bool)
	for range 32 {
		go func() {
			runtime.LockOSThread() // a thread of its own; it ends with us
			confinedThreads <- confine.InForce()
		}()
	}
	for range 32 {
		if <-confinedThreads {
			t.Fatal("InForce on a thread of the test process after NewSpawner")
		}
	}
	if out, _ := run(t, nil, f.root, env, argv...); out != "false\n" {
		t.Errorf("unconfined child: %q, want false", out)
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root, TempDir: t.TempDir()})
	if err := confine.Probe(s, ""); err != nil {
		t.Fatal(err)
	}
	r := s.Report()
	if !r.Verified || !r.Complete() || !strings.Contains(r.String(), "read+write "+f.root) {
		t.Errorf("report: %s", r)
	}
	missing := filepath.Join(f.outside, "no-shell")
	if err := confine.Probe(s, missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a probe with a missing shell: %v", err)
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	missing := filepath.Join(f.root, "missing")
	r := confine.Policy{Root: f.root, ReadOnlyRoot: true, AllowWrite: []string{missing}, ReadExec: []string{filepath.Join(f.root, "inside")}}.Plan()
	want := map[string]string{f.root: confine.AccessRead, filepath.Join(f.root, "inside"): confine.AccessReadExec, "/usr": confine.AccessReadExec, "/dev/null": confine.AccessDevice}
	for _, rl := range r.Rules {
		if a, ok := want[rl.Path]; ok && a == rl.Access {
			delete(want, rl.Path)
		}
		if strings.HasPrefix(rl.Path, "/proc") && (rl.Source != "proc" || !rl.File || rl.Access != confine.AccessRead) ||
			strings.HasPrefix(rl.Path, "/proc/self") || rl.Path == "/etc" ||
			strings.HasPrefix(rl.Path, "/sys") || strings.HasPrefix(rl.Path, "/home") {
			t.Errorf("rule %+v", rl)
		}
	}
	if len(want) > 0 {
		t.Errorf("rules %+v lack %v", r.Rules, want)
	}
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], missing) {
		t.Errorf("skipped %q, want %s", r.Skipped, missing)
	}
	r = confine.Policy{Root: f.root, AllowRead: []string{"/"}}.Plan()
	if r.Complete() || !strings.Contains(strings.Join(r.Missing, ";"), `opens "/"`) {
		t.Errorf("a policy opening /: %+v", r.Missing)
	}
	if confine.ABI() > 0 {
		if _, err := confine.NewSpawner(confine.Policy{Root: missing}); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("NewSpawner with a missing root: %v", err)
		}
		if _, err := confine.NewSpawner(confine.Policy{Root: f.root, AllowRead: []string{"/"}}); err == nil || !strings.Contains(err.Error(), `opens "/"`) {
			t.Errorf("NewSpawner with / allowed: %v", err)
		}
	}
	if confine.ABI() == 0 {
		if _, err := confine.NewSpawner(confine.Policy{Root: f.root}); !errors.Is(err, confine.ErrUnsupported) {
			t.Errorf("NewSpawner without Landlock: %v", err)
		}
	}
}

// TestSpawnerSamePlaceTwice: a policy that names one place more than once
// (the root also a tool directory, or also --allow-write; a tool
// directory that is the root's parent) gets one rule for it with both
// grants and both reasons, and the spawner starts: it used to refuse with
// "root X: not found" once the second name took the rule over. What each
// grant allows works, and what neither allows is still refused.
func TestSpawnerSamePlaceTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hello := filepath.Join(f.root, "hello")
	must(t, os.WriteFile(hello, []byte("#!/bin/sh\necho hello\n"), 0o755))
	// Not under the root's parent, which one case opens.
	secret := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(secret, []byte("secret\n"), 0o644))
	type want struct {
		access, source string
		exec, write    bool
	}
	for _, c := range []struct {
		name string
		p    confine.Policy
		want want
	}{
		{"read-only root, also a tool directory",
			confine.Policy{Root: f.root, ReadOnlyRoot: true, ReadExec: []string{f.root}},
			want{confine.AccessReadExec, "root+tool", true, false}},
		{"read-only root, also allow-read and a tool directory twice",
			confine.Policy{Root: f.root, ReadOnlyRoot: true, AllowRead: []string{f.root}, ReadExec: []string{f.root, f.root + "/"}},
			want{confine.AccessReadExec, "root+tool+allow-read", true, false}},
		{"read-only root, also allow-write",
			confine.Policy{Root: f.root, ReadOnlyRoot: true, AllowWrite: []string{f.root}},
			want{confine.AccessReadWrite, "root+allow-write", true, true}},
		{"root, also a tool directory and the temp dir",
			confine.Policy{Root: f.root, ReadExec: []string{f.root}, TempDir: f.root},
			want{confine.AccessReadWrite, "root+tmp+tool", true, true}},
		{"read-only root, its parent a tool directory",
			confine.Policy{Root: f.root, ReadOnlyRoot: true, ReadExec: []string{filepath.Dir(f.root)}},
			want{confine.AccessRead, "root", true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rules []confine.Rule
			for _, rl := range c.p.Plan().Rules {
				if rl.Path == f.root {
					rules = append(rules, rl)
				}
			}
			if len(rules) != 1 || rules[0].Access != c.want.access || rules[0].Source != c.want.source {
				t.Errorf("plan: rules for the root %+v, want one %s [%s]", rules, c.want.access, c.want.source)
			}
			s := spawner(t, c.p)
			if out, code := sh(t, s, f.root, "cat inside"); code != 0 || out != "inside\n" {
				t.Errorf("read in the root: status %d, %q", code, out)
			}
			if out, code := sh(t, s, f.root, "./hello"); (code == 0) != c.want.exec || (c.want.exec && out != "hello\n") {
				t.Errorf("exec in the root: status %d, %q; want allowed: %v", code, out, c.want.exec)
			}
			made := filepath.Join(f.root, "made")
			os.Remove(made)
			if out, code := sh(t, s, f.root, "echo x > made"); (code == 0) != c.want.write || exists(made) != c.want.write {
				t.Errorf("write in the root: status %d, %q; want allowed: %v", code, out, c.want.write)
			}
			if out, code := sh(t, s, f.root, "cat "+secret); code == 0 || strings.Contains(out, "secret\n") || !strings.Contains(out, "Permission denied") {
				t.Errorf("read outside: status %d, %q", code, out)
			}
		})
	}
}

// TestSpawnerDeviceNodesRefused: a confined root process could make a
// device node in the root (for the disk, /dev/kmsg) and open it there, as
// Landlock checks the node's path, not the device. Making one is refused
// in every writable place; the other special files (a FIFO) are still
// made, and unconfined the same mknod works (so the refusal is the
// domain's, not a missing CAP_MKNOD).
func TestSpawnerDeviceNodesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tmp, w := t.TempDir(), t.TempDir()
	s := spawner(t, confine.Policy{Root: f.root, TempDir: tmp, AllowWrite: []string{w}})
	for _, dir := range []string{f.root, tmp, w} {
		for _, kind := range []string{"c 1 11", "b 7 0"} {
			node := filepath.Join(dir, "node")
			out, code := sh(t, s, dir, "mknod node "+kind+" && head -c 16 node")
			if code == 0 || exists(node) || !strings.Contains(out, "Permission denied") {
				t.Errorf("mknod %s in %s: status %d, %q, made: %v", kind, dir, code, out, exists(node))
			}
		}
		if out, code := sh(t, s, dir, "mkfifo fifo && test -p fifo"); code != 0 {
			t.Errorf("mkfifo in %s: status %d, %q", dir, code, out)
		}
	}
	if os.Geteuid() != 0 {
		return // unconfined mknod of a device needs CAP_MKNOD
	}
	out, code := sh(t, nil, f.root, "mknod node c 1 3 && test -c node")
	if code != 0 && strings.Contains(out, "Operation not permitted") {
		// A sandbox (Bazel's user namespace) withholds CAP_MKNOD: the
		// refusals above said "Permission denied", Landlock's EACCES,
		// not this EPERM, so they still came from the policy.
		t.Logf("unconfined mknod refused by this sandbox: %q", out)
		return
	}
	if code != 0 {
		t.Errorf("unconfined mknod: status %d, %q", code, out)
	}
}

// TestSpawnerNoTerminal: a confined process whose session has a terminal
// (mcp-call run from a shell) cannot open /dev/tty, through which TIOCSTI
// would type a command into that shell, to run unconfined. Its own
// descriptors stay usable, and unconfined the same open works.
func TestSpawnerNoTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root})
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, ptmx) // the terminal's output, unread otherwise
	for _, confined := range []bool{false, true} {
		pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command("/bin/sh", "-c", `echo >&3 fd-ok; if (: >/dev/tty) 2>/dev/null; then echo >&3 tty-opened; else echo >&3 tty-refused; fi`)
		c.Dir, c.Env, c.Stdin, c.Stdout, c.Stderr = f.root, []string{"PATH=/usr/bin:/bin"}, pts, pts, pts
		var out bytes.Buffer
		r, w, _ := os.Pipe()
		c.ExtraFiles = []*os.File{w}
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if confined {
			err = s.Start(c)
		} else {
			err = c.Start()
		}
		w.Close()
		pts.Close()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&out, r)
		r.Close()
		c.Wait()
		want := "fd-ok\ntty-opened\n"
		if confined {
			want = "fd-ok\ntty-refused\n"
		}
		if out.String() != want {
			t.Errorf("confined=%v, with a controlling terminal: %q, want %q", confined, out.String(), want)
		}
	}
}
