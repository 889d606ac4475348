package doorman_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// The doorman finds the transcript its confirmation follows where the
// session writes it: under CLAUDE_CODE_PROJECT_DIR_NAME (inherited from the
// session) for a transcript not written yet, and by the session id in any
// project directory when the registry row's cwd no longer names the
// transcript's (a cd). Each line is confirmed at once, not left pending.
func TestConfirmFindsTheTranscript(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *world) // before the session row is written
		cwd   string         // the row's cwd
	}{
		{"CLAUDE_CODE_PROJECT_DIR_NAME, no transcript yet", func(w *world) {
			w.env[doorman.EnvProjectDirName] = "custom-name"
			w.transcript = filepath.Join(w.fs.Paths.ProjectsDir, "custom-name", filepath.Base(w.transcript))
		}, worldCWD},
		{"the row's cwd moved, the transcript stayed", func(w *world) {
			if err := os.MkdirAll(filepath.Dir(w.transcript), 0o700); err != nil {
				w.t.Fatal(err)
			}
			if err := os.WriteFile(w.transcript, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
				w.t.Fatal(err)
			}
		}, "/home/u/proj/sub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.door.Close()
			tt.setup(w)
			w.door = w.newDoor(fakedoor.Options{})
			w.tree.add(w.me, 1, "claude", "/usr/bin/claude", "777")
			w.self, w.ppid = selfPID, w.me
			w.tree.add(selfPID, w.me, "oo-claude", "/usr/local/bin/oo-claude", "999")
			sid := filepath.Base(w.transcript[:len(w.transcript)-len(transcriptfile.Ext)])
			w.row = w.fs.AddSession(fakestation.Session{PID: w.me, ProcStart: "777", Socket: w.door.Path(), Status: "busy", SessionID: sid, CWD: tt.cwd})
			w.appendLine(sid, "[a 📡] find me")
			if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			acks := readAcks(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Ack)
			if len(acks) != 1 || acks[0].Confirm != inboxv1.ConfirmTranscript || acks[0].QueuedAt == nil {
				t.Fatalf("acks %+v, want one confirmed by the transcript", acks)
			}
			if rows := enqueueTimes(t, w.transcript)["[a 📡] find me"]; len(rows) != 1 || rows[0] != *acks[0].QueuedAt {
				t.Errorf("enqueue rows %q, want one with queued_at %s", rows, *acks[0].QueuedAt)
			}
		})
	}
}

// A transcript the doorman looked for in the wrong place (the session
// writes it in a project directory nothing told the doorman of): the write
// is unconfirmed, but before any retry the doorman looks again by the
// session id, finds the receiver's row of that write and acks it. The line
// goes to the door once.
func TestLateRowInAnotherDirectory(t *testing.T) {
	w := newWorld(t)
	w.door.Close()
	w.transcript = filepath.Join(w.fs.Paths.ProjectsDir, "unannounced", filepath.Base(w.transcript))
	w.door = w.newDoor(fakedoor.Options{})
	sid := w.owned("busy")
	cfg := w.config()
	cfg.DoorConfirm = 200 * time.Millisecond
	dm, _, stop := w.running(doorman.Options{Host: w.host(nil), Config: cfg})
	w.appendLine(sid, "[a 📡] somewhere else")
	acks := w.waitAcks(sid, 1)
	// The ack is written before the doorman counts it: wait for the count.
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Confirmed > 0 })
	st := dm.Status()
	stop()
	if n := len(userFrames(w.door.Frames())); n != 1 {
		t.Errorf("%d writes, want 1", n)
	}
	rows := enqueueTimes(t, w.transcript)["[a 📡] somewhere else"]
	if len(rows) != 1 || acks[0].Confirm != inboxv1.ConfirmTranscript || acks[0].QueuedAt == nil || *acks[0].QueuedAt != rows[0] {
		t.Errorf("ack %+v, rows %q: want one row and an ack confirmed on it", acks[0], rows)
	}
	if st.Unconfirmed != 1 || st.Confirmed != 1 {
		t.Errorf("unconfirmed %d confirmed %d, want 1 and 1", st.Unconfirmed, st.Confirmed)
	}
}
