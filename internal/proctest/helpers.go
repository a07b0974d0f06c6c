package proctest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Script writes body as an executable /bin/sh script in a new temporary
// directory and returns its path.
func Script(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool")
	WriteExecutable(t, p, []byte("#!/bin/sh\n"+body+"\n"))
	return p
}

// Bounded calls run with a context that ends after 20 s and fails the test
// when run has not returned 10 s after that: a supervision bug that ignores
// its context fails the test instead of hanging it.
func Bounded[R any](t testing.TB, run func(ctx context.Context) R) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan R, 1)
	go func() { done <- run(ctx) }()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not return")
		var zero R
		return zero
	}
}

// PID parses out, a process's output that is one pid (and white space).
func PID(t testing.TB, out []byte) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	return pid
}

// WaitPIDFile waits (bounded by Patience) until a process has written a
// line holding a pid into file, and returns the pid.
func WaitPIDFile(t testing.TB, file string) int {
	t.Helper()
	var pid int
	Eventually(t, func() string {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return "no pid in " + file
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return err.Error()
		}
		return ""
	})
	return pid
}

// Buffer is a bytes.Buffer safe for concurrent use: a process's stderr
// copied by a goroutine while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
