package selfguard

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const secret = "selfguard-test-secret-4f1c"

// TestMain runs the test binary as the guarded child when asked: it applies
// the guard (or not), says what os.Getenv still sees, and waits for stdin to
// close so the test can look at its /proc files meanwhile.
func TestMain(m *testing.M) {
	switch os.Getenv("SELFGUARD_CHILD") {
	case "guard":
		if err := Apply(); err != nil {
			fmt.Println("error:", err)
		}
		fallthrough
	case "plain":
		fmt.Println("getenv:", os.Getenv("SELFGUARD_SECRET"))
		os.Stdin.Read(make([]byte, 1))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child starts the test binary as a child in mode and returns its pid and
// the line it printed; the child exits when the test ends.
func child(t *testing.T, mode string) (pid int, line string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{"SELFGUARD_CHILD=" + mode, "SELFGUARD_SECRET=" + secret}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child %s: %v", mode, err)
	}
	return cmd.Process.Pid, strings.TrimSpace(line)
}

func TestApplyBlanksEnviron(t *testing.T) {
	// The attack works on an unguarded process: the reading below can fail.
	pid, _ := child(t, "plain")
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil || !bytes.Contains(env, []byte(secret)) {
		t.Fatalf("unguarded child: environ %q, %v; want the secret readable", env, err)
	}

	pid, line := child(t, "guard")
	if line != "getenv: "+secret {
		t.Errorf("guarded child printed %q, want os.Getenv to still see the secret", line)
	}
	env, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err == nil && len(bytes.Trim(env, "\x00")) > 0 {
		t.Errorf("guarded child's environ holds %q, want only NUL bytes", env)
	}
	if err != nil && os.Geteuid() == 0 {
		t.Errorf("root reading a guarded environ: %v, want zeros (the file stays readable to root)", err)
	}
}

func TestEnvBounds(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	fields := make([]string, 52)
	for i := range fields {
		fields[i] = fmt.Sprint(i + 1)
	}
	fields[1] = "(a) b)"
	start, end, err := envBounds([]byte(strings.Join(fields, " ") + "\n"))
	if err != nil || start != 50 || end != 51 {
		t.Errorf("envBounds = %d, %d, %v; want 50, 51", start, end, err)
	}
	if _, _, err := envBounds([]byte("1 (x) R 2 3")); err == nil || !strings.Contains(err.Error(), "want at least 51") {
		t.Errorf("short stat: err %v, want one naming the field count", err)
	}
}
