package fsx

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func openProcExit(pid int) (*ProcExit, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, syscall.EINVAL) {
		fd, err = unix.PidfdOpen(pid, 0) // a kernel before 5.10: no PIDFD_NONBLOCK
		if err == nil {
			err = unix.SetNonblock(fd, true)
			if err != nil {
				unix.Close(fd)
			}
		}
	}
	switch {
	case errors.Is(err, syscall.ESRCH):
		return nil, &os.SyscallError{Syscall: "pidfd_open", Err: os.ErrProcessDone}
	case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EINVAL):
		return nil, &os.SyscallError{Syscall: "pidfd_open", Err: errors.Join(ErrNoProcExit, err)}
	case err != nil:
		return nil, os.NewSyscallError("pidfd_open", err)
	}
	// A non-blocking descriptor: os.NewFile puts it in the runtime poller,
	// which wakes Wait when it becomes readable.
	return &ProcExit{f: os.NewFile(uintptr(fd), "pidfd")}, nil
}
