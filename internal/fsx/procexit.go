package fsx

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNoProcExit reports that this system cannot make a process's exit an
// event (no pidfd: another OS, a kernel before 5.3, a seccomp filter that
// refuses pidfd_open). The caller falls back to polling the process table.
var ErrNoProcExit = errors.New("process exit events not available")

// ProcExit is one process's exit as an event: a pidfd (pidfd_open(2)) on
// Linux, which becomes readable once the process has exited, whoever its
// parent is. It names the process that had the pid when it was opened,
// never a later one under a recycled pid: open it, then check (by its start
// time) that the pid is still the process you mean, and its exit is that
// process's. Make one with [OpenProcExit]; a nil or zero ProcExit has
// exited already.
type ProcExit struct {
	f      *os.File
	closed atomic.Bool
}

// OpenProcExit opens the exit of process pid as an event. A pid that does
// not run is an error matching [os.ErrProcessDone]; a system without
// pidfds is [ErrNoProcExit].
func OpenProcExit(pid int) (*ProcExit, error) {
	if pid <= 0 {
		return nil, &os.SyscallError{Syscall: "pidfd_open", Err: os.ErrProcessDone}
	}
	return openProcExit(pid)
}

// Wait blocks until the process has exited (nil), ctx ends (ctx's error)
// or the ProcExit is closed (an error matching os.ErrClosed). It is woken
// by the kernel through the runtime's poller: no timer, no thread held.
func (p *ProcExit) Wait(ctx context.Context) error {
	if p == nil || p.f == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rc, err := p.f.SyscallConn()
	if err == nil {
		err = p.f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		if p.closed.Load() {
			return os.ErrClosed
		}
		return err
	}
	stop := context.AfterFunc(ctx, func() { p.f.SetReadDeadline(aLongTimeAgo) })
	defer stop()
	var exited bool
	err = rc.Read(func(fd uintptr) bool {
		exited = pollExited(int(fd))
		return exited
	})
	switch {
	case exited:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case p.closed.Load():
		return os.ErrClosed
	}
	return err
}

// Exited reports, without waiting, whether the process has exited.
func (p *ProcExit) Exited() bool {
	if p == nil || p.f == nil {
		return true
	}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return false
	}
	var exited bool
	rc.Control(func(fd uintptr) { exited = pollExited(int(fd)) })
	return exited
}

// Close releases the pidfd; a Wait in progress returns.
func (p *ProcExit) Close() error {
	if p == nil || p.f == nil {
		return nil
	}
	p.closed.Store(true)
	return p.f.Close()
}

// aLongTimeAgo is a read deadline in the past: it makes a Wait return.
var aLongTimeAgo = time.Unix(1, 0)

// pollExited reports whether the pidfd fd is readable: its process exited.
func pollExited(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
	}
}

// SignalName is the conventional name of a signal ("SIGINT", "SIGTERM"),
// or its String when it has none.
func SignalName(s os.Signal) string {
	if ss, ok := s.(syscall.Signal); ok {
		if n := unix.SignalName(ss); n != "" {
			return n
		}
	}
	if s == nil {
		return ""
	}
	return s.String()
}

// SignalExitCode is the exit status a shell reports for a process a signal
// ended: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM); 0
// when s is no syscall.Signal.
func SignalExitCode(s os.Signal) int {
	if ss, ok := s.(syscall.Signal); ok && ss > 0 {
		return 128 + int(ss)
	}
	return 0
}
