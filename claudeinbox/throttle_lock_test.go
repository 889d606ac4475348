package claudeinbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// holdLock has flock(1) hold the flock of path, as a stopped send or
// another program would, until the test ends; it returns the holder's pid.
func holdLock(t *testing.T, path string) int {
	t.Helper()
	bin, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("no flock(1):", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, path, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); fsx.Holder(path) != cmd.Process.Pid; {
		if time.Now().After(deadline) {
			t.Fatalf("flock(1) did not take %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd.Process.Pid
}

// A key whose lock another process holds is not waited on without bound:
// Do answers ErrThrottleLocked after LockWait, naming the holder's pid,
// and write is not called.
func TestThrottleLockWaitIsBounded(t *testing.T) {
	th := inbox.ThrottleFor(t.TempDir(), 30*time.Second, nil)
	th.LockWait = 200 * time.Millisecond
	sid := uuid.NewString()
	pid := holdLock(t, th.KeyFile(sid, "mama"))
	start := time.Now()
	called := false
	adm, err := th.Do(context.Background(), sid, "mama", func() error { called = true; return nil })
	took := time.Since(start)
	if !errors.Is(err, inbox.ErrThrottleLocked) || adm.Admitted || called {
		t.Fatalf("Do = %+v, %v (write called %v); want ErrThrottleLocked, nothing written", adm, err, called)
	}
	if want := fmt.Sprintf("pid %d", pid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder (%s)", err, want)
	}
	if took < th.LockWait || took > th.LockWait+5*time.Second {
		t.Errorf("Do answered after %v, want about %v", took, th.LockWait)
	}
	// Another key never waits for it.
	if adm, err := th.Do(context.Background(), sid, "luna", func() error { return nil }); err != nil || !adm.Admitted {
		t.Errorf("another sender: %+v, %v", adm, err)
	}
}

// A send whose throttle key is locked (flock <state>/throttle/<key> sleep
// 60, or a send stopped with Ctrl-Z inside the decision) hung until its
// context ended; now it answers refused io-error after the default wait,
// the note naming the holder, and writes nothing.
func TestSendThrottleLockHeld(t *testing.T) {
	w := newWorld(t)
	w.sender.MinInterval = 30 * time.Second
	sid := uuid.NewString() // offline: no ack wait
	th := inbox.ThrottleFor(w.fs.Paths.StateDir, w.sender.MinInterval, nil)
	pid := holdLock(t, th.KeyFile(sid, "mama"))
	ctx, cancel := context.WithTimeout(context.Background(), inbox.DefaultThrottleLockWait+20*time.Second)
	defer cancel()
	v, err := w.sender.Send(ctx, claudeinbox.Request{Target: sid, Line: "hello", From: "mama"})
	if ctx.Err() != nil {
		t.Fatalf("the send waited for the lock until its context ended: %+v", v)
	}
	var se *claudeinbox.SendError
	if !errors.As(err, &se) || !errors.Is(err, inbox.ErrThrottleLocked) {
		t.Errorf("err %v, want a SendError wrapping ErrThrottleLocked", err)
	}
	if v.Class != claudeinbox.Refused || v.Class.ExitCode() != 1 || v.Reason != claudeinbox.ReasonIO || v.Written {
		t.Errorf("verdict %s/%s written %v, want refused io-error, nothing written", v.Class, v.Reason, v.Written)
	}
	if want := fmt.Sprintf("pid %d", pid); !strings.Contains(v.Note, want) {
		t.Errorf("note %q does not name the holder (%s)", v.Note, want)
	}
	if _, err := os.Stat(w.fs.InboxPath(sid)); err == nil {
		if b := readFile(t, w.fs.InboxPath(sid)); b != "" {
			t.Errorf("a line was written: %q", b)
		}
	}
}
