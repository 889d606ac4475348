package fakedoor

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerPID returns the writer's pid from SO_PEERCRED, 0 when unknown.
func peerPID(c *net.UnixConn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	rc.Control(func(fd uintptr) {
		if uc, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(uc.Pid)
		}
	})
	return pid
}
