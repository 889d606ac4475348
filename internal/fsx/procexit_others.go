//go:build !linux

package fsx

import (
	"os"
)

func openProcExit(pid int) (*ProcExit, error) {
	return nil, &os.SyscallError{Syscall: "pidfd_open", Err: ErrNoProcExit}
}
