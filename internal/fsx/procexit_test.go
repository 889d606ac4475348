package fsx_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// startSleeper starts a child that lives until it is killed (or the test
// ends).
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	return c
}

func openExit(t *testing.T, pid int) *fsx.ProcExit {
	t.Helper()
	p, err := fsx.OpenProcExit(pid)
	if errors.Is(err, fsx.ErrNoProcExit) {
		t.Skipf("no pidfd here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestProcExitIsAnEvent: Wait returns once the process exits (woken by the
// kernel, not a poll), reaped by its parent or not; before that Exited is
// false and a Wait ends with its context.
func TestProcExitIsAnEvent(t *testing.T) {
	c := startSleeper(t)
	p := openExit(t, c.Process.Pid)
	if p.Exited() {
		t.Fatal("Exited true for a running process")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past its deadline on a running process: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait(context.Background()) }()
	start := time.Now()
	c.Process.Signal(syscall.SIGKILL) // not reaped yet: a zombie has exited too
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return after the process was killed")
	}
	t.Logf("exit seen %v after the kill", time.Since(start))
	if !p.Exited() {
		t.Error("Exited false after the exit")
	}
	// A later Wait returns at once, also after a deadline was hit.
	if err := p.Wait(context.Background()); err != nil {
		t.Errorf("a second Wait: %v", err)
	}
	c.Wait()
	if err := p.Wait(context.Background()); err != nil {
		t.Errorf("Wait after the reap: %v", err)
	}
}

// TestProcExitClose: Close ends a Wait in progress.
func TestProcExitClose(t *testing.T) {
	c := startSleeper(t)
	p := openExit(t, c.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- p.Wait(context.Background()) }()
	p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Wait after Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not end the Wait")
	}
}

func TestOpenProcExitNoProcess(t *testing.T) {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{c.Process.Pid, 0, -1} {
		if _, err := fsx.OpenProcExit(pid); !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, fsx.ErrNoProcExit) {
			t.Errorf("OpenProcExit(%d) of no process: %v, want os.ErrProcessDone", pid, err)
		}
	}
	var nilp *fsx.ProcExit
	if !nilp.Exited() || nilp.Wait(context.Background()) != nil || nilp.Close() != nil {
		t.Error("a nil ProcExit is not one that has exited")
	}
}

func TestSignalName(t *testing.T) {
	for _, tt := range []struct {
		s    os.Signal
		name string
		code int
	}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}, {os.Interrupt, "SIGINT", 130}, {nil, "", 0}} {
		if got := fsx.SignalName(tt.s); got != tt.name {
			t.Errorf("SignalName(%v) = %q, want %q", tt.s, got, tt.name)
		}
		if got := fsx.SignalExitCode(tt.s); got != tt.code {
			t.Errorf("SignalExitCode(%v) = %d, want %d", tt.s, got, tt.code)
		}
	}
}
