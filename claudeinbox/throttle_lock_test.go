package claudeinbox_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// A send whose throttle key is locked (flock <state>/throttle/<key> sleep
// 60, or a send stopped with Ctrl-Z inside the decision) hung until its
// context ended; now it answers refused io-error after the default wait,
// the note naming the holder, and writes nothing.
func TestSendThrottleLockHeld(t *testing.T) {
	w := newWorld(t)
	w.sender.MinInterval = 30 * time.Second
	sid := w.offline(t) // offline: no ack wait
	th := inbox.ThrottleFor(w.fs.Paths.StateDir, w.sender.MinInterval, nil)
	pid := hostile.HoldLock(t, th.KeyFile(sid, "mama"))
	ctx, cancel := context.WithTimeout(context.Background(), inbox.DefaultThrottleLockWait+20*time.Second)
	defer cancel()
	v, err := w.sender.Send(ctx, claudeinbox.Request{Target: sid, Line: "hello", From: "mama"})
	if ctx.Err() != nil {
		t.Fatalf("the send waited for the lock until its context ended: %+v", v)
	}
	var se *fs.PathError
	if !errors.As(err, &se) || !errors.Is(err, inbox.ErrThrottleLocked) {
		t.Errorf("err %v, want an *fs.PathError wrapping ErrThrottleLocked", err)
	}
	if v.Class != claudeinbox.Refused || v.Class.ExitCode() != 1 || v.Reason != inboxv1.ReasonIO || v.Written {
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
