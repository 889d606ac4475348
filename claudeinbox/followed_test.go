package claudeinbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
)

// TestSendInboxDirMismatch: a live session whose doorman follows another
// inbox directory than the sender's (OO_CLAUDE_INBOX_DIR differs between
// the session and the sender's shell) was queued-no-doorman, "the line
// waits in the inbox until the session's doorman runs", into an inbox no
// doorman follows. It is refused, naming both directories, and nothing is
// written to the wrong inbox.
func TestSendInboxDirMismatch(t *testing.T) {
	w := newWorld(t)
	theirs := filepath.Join(w.fs.Root, "other-inbox")
	r := w.fs.AddSession(fakestation.Session{Name: "work-e9", DoormanInbox: theirs})
	v, err := w.sender.Send(context.Background(), line(r.SessionID, "hello"))
	var re *claudeinbox.RefusedError
	if !errors.As(err, &re) || re.Reason != inboxv1.ReasonInboxDirMismatch || !errors.Is(err, claudeinbox.ErrInboxDirMismatch) {
		t.Fatalf("err %v, want a RefusedError of reason inbox-dir-mismatch wrapping ErrInboxDirMismatch", err)
	}
	if v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonInboxDirMismatch || v.Written || v.Class.ExitCode() != 1 {
		t.Fatalf("verdict %s (%s) written %v, want refused inbox-dir-mismatch, nothing written", v.Class, v.Reason, v.Written)
	}
	realTheirs, _ := filepath.EvalSymlinks(theirs)
	if !strings.Contains(v.Note, realTheirs) || !strings.Contains(v.Note, w.fs.Paths.InboxDir) {
		t.Errorf("note %q does not name both %s and %s", v.Note, realTheirs, w.fs.Paths.InboxDir)
	}
	if v.Hint != "export OO_CLAUDE_INBOX_DIR="+realTheirs {
		t.Errorf("hint %q", v.Hint)
	}
	if _, err := os.Lstat(w.fs.InboxPath(r.SessionID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the wrong inbox was written: %v", err)
	}
	if rows := receiptRows(t, w.fs.Paths.ReceiptsFile()); len(rows) != 1 || !strings.Contains(string(rows[0]["reason"]), "inbox-dir-mismatch") {
		t.Errorf("receipt rows %v", rows)
	}
}

// TestSendSameInboxDir: a doorman that follows the sender's own inbox
// directory (also through a symlink to it) is no mismatch: the line is
// written and waits for its heartbeat as before.
func TestSendSameInboxDir(t *testing.T) {
	for _, viaLink := range []bool{false, true} {
		w := newWorld(t)
		dir := w.fs.Paths.InboxDir
		mine := dir
		if viaLink {
			link := filepath.Join(w.fs.Root, "inbox-link")
			if err := os.Symlink(dir, link); err != nil {
				t.Fatal(err)
			}
			w.sender.InboxDir, mine = link, link
		}
		r := w.fs.AddSession(fakestation.Session{Name: "work-e9", DoormanInbox: dir})
		f := claudeinbox.FollowedInbox(station.Proc{}, station.Session{Row: r}, mine)
		if f.DoormanPID <= 0 || f.Elsewhere {
			t.Fatalf("FollowedInbox %+v, want the doorman child following this directory", f)
		}
		if viaLink {
			continue // the sender refuses a symlinked inbox directory on its own
		}
		v, err := w.sender.Send(context.Background(), line(r.SessionID, "hello"))
		if err != nil || v.Class != claudeinbox.QueuedNoDoorman || v.Reason != inboxv1.ReasonHeartbeatMissing || !v.Written {
			t.Fatalf("via link %v: verdict %s (%s) err %v, want queued-no-doorman (missing), written", viaLink, v.Class, v.Reason, err)
		}
	}
}

// TestFollowedInboxNoDoorman: a session with no doorman child (not yet
// started, or not registered) is not elsewhere: it stays queued-no-doorman.
func TestFollowedInboxNoDoorman(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	if f := claudeinbox.FollowedInbox(station.Proc{}, station.Session{Row: r}, w.fs.Paths.InboxDir); f != (claudeinbox.Followed{}) {
		t.Fatalf("FollowedInbox %+v, want nothing found", f)
	}
	for _, bad := range []station.Session{{}, {Row: station.Row{PID: -1, SessionID: r.SessionID}}, {Row: station.Row{PID: r.PID, SessionID: "../x"}}} {
		if f := claudeinbox.FollowedInbox(station.Proc{}, bad, w.fs.Paths.InboxDir); f != (claudeinbox.Followed{}) {
			t.Errorf("FollowedInbox(%+v) = %+v, want nothing", bad.Row, f)
		}
	}
}
