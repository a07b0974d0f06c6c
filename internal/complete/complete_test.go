package complete

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/complete/completetest"
)

func testCommand() Command {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	fs.String("root", "", "working directory `DIR` of the tools")
	fs.String("log", "", "append logs to `FILE`")
	fs.String("mode", "auto", "the mode: auto or off")
	fs.Bool("verbose", false, "log every event; it's \"loud\" [sic] $HOME `x`")
	fs.Duration("timeout", 0, "per-call timeout")
	sub := flag.NewFlagSet("sub", flag.ContinueOnError)
	sub.Bool("dry-run", false, "write nothing")
	return Command{Name: "prog", Flags: []*flag.FlagSet{fs}, Choices: map[string][]string{"mode": {"auto", "off"}},
		Sub: []Command{
			{Name: "sub", Summary: "a subcommand's summary", Flags: []*flag.FlagSet{fs, sub}, Choices: map[string][]string{"mode": {"auto", "off"}}},
			{Name: "completion", Summary: "print it", Words: Shells},
		}}
}

func TestBash(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, "bash", testCommand()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	os.WriteFile(filepath.Join(dir, "afile"), nil, 0o644)
	for _, c := range []struct{ line, want, not string }{
		{"prog --", "--root\n--log\n--mode\n--timeout\n--verbose", "--dry-run"},
		{"prog ", "sub\ncompletion", "--root"},
		{"prog --mode ", "auto\noff", "sub"},
		{"prog --root a", "adir", "afile"},
		{"prog --log a", "adir\nafile", ""},
		{"prog --timeout ", "", "sub"},
		{"prog sub --d", "--dry-run", ""},
		{"prog sub --mode o", "off", "auto"},
		{"prog completion ", "bash\nzsh\nfish", ""},
	} {
		got := strings.Join(completetest.Bash(t, b.String(), dir, c.line), "\n") + "\n"
		for _, w := range strings.Split(c.want, "\n") {
			if !strings.Contains("\n"+got, "\n"+w+"\n") {
				t.Errorf("%q: candidates %q, want %q among them", c.line, got, w)
			}
		}
		if c.not != "" && strings.Contains("\n"+got, "\n"+c.not+"\n") {
			t.Errorf("%q: candidates %q, want no %q", c.line, got, c.not)
		}
	}
}

// zsh and fish read their scripts without a syntax error, where installed.
func TestZshFishSyntax(t *testing.T) {
	for _, c := range []struct {
		shell, ext string
		check      []string
	}{
		{"zsh", "zsh", []string{"-n"}},
		{"fish", "fish", []string{"--no-execute"}},
	} {
		path, err := exec.LookPath(c.shell)
		if err != nil {
			t.Logf("%s not installed: not checked", c.shell)
			continue
		}
		var b strings.Builder
		if err := Write(&b, c.shell, testCommand()); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "prog."+c.ext)
		os.WriteFile(f, []byte(b.String()), 0o644)
		if out, err := exec.Command(path, append(c.check, f)...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s\n%s", c.shell, err, out, b.String())
		}
		if c.shell == "fish" {
			// fish runs it too: complete --do-complete asks for candidates.
			out, err := exec.Command(path, "--no-config", "-c", "source "+f+"; complete --do-complete 'prog --mode '").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "auto") || !strings.Contains(string(out), "off") {
				t.Errorf("fish: --mode candidates %q %v", out, err)
			}
			out, _ = exec.Command(path, "--no-config", "-c", "source "+f+"; complete --do-complete 'prog sub --dr'").CombinedOutput()
			if !strings.Contains(string(out), "--dry-run") {
				t.Errorf("fish: sub --dr candidates %q", out)
			}
		}
	}
}

// A name that could run shell code in a script is refused; the usage
// text's quotes and dollars never reach a script unescaped.
func TestWriteRefusesUnsafeNames(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("a'$(touch pwned)'", false, "")
	if err := Write(&strings.Builder{}, "bash", Command{Name: "prog", Flags: []*flag.FlagSet{fs}}); err == nil || !strings.Contains(err.Error(), "flag name") {
		t.Errorf("unsafe flag name: %v", err)
	}
	if err := Write(&strings.Builder{}, "bash", Command{Name: "prog;rm"}); err == nil {
		t.Errorf("unsafe command name accepted")
	}
	c := testCommand()
	c.Choices = map[string][]string{"mode": {"$(reboot)"}}
	if err := Write(&strings.Builder{}, "fish", c); err == nil {
		t.Errorf("unsafe choice accepted")
	}
	if err := Write(&strings.Builder{}, "tcsh", testCommand()); err == nil || err.Error() != `shell "tcsh": want bash, zsh, fish` {
		t.Errorf("unknown shell: %v", err)
	}
	for _, sh := range Shells {
		var b strings.Builder
		Write(&b, sh, testCommand())
		if strings.Contains(b.String(), "$HOME") || strings.Contains(b.String(), "`x`") {
			t.Errorf("%s: a usage's $ or backquote reached the script:\n%s", sh, b.String())
		}
	}
}
