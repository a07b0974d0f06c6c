//go:build !linux

package httpserve

import (
	"errors"
	"net"
)

// refuseHandshakes: only Linux has this socket filter; elsewhere closing
// the listener may reset a connection in its accept queue.
func refuseHandshakes(net.Listener) error { return errors.ErrUnsupported }

func acceptQueue(net.Listener) int { return 0 }
