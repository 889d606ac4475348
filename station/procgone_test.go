package station_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/station"
)

// TestProcWaitGone: WaitGone returns once the process exits (an event on
// the real /proc), at once for a pid that runs another process (a recycled
// pid) or none, and with ctx's error when ctx ends first; on a test's
// procfs directory it polls.
func TestProcWaitGone(t *testing.T) {
	var p station.Proc
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	info, err := p.Info(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.WaitGone(ctx, c.Process.Pid, info.StartTicks); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitGone on a running process: %v, want the context's deadline", err)
	}
	if err := p.WaitGone(context.Background(), c.Process.Pid, info.StartTicks+"1"); err != nil {
		t.Fatalf("WaitGone for a recycled pid: %v, want nil at once", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.WaitGone(context.Background(), c.Process.Pid, info.StartTicks) }()
	killed := time.Now()
	c.Process.Kill()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitGone: %v", err)
		}
		t.Logf("gone %v after the kill", time.Since(killed))
	case <-time.After(time.Minute):
		t.Fatal("WaitGone did not return after the kill")
	}
	c.Wait()
	if err := p.WaitGone(context.Background(), c.Process.Pid, info.StartTicks); err != nil {
		t.Errorf("WaitGone for a reaped process: %v", err)
	}

	// A procfs directory: the poll sees the stat file go.
	root := t.TempDir()
	d := filepath.Join(root, "100")
	os.MkdirAll(d, 0o700)
	os.WriteFile(filepath.Join(d, "stat"), []byte(fmt.Sprintf("100 (claude) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", 500)), 0o600)
	fp := station.Proc{Root: root}
	go func() { done <- fp.WaitGone(context.Background(), 100, "500") }()
	os.RemoveAll(d)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitGone on a procfs directory: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WaitGone on a procfs directory did not see the process go")
	}
}
