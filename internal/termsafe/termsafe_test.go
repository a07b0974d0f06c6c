package termsafe

import (
	"bytes"
	"os"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tabs\tand\nnewlines é ✓": "plain text, tabs\tand\nnewlines é ✓",
		"\x1b[2J\x1b[Hcleared":                `\x1b[2J\x1b[Hcleared`,
		"\x1b]52;c;cm0gLXJm\x07":              `\x1b]52;c;cm0gLXJm\x07`,
		"\x1b]8;;https://evil\x1b\\x":         `\x1b]8;;https://evil\x1b\x`,
		"over\rwrite\x00\x7f":                 `over\x0dwrite\x00\x7f`,
		"c1 \u009b31m and \u0085":             `c1 \u009b31m and \u0085`,
		"bad \x9b31m utf-8 \xff":              `bad \x9b31m utf-8 \xff`,
		`a literal \x1b stays`:                `a literal \x1b stays`,
	} {
		if got := string(Escape([]byte(in))); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	n, err := Writer{&b}.Write([]byte("x\x1by"))
	if n != 3 || err != nil || b.String() != `x\x1by` {
		t.Errorf("Write = %d, %v; wrote %q", n, err, b.String())
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) {
		t.Error("a pipe is a terminal")
	}
}
