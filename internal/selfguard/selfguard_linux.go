package selfguard

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Apply makes the process undumpable and blanks its kernel-visible
// environment; see the package doc.
func Apply() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("selfguard: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return scrubEnviron()
}

// scrubEnviron overwrites the environment block the process was started with.
func scrubEnviron() error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fmt.Errorf("selfguard: %w", err)
	}
	start, end, err := envBounds(stat)
	if err != nil {
		return fmt.Errorf("selfguard: /proc/self/stat: %w", err)
	}
	if end <= start {
		return nil
	}
	// /proc/self/mem rather than an unsafe pointer: the block is not Go
	// memory, and this keeps vet and the race detector out of it.
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("selfguard: %w", err)
	}
	defer mem.Close()
	if _, err := mem.WriteAt(make([]byte, end-start), int64(start)); err != nil {
		return fmt.Errorf("selfguard: blanking the environment block: %w", err)
	}
	return nil
}

// envBounds returns env_start and env_end, fields 50 and 51 of
// /proc/PID/stat (proc(5)). Field 2, the command name in parentheses, may
// hold spaces and parentheses itself, so fields are counted from the last ')'.
func envBounds(stat []byte) (start, end uint64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no ')' after the command name")
	}
	fields := bytes.Fields(stat[i+1:]) // fields[0] is field 3
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, fmt.Errorf("%d fields, want at least 51 (kernel older than 3.5?)", len(fields)+2)
	}
	if start, err = strconv.ParseUint(string(fields[envStart]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("env_start: %w", err)
	}
	if end, err = strconv.ParseUint(string(fields[envEnd]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("env_end: %w", err)
	}
	return start, end, nil
}
