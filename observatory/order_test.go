package observatory_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// orderOf is the kinds of sid's events in ev.got, as one string.
func orderOf(ev *events, sid string, keep ...observatory.EventKind) string {
	var out []string
	for _, e := range ev.got {
		for _, k := range keep {
			if e.Session == sid && e.Event == k {
				out = append(out, string(e.Event))
			}
		}
	}
	return strings.Join(out, " ")
}

const finalAnswer = `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}`

// TestWatchOrderLineDeliveredBeforeSeen: the doorman acks a line after the
// session's transcript shows it (the ack is the confirmation), and on an
// idle session the turn may end before the ack is written; the stream
// still reads forwards: line-delivered (the line written into the
// session), then line-seen, then turn-ended. Run it with -count=100.
func TestWatchOrderLineDeliveredBeforeSeen(t *testing.T) {
	fs := fakestation.New(t)
	cwd := t.TempDir()
	row := fs.AddSession(fakestation.Session{Name: "idle-c3", CWD: cwd, Status: station.StatusIdle})
	sid := row.SessionID
	ev := startWatch(t, fs, "")
	ev.next("session-started", is(observatory.EventSessionStarted, sid))
	fakedoorman.Start(t, fs.Paths.InboxDir, sid, fakedoorman.Options{NoAck: true, PeerStatus: station.StatusIdle})
	ev.next("doorman up", func(e observatory.Event) bool {
		return e.Event == observatory.EventDoorman && e.Session == sid && e.Doorman == observatory.DoormanUp
	})

	off, err := fsx.AppendLine(fs.InboxPath(sid), []byte("[mama 📡] start"))
	if err != nil {
		t.Fatal(err)
	}
	ev.next("line-queued", is(observatory.EventLineQueued, sid))
	// The receiver's row, its answer, and only then the doorman's ack.
	msgID := "0000aaaa-0000-4000-8000-00000000c0de"
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"[mama 📡] start"},"origin":{"kind":"peer","from":"mama","msg_id":"`+msgID+`"}}`)
	appendRow(t, tp, finalAnswer)
	ack, err := json.Marshal(inboxv1.Ack{TS: "2026-12-01T00:00:00.000Z", SHA256: strings.Repeat("ab", 32), SessionID: sid, PeerStatus: station.StatusIdle,
		Class: inboxv1.AckDeliveredStart, MsgID: msgID, LineOffset: &off, Confirm: inboxv1.ConfirmTranscript})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsx.AppendLine(inboxv1.FilesFor(fs.Paths.InboxDir, sid).Ack, ack); err != nil {
		t.Fatal(err)
	}
	ev.next("turn-ended", is(observatory.EventTurnEnded, sid))
	got := orderOf(ev, sid, observatory.EventLineQueued, observatory.EventLineDelivered, observatory.EventLineSeen, observatory.EventTurnEnded)
	if want := "line-queued line-delivered line-seen turn-ended"; got != want {
		t.Errorf("events of the session:\n got %s\nwant %s", got, want)
	}
}

// TestWatchOrderRiderBeforeTurnEnded: Claude Code flushes its transcript
// writes in batches, so a turn's final answer can land in the session's
// transcript before the last row of a rider of that turn lands in the
// rider's; the rider's events still come before the turn-ended. Run it
// with -count=100.
func TestWatchOrderRiderBeforeTurnEnded(t *testing.T) {
	fs := fakestation.New(t)
	cwd := t.TempDir()
	row := fs.AddSession(fakestation.Session{Name: "busy-d4", CWD: cwd, Status: station.StatusBusy})
	sid := row.SessionID
	ev := startWatch(t, fs, "")
	ev.next("session-started", is(observatory.EventSessionStarted, sid))

	proj := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd))
	tp := filepath.Join(proj, sid+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"go"}}`)
	rdir := filepath.Join(proj, sid, riderwalk.Dir)
	agent := "a0000000000000001"
	rt := filepath.Join(rdir, "agent-"+agent+transcriptfile.Ext)
	appendRow(t, rt, `{"type":"user","isSidechain":true,"agentId":"`+agent+`","message":{"role":"user","content":"look"}}`)
	ev.next("rider-started", is(observatory.EventRiderStarted, sid))

	appendRow(t, tp, finalAnswer)
	appendRow(t, rt, `{"type":"assistant","isSidechain":true,"agentId":"`+agent+`","message":{"role":"assistant","content":[{"type":"text","text":"found it"}],"stop_reason":"end_turn"}}`)
	ev.next("turn-ended", is(observatory.EventTurnEnded, sid))
	got := orderOf(ev, sid, observatory.EventRiderStarted, observatory.EventRiderFinished, observatory.EventTurnEnded)
	if want := "rider-started rider-finished turn-ended"; got != want {
		t.Errorf("events of the session:\n got %s\nwant %s", got, want)
	}
}

// TestWatchProcessExitIsAnEvent: a session whose process is killed
// without its row going (and without a doorman to say so) is seen as
// ended from the process's exit itself (a pidfd), with no liveness poll
// (an hour here).
func TestWatchProcessExitIsAnEvent(t *testing.T) {
	fs := fakestation.New(t)
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	row := fs.AddSession(fakestation.Session{Name: "gone-e5", PID: c.Process.Pid})
	ev := watchWith(t, observatory.WatchOptions{Station: fs.Station(), Liveness: time.Hour})
	ev.next("session-started", is(observatory.EventSessionStarted, row.SessionID))
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	ev.next("session-ended", is(observatory.EventSessionEnded, row.SessionID))
}
