//go:build !linux

package confine

import (
	"errors"
	"os/exec"
)

// ABI is 0: Landlock is Linux only.
func ABI() int { return 0 }

func errata() int { return 0 }

// InForce is false: nothing confines a process here.
func InForce() bool { return false }

// ErrUnsupported is returned by everything that would confine.
var ErrUnsupported = errors.New("confine: Landlock is not available on this system (Linux only)")

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("confine: spawner closed")

// Spawner cannot be made here; see the Linux documentation.
type Spawner struct{}

// NewSpawner returns ErrUnsupported.
func NewSpawner(p Policy) (*Spawner, error) { return nil, ErrUnsupported }

// NewNestedSpawner returns ErrUnsupported.
func NewNestedSpawner() (*Spawner, error) { return nil, ErrUnsupported }

// Start returns ErrUnsupported.
func (s *Spawner) Start(cmd *exec.Cmd) error { return ErrUnsupported }

// StartWith returns ErrUnsupported.
func (s *Spawner) StartWith(cmd *exec.Cmd, around func(start func() error) error) error {
	return ErrUnsupported
}

// Report is empty.
func (s *Spawner) Report() Report { return Report{} }

// Policy is empty.
func (s *Spawner) Policy() Policy { return Policy{} }

// Close does nothing.
func (s *Spawner) Close() {}

// Probe returns ErrUnsupported.
func Probe(s *Spawner, probeExe string) error { return ErrUnsupported }

// Exec returns ErrUnsupported.
func Exec(p Policy, argv []string, env []string, partial func(Report) bool) error {
	return ErrUnsupported
}
