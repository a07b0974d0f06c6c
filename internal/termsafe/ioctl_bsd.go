//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package termsafe

import "golang.org/x/sys/unix"

const ioctlReadTermios = unix.TIOCGETA
