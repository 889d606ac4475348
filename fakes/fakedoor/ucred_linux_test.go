package fakedoor_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

func ucredPID(t *testing.T, fd int) int {
	t.Helper()
	uc, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		t.Fatal(err)
	}
	return int(uc.Pid)
}
