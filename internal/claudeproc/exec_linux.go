package claudeproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/oo-family/oo-claude/station"
	"golang.org/x/sys/unix"
)

// RunProcess runs inv in a process group of its own and waits for it. When
// inv.Timeout passes or ctx ends first, the whole group gets SIGTERM, and
// SIGKILL once KillGrace has passed while any member is left; grandchildren
// that hold the output pipes open cannot keep it waiting.
func RunProcess(ctx context.Context, inv Invocation) Outcome {
	start := time.Now()
	out := Outcome{ExitCode: -1}
	files, err := dupFDs(inv.FDs)
	if err != nil {
		out.Err = err
		return out
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	stdout := &headBuffer{max: StdoutKeep}
	stderr := &tailBuffer{max: StderrKeep}
	var stdoutW io.Writer = stdout
	if inv.OnStdout != nil {
		stdoutW = &lineWriter{w: stdout, fn: inv.OnStdout}
	}
	cmd := &exec.Cmd{
		Path:       inv.Path,
		Args:       append([]string{inv.Path}, inv.Args...),
		Env:        inv.Env,
		Dir:        inv.Dir,
		Stdout:     stdoutW,
		Stderr:     stderr,
		ExtraFiles: files,
		// Its own process group, so a timeout stops its tools too; and
		// SIGKILL when this process dies (killed, OOM), so a run cannot
		// outlive the supervisor that enforces its deadline.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		// A grandchild that keeps the pipes open must not keep us waiting
		// once the leader is gone.
		WaitDelay: 2 * time.Second,
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if inv.Stdin != nil {
		cmd.Stdin = inv.Stdin
	}
	// The parent-death signal is tied to the thread that forks: keep this
	// goroutine on one thread until the child is waited for, so the
	// runtime cannot retire that thread under a running child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		out.Err = fmt.Errorf("start %s: %w", inv.Path, err)
		return out
	}
	out.PID = cmd.Process.Pid
	if inv.OnStart != nil {
		inv.OnStart(out.PID)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var timeout <-chan time.Time
	if inv.Timeout > 0 {
		t := time.NewTimer(inv.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var werr error
	select {
	case werr = <-done:
	case <-timeout:
		out.TimedOut = true
		werr = stopGroup(pgid, inv.KillGrace, done)
	case <-ctx.Done():
		out.Canceled = true
		werr = stopGroup(pgid, inv.KillGrace, done)
	}
	out.Duration = time.Since(start)
	out.Stdout, out.Stderr = stdout.b, stderr.b
	var ee *exec.ExitError
	switch {
	case werr == nil:
		out.ExitCode = 0
	case errors.As(werr, &ee):
		out.ExitCode = ee.ExitCode() // -1 when killed by a signal
	case errors.Is(werr, exec.ErrWaitDelay):
		out.ExitCode = cmd.ProcessState.ExitCode()
	default:
		out.Err = werr
	}
	if out.TimedOut || out.Canceled {
		out.ExitCode = -1
	}
	return out
}

// stopGroup sends SIGTERM to the process group, waits up to grace for every
// member to be gone, then sends SIGKILL, and returns the leader's Wait
// error.
func stopGroup(pgid int, grace time.Duration, done <-chan error) error {
	if grace <= 0 {
		grace = 3 * time.Second
	}
	_ = unix.Kill(-pgid, unix.SIGTERM)
	deadline := time.Now().Add(grace)
	var werr error
	leaderDone := false
	for time.Now().Before(deadline) {
		if !leaderDone {
			select {
			case werr = <-done:
				leaderDone = true
			default:
			}
		}
		if leaderDone && !groupAlive(pgid) {
			return werr
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	if !leaderDone {
		werr = <-done
	}
	// SIGKILL is delivered asynchronously: wait (briefly) until no member
	// of the group runs, so "stopped" is true when we return.
	for end := time.Now().Add(2 * time.Second); groupHasLiving(pgid) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	return werr
}

// groupAlive reports whether any process of the group can still be
// signalled. Zombies waiting for their parent count as gone.
func groupAlive(pgid int) bool {
	return unix.Kill(-pgid, 0) == nil && groupHasLiving(pgid)
}

// groupHasLiving reports whether the process table holds a member of
// pgid that is not a zombie. It reads the real /proc (station.Proc's zero
// value), not the station's procfs root: the group is this process's
// children, wherever the registry's sessions are looked up.
func groupHasLiving(pgid int) bool {
	var p station.Proc
	pids, err := p.Pids()
	if err != nil {
		return true
	}
	for _, pid := range pids {
		if info, err := p.Info(pid); err == nil && info.PGRP == pgid && !info.Zombie() {
			return true
		}
	}
	return false
}

// dupFDs duplicates the descriptors to pass (close-on-exec in this process;
// exec.Cmd places them at 3, 4, ... in the child). A descriptor that is not
// open is an error: the caller asked to pass a credential that is not there.
func dupFDs(fds []PassedFD) ([]*os.File, error) {
	var files []*os.File
	for i, p := range fds {
		if p.ChildFD != 3+i {
			return nil, fmt.Errorf("descriptor %s: child number %d, want %d", p.Name, p.ChildFD, 3+i)
		}
		nfd, err := unix.FcntlInt(uintptr(p.FD), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("descriptor %d named by %s: %w", p.FD, p.Name, ErrBadDescriptor)
		}
		files = append(files, os.NewFile(uintptr(nfd), p.Name))
	}
	return files, nil
}

// SpawnDetached starts inv.Path with inv.Args, inv.Env and inv.Dir in a
// session of its own (no controlling terminal; the null device for its
// standard streams), so it outlives this process: a detached start's
// supervisor. It does not wait for it, except to reap it when it exits
// while this process still runs. The other Invocation fields are not used.
func SpawnDetached(inv Invocation) (pid int, err error) {
	cmd := &exec.Cmd{
		Path:        inv.Path,
		Args:        append([]string{inv.Path}, inv.Args...),
		Env:         inv.Env,
		Dir:         inv.Dir,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() { _ = cmd.Wait() }()
	return cmd.Process.Pid, nil
}
