package httpserve

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The documented recipe, head -c 32 /dev/urandom > FILE, works every time:
// 1,000 random keys, about 1 in 20 of which starts or ends with a byte a
// trimming loader took for white space, come back byte for byte.
func TestReadKeyFileRandomKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	edgy := 0
	for i := range 1000 {
		k := make([]byte, 32)
		rand.Read(k)
		if i == 0 {
			k[0], k[31] = '\n', ' ' // the worst case, whatever the draw
		}
		if len(bytes.TrimSpace(k)) != len(k) {
			edgy++
		}
		if err := os.WriteFile(path, k, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadKeyFile(path)
		if err != nil {
			t.Fatalf("key %d %x: %v", i, k, err)
		}
		if !bytes.Equal(got, k) {
			t.Fatalf("key %d: read %x, want %x", i, got, k)
		}
	}
	t.Logf("%d of 1000 keys start or end with white space", edgy)
}

// A text key is its bytes, newline included: two files that differ only
// in the newline are two keys.
func TestReadKeyFileText(t *testing.T) {
	dir := t.TempDir()
	hex := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	with, without := filepath.Join(dir, "with"), filepath.Join(dir, "without")
	os.WriteFile(with, []byte(hex+"\n"), 0o600)
	os.WriteFile(without, []byte(hex), 0o600)
	a, err := ReadKeyFile(with)
	if err != nil || string(a) != hex+"\n" {
		t.Errorf("hex key with its newline: %q %v", a, err)
	}
	b, err := ReadKeyFile(without)
	if err != nil || string(b) != hex {
		t.Errorf("hex key without a newline: %q %v", b, err)
	}
}

// What a careless user or an attacker could give is refused, and the
// error names the file, what it holds and what is wanted.
func TestReadKeyFileRefusals(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	random := make([]byte, 31)
	rand.Read(random)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(file("target", []byte("test-session-key-0123456789abcdefghij")), link)
	for _, c := range []struct {
		path string
		want string
	}{
		{file("empty", nil), ": 0 bytes, want at least 32 (every byte counts, white space too); make one with: head -c 32 /dev/urandom > FILE"},
		{file("short", random), ": 31 bytes, want at least 32"},
		{file("spaces", []byte(strings.Repeat(" ", 20)+"short-key\n")), ": 30 bytes, want at least 32"},
		{file("zeros", make([]byte, 32)), ": 32 bytes but only 1 distinct byte value, want random bytes (at least 8 distinct values), not a placeholder; make one with: head -c 32 /dev/urandom > FILE"},
		{file("blank", []byte(strings.Repeat("\n", 64))), ": 64 bytes but only 1 distinct byte value"},
		{file("repeat", []byte(strings.Repeat("changeme", 5))), ": 40 bytes but only 7 distinct byte values"},
		{file("huge", bytes.Repeat([]byte("0123456789"), 1000)), ": more than 4096 bytes, want 32 to 4096"},
		{dir, ": a directory, want a regular file of at least 32 random bytes"},
		{fifo, ": a named pipe, want a regular file"},
		{"/dev/urandom", ": a character device, want a regular file"},
	} {
		k, err := ReadKeyFile(c.path)
		if err == nil || !strings.Contains(err.Error(), "session key file "+c.path+c.want) {
			t.Errorf("%s: key %q, error %v; want %q", c.path, k, err, c.want)
		}
	}
	if _, err := ReadKeyFile(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	// The counterpart: a link to a good key is followed.
	if k, err := ReadKeyFile(link); err != nil || string(k) != "test-session-key-0123456789abcdefghij" {
		t.Errorf("link to a good key: %q %v", k, err)
	}
}
