//go:build unix && !linux

package proc

func setSubreaper() error { return ErrNoSubreaper }

func sweep() {}
